"""How large each lookahead step is: the window's width and the number of candidates it verifies.

`FixedSizes` uses W and G every step (the paper's method), narrowing the window only near the end of the model's
context, so that a step never feeds a position past it. `AdaptiveSizes` chooses both per step, up to W and G, to
get the most expected tokens per second from this device's step cost (`StepCost`, measured) and the acceptance
seen over the last steps: on a CPU, where every extra token fed costs time, it falls back towards plain decoding
when guesses stop paying; where extra tokens are nearly free (a GPU), it stays wide. Greedy output is the same
whatever the sizes: they change how many tokens a step may accept, never which.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from .config import LookaheadConfig
from .trace import Verdict


class Sizes(NamedTuple):
    """The branches of one step: the window's width (0: no lookahead branch) and the most candidates verified."""

    width: int
    guess: int


@dataclass(frozen=True)
class StepCost:
    """Forward time by tokens fed, relative to a one-token step: piecewise linear between measured points,
    extrapolated along the last segment. `points` are (tokens, relative cost), tokens ascending, starting at 1."""

    points: tuple[tuple[int, float], ...]

    @classmethod
    def from_seconds(cls, points, one_token_s: float) -> StepCost:
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

    def room(self, position: int, levels: int) -> Sizes:
        """The widest window and the most candidates a step at `position` may feed within the context."""
        width = max(0, min(self.config.window, self.context - position - max(levels, 1)))
        guess = self.config.guess if position + self.config.ngram - 1 < self.context else 0
        return Sizes(width, guess)

    def choose(self, position: int, levels: int, available: int) -> Sizes:
        return self.room(position, levels)

    def observe(self, verdict: Verdict, fed: int, sources: Sequence[str | None] = ()) -> None:
        """What a step showed (its verdict, the tokens it fed, where each candidate came from); fixed sizes ignore
        it."""


class AdaptiveSizes(FixedSizes):
    """Per step: the candidates worth verifying, and a window only where its tokens pay for themselves.

    The r-th candidate's gain is how much the best match grows when it is verified too, averaged over the recent
    steps that verified it (exponentially weighted, `decay`); verifying g candidates is expected to emit
    1 + gain(1) + ... + gain(g) tokens, at the cost of a forward of its tokens on this device (`StepCost`). The
    window's tokens are paid every step for n-grams that win later: what they earn is measured too (the tokens
    accepted from candidates the window harvested, per step), and a step runs the window, as wide as this device
    feeds it for at most `slack` above the cheapest width, only if the expected tokens per unit of cost are higher
    with it than without it. So on a GPU decoding a large model the whole window runs, on a CPU a column or none, and
    a step falls back to plain decoding when guesses stop paying. Every `probe` steps the window runs and two more
    candidates are verified, so that an earning that fell to zero can be seen to rise again.
    """

    def __init__(
        self,
        config: LookaheadConfig,
        cost: StepCost,
        context: int,
        decay: float = 0.7,
        probe: int = 8,
        slack: float = 0.05,
    ):
        super().__init__(config, context)
        self.cost, self.decay, self.probe, self.slack = cost, decay, probe, slack
        self.gain = [0.5] * config.guess  # a hopeful start: every candidate is tried until it proves useless
        self.window_gain = 0.5  # tokens per step won by the window's n-grams, likewise
        self.steps = 0

    def window_width(self, levels: int, room: int) -> int:
        """The widest window (up to `room`, at least one column) this device feeds at most `slack` above one
        column's cost."""
        width, one = min(1, room), self.cost(1 + max(levels, 1))
        while width < room and self.cost(1 + (width + 1) * max(levels, 1)) <= one * (1 + self.slack):
            width += 1
        return width

    def _candidates(self, fed: int, g_max: int, window_gain: float) -> tuple[int, float]:
        """(g, expected tokens per unit of cost) of the best number of candidates on top of `fed` tokens."""
        best, best_rate, total = 0, (1.0 + window_gain) / self.cost(fed), 1.0 + window_gain
        for g in range(1, g_max + 1):
            total += self.gain[g - 1]
            rate = total / self.cost(fed + g * (self.config.ngram - 1))
            if rate > best_rate:
                best, best_rate = g, rate
        return best, best_rate

    def choose(self, position: int, levels: int, available: int) -> Sizes:
        width_room, guess_room = self.room(position, levels)
        self.steps += 1
        g_max = min(guess_room, available)
        width = self.window_width(levels, width_room)
        with_window = self._candidates(1 + width * max(levels, 1), g_max, 0.0)
        without = self._candidates(1, g_max, -min(self.window_gain, 1.0))  # what the window's wins were worth
        probing = self.steps % self.probe == 0
        keep = probing or with_window[1] >= 0.99 * without[1]  # a near tie keeps the window: its n-grams may pay later
        g = with_window[0] if keep else without[0]
        return Sizes(width if keep else 0, min(g_max, g + 2) if probing else g)

    def observe(self, verdict: Verdict, fed: int, sources: Sequence[str | None] = ()) -> None:
        """Update each candidate rank's gain from the match lengths, and the window's earning: the tokens accepted
        from a winning candidate the window harvested (`sources[c]`, read before the step changed the pool)."""
        won = verdict.winner >= 0 and verdict.winner < len(sources) and sources[verdict.winner] == "window"
        from_window = verdict.matched if won else 0
        best = 0
        for r, m in zip(range(len(self.gain)), verdict.lengths):  # the pool's ranks (a copied candidate is last)
            self.gain[r] = self.decay * self.gain[r] + (1 - self.decay) * max(0, m - best)
            best = max(best, m)
        self.window_gain = self.decay * self.window_gain + (1 - self.decay) * from_window
