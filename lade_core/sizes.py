"""How large each lookahead step is: the window's width and the number of candidates it verifies.

`FixedSizes` uses W and G every step (the paper's method), narrowing the window only near the end of the model's
context, so that a step never feeds a position past it. `AdaptiveSizes` chooses both per step, up to W and G, to
get the most expected tokens per second from this device's step cost (`StepCost`, measured) and the acceptance
seen over the last steps: on a CPU, where every extra token fed costs time, it falls back towards plain decoding
when guesses stop paying; where extra tokens are nearly free (a GPU), it stays wide. Greedy output is the same
whatever the sizes: they change how many tokens a step may accept, never which.
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import LookaheadConfig


@dataclass(frozen=True)
class StepCost:
    """Forward time by tokens fed, relative to a one-token step: piecewise linear between measured points,
    extrapolated along the last segment. `points` are (tokens, relative cost), tokens ascending, starting at 1."""

    points: tuple[tuple[int, float], ...]

    @classmethod
    def from_seconds(cls, points, one_token_s: float) -> "StepCost":
        pts = sorted((int(n), s / one_token_s) for n, s in points)
        return cls(tuple(pts if pts[0][0] == 1 else [(1, 1.0), *pts]))

    def __call__(self, tokens: float) -> float:
        pts = self.points
        if len(pts) == 1 or tokens <= pts[0][0]:
            return pts[0][1]
        for (a, ca), (b, cb) in zip(pts, pts[1:]):
            if tokens <= b:
                return ca + (tokens - a) * (cb - ca) / (b - a)
        (a, ca), (b, cb) = pts[-2], pts[-1]
        return cb + (tokens - b) * (cb - ca) / (b - a)


def size_policy(config: LookaheadConfig, cost: StepCost | None, context: int):
    if config.adaptive:
        if cost is None:
            raise ValueError("adaptive sizes need this device's step cost (python -m lade_core costcurve)")
        return AdaptiveSizes(config, cost, context)
    return FixedSizes(config, context)


class FixedSizes:
    """W and G every step; the window narrows where its newest level would reach past the context."""

    def __init__(self, config: LookaheadConfig, context: int):
        self.config, self.context = config, context

    def room(self, position: int, levels: int) -> tuple[int, int]:
        """The widest window and the most candidates a step at `position` may feed within the context."""
        width = max(0, min(self.config.window, self.context - position - max(levels, 1)))
        guess = self.config.guess if position + self.config.ngram - 1 < self.context else 0
        return width, guess

    def choose(self, position: int, levels: int, available: int) -> tuple[int, int]:
        return self.room(position, levels)

    def observe(self, match_lengths, fed: int) -> None:
        pass


class AdaptiveSizes(FixedSizes):
    """Per step: the candidates worth verifying and whether the window is worth its tokens, from expected gain over
    measured cost.

    Gain of the r-th candidate: how much the best match grows when it is verified too, an average over the recent
    steps that verified it (exponentially weighted, `decay`). Verifying g candidates is expected to emit
    1 + gain(1) + ... + gain(g) tokens at the cost of a forward of 1 + width*L + g*(N-1) tokens; the step takes the g
    with the most tokens per unit of cost. The window's tokens are paid every step for n-grams that pay later: it
    stays on while the steps it runs in earn at least as much per unit of cost as the steps without it, measured
    the same way, and every `probe` steps each side is tried again so that the estimate follows the text.
    """

    def __init__(self, config: LookaheadConfig, cost: StepCost, context: int, decay: float = 0.8, probe: int = 16):
        super().__init__(config, context)
        self.cost, self.decay, self.probe = cost, decay, probe
        self.gain = [0.5] * config.guess  # optimistic start: every candidate is tried until it proves useless
        self.rate = {True: 1.0, False: 1.0}  # tokens per unit of cost, with and without the window
        self.steps = 0
        self.window_on = True
        self._last = (0, 0)

    def choose(self, position: int, levels: int, available: int) -> tuple[int, int]:
        width_room, guess_room = self.room(position, levels)
        self.steps += 1
        if self.steps % self.probe == 0:  # try the other side now and then: rates drift with the text
            self.window_on = not self.window_on
        else:
            self.window_on = self.rate[True] >= self.rate[False]
        width = width_room if self.window_on else 0
        fed = 1 + width * max(levels, 1)
        g_max = min(guess_room, available)
        best, best_rate, total = 0, 1.0 / self.cost(fed), 1.0
        for g in range(1, g_max + 1):
            total += self.gain[g - 1]
            rate = total / self.cost(fed + g * (self.config.ngram - 1))
            if rate > best_rate:
                best, best_rate = g, rate
        self._last = (width, best)
        return width, best

    def observe(self, match_lengths, fed: int) -> None:
        best = 0
        for r, m in enumerate(match_lengths):
            self.gain[r] = self.decay * self.gain[r] + (1 - self.decay) * max(0, m - best)
            best = max(best, m)
        on = self._last[0] > 0
        self.rate[on] = self.decay * self.rate[on] + (1 - self.decay) * (1 + best) / self.cost(fed)
