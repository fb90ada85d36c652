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
import time

import numpy as np

from .config import Sampling, jacobi_config
from .decoding import StepCallback, StopCheck, check_request, generate, prefill_step
from .layout import StepLayout
from .model import LM
from .sampling import Sampler, warp
from .trace import MethodRun, StepTrace
from .verify import verify_greedy, verify_sampled


class JacobiDecoder:
    """The decoding state between steps: KV cache, committed tokens, the guess block."""

    def __init__(self, lm: LM, prompt_ids: list[int], window: int, sampling: Sampling | None = None, seed: int = 0):
        self.lm, self.width, self.sampling = lm, window, sampling or Sampling()
        self.sampler = None if self.sampling.greedy else Sampler(self.sampling.seed)
        self.cache = lm.new_cache()
        self.committed = list(prompt_ids)
        self.prompt = tuple(prompt_ids)
        self._pick = random.Random(seed)
        self.guess = self._fill(())
        self.index = 0

    def _fill(self, kept) -> tuple[int, ...]:
        """`kept` guesses, then tokens drawn from the prompt up to the block's width."""
        return (*kept, *(self._pick.choice(self.prompt) for _ in range(self.width - len(kept))))

    def prefill(self) -> StepTrace:
        return prefill_step(self.lm, self.cache, self.committed, self.sampling, self.sampler)

    def commit(self, tokens: list[int]) -> None:
        self.committed += tokens

    def step(self) -> StepTrace:
        t_start = time.perf_counter()
        self.index += 1
        x, p = self.committed[-1], len(self.committed) - 1
        W = max(0, min(self.width, self.lm.max_positions - 1 - p))  # near the end of the context the block narrows
        self.guess = self.guess[:W]

        # 1-2. one forward pass over x and the guess block
        layout = StepLayout.plain(1, W, 0, 0)
        t0 = time.perf_counter()
        logits = self.lm.step_forward(self.cache, [x, *self.guess], layout)
        self.lm.sync()
        forward_s = time.perf_counter() - t0
        argmax = logits.argmax(dim=-1).cpu().numpy()  # (W + 1,): after x, then after each guess token

        # 3. verify the guess as the one candidate
        if self.sampling.greedy:
            lengths, winner, accepted = verify_greedy(np.array([self.guess]), argmax[None, :], argmax[0])
            draws = []
        else:
            target = {}

            def at(c: int, k: int) -> np.ndarray:
                return target.setdefault(k, warp(logits[k], self.sampling))

            lengths, winner, accepted, draws = verify_sampled([self.guess], at, self.sampler)

        # 4. Jacobi update: the argmaxes past the accepted prefix are the next guess, at their positions
        matched = lengths[0]
        guess = self.guess
        self.guess = self._fill(tuple(int(t) for t in argmax[len(accepted):]))

        # 5. the KV cache keeps x and the accepted guess tokens
        self.lm.keep_in_cache(self.cache, p, [0, *layout.window_rows(0, matched)])
        step = StepTrace(
            index=self.index, kind="jacobi", position=p, input_token=x, accepted=tuple(accepted),
            forward_s=forward_s, overhead_s=0.0, window=W, ngram=W + 1, levels_before=(guess,),
            new_level=tuple(int(t) for t in argmax[1:]), candidates=(guess,),
            predictions=(tuple(int(t) for t in argmax),), match_lengths=(int(matched),), winner=winner,
            draws=tuple(draws))
        return step.but(overhead_s=time.perf_counter() - t_start - forward_s)


def jacobi_generate(
    lm: LM,
    prompt_ids: list[int],
    window: int,
    max_new_tokens: int,
    on_step: StepCallback | None = None,
    sampling: Sampling | None = None,
    should_stop: StopCheck | None = None,
    seed: int = 0,
) -> MethodRun:
    """Decode up to `max_new_tokens` tokens with Jacobi decoding over a block of `window` guesses."""
    check_request(lm, prompt_ids, max_new_tokens)
    jacobi_config(window, seed)  # the same range checks as lookahead's window
    decoder = JacobiDecoder(lm, list(prompt_ids), window, sampling, seed)
    return generate(decoder, lm.eos_ids, max_new_tokens, on_step, should_stop)
