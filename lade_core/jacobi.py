"""Jacobi decoding, the baseline lookahead decoding grows out of: guess the next W tokens, refine all of them in
one forward pass, accept the prefix that has converged.

Each step feeds x and the current guess block g_0 .. g_{W-1} (positions p+1 .. p+W, causal among themselves: a
one-level window, `StepLayout.plain(1, W, 0, 0)`). The model's argmax after x is always right; g_0 is accepted if
it equals that argmax, g_1 if g_0 was and it equals the argmax after g_0, and so on: the guess is verified as the
step's one candidate, with the rule of `verify.py`, so greedy output equals autoregressive decoding. The argmaxes
after the guess tokens are the Jacobi update: past the accepted prefix they become the next guess, shifted to the
positions they guess for, and the block is filled up with tokens drawn from the prompt.

Why it rarely accepts more than one token: a guess at position p+1+j is only accepted once every guess before it
is right in the same step. A right token often appears in the block first at the wrong position, or at the right
one only after decoding has already reached it. Lookahead decoding keeps those trajectories instead.
"""

from __future__ import annotations

import random

from .config import Sampling, jacobi_config
from .decoding import DecoderState, Feed, StepCallback, StepClock, StopCheck, check_request, generate
from .layout import StepLayout
from .model import LM
from .trace import MethodRun, StepTrace


class JacobiDecoder(DecoderState):
    """The decoding state between steps: KV cache, committed tokens, the guess block."""

    def __init__(
        self, lm: LM, prompt_ids: list[int], window: int, sampling: Sampling | None = None, window_seed: int = 0
    ):
        super().__init__(lm, prompt_ids, sampling)
        self.width = window
        self._pick = random.Random(window_seed)
        self.guess = self._fill(())

    def _fill(self, kept) -> tuple[int, ...]:
        """`kept` guesses, then tokens drawn from the prompt up to the block's width."""
        return (*kept, *(self._pick.choice(self.prompt) for _ in range(self.width - len(kept))))

    def step(self) -> StepTrace:
        clock = StepClock()
        x, p = self.advance()
        W = max(0, min(self.width, self.lm.max_positions - 1 - p))  # near the end of the context the block narrows
        guess = self.guess = self.guess[:W]

        # 1-3. one forward pass over x and the guess block; the guess verified as the one candidate; the KV cache
        # keeps x and the accepted guess tokens
        layout = StepLayout.plain(1, W, 0, 0)
        feed = Feed([x, *guess], layout, (guess,), (layout.guess_rows(),), lambda v: layout.guess_cache_rows(v.matched))
        argmax, verdict = self.forward_verify_keep(clock, p, feed)
        predicted = layout.read(argmax, layout.guess_rows())  # the model's token after x, then after each guess

        # 4. Jacobi update: the model's tokens past the accepted prefix are the next guess, at their positions
        self.guess = self._fill(predicted[len(verdict.accepted) :])
        return StepTrace(
            index=self.index,
            kind="jacobi",
            position=p,
            input_token=x,
            accepted=verdict.accepted,
            window=W,
            ngram=W + 1,
            levels_before=(guess,),
            new_level=predicted[1:],
            candidates=(guess,),
            predictions=(predicted,),
            match_lengths=verdict.lengths,
            winner=verdict.winner,
            draws=verdict.draws,
            **clock.split(),
        )


def jacobi_generate(
    lm: LM,
    prompt_ids: list[int],
    window: int,
    max_new_tokens: int,
    on_step: StepCallback | None = None,
    sampling: Sampling | None = None,
    should_stop: StopCheck | None = None,
    window_seed: int = 0,
) -> MethodRun:
    """Decode up to `max_new_tokens` tokens with Jacobi decoding over a block of `window` guesses."""
    check_request(lm, prompt_ids, max_new_tokens)
    jacobi_config(window, window_seed)  # the same range checks as lookahead's window
    decoder = JacobiDecoder(lm, list(prompt_ids), window, sampling, window_seed)
    return generate(decoder, lm.eos_ids, max_new_tokens, on_step, should_stop)
