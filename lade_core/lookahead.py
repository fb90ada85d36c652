"""Lookahead decoding: each step is ONE forward pass over the lookahead branch and the verification branch.

Algorithm 1 of the paper, one call of `LookaheadDecoder.step()`:
    1. lookahead branch: the Jacobi window (`window.py`); verification branch: the pool's n-grams under x
    2. one forward pass over both, under the step's attention mask (`layout.py`)
    3. verification: the longest prefix the model agrees with, plus the model's next token (`verify.py`)
    4. Jacobi update of the window; the n-grams it completes (and, by pool policy, the text's) go to the pool
    5. the KV cache keeps x and the accepted tokens, and drops the rest of the step

Every step emits at least one token, and greedy output equals greedy autoregressive decoding. The window and the
number of candidates a step uses are chosen by `sizes.py` (fixed, or adaptive); near the end of the model's context
the window narrows so that a step never writes past it.
"""

from __future__ import annotations

import time

import numpy as np

from .config import LookaheadConfig, Sampling
from .decoding import StepCallback, StopCheck, check_request, generate, prefill_step
from .layout import StepLayout
from .model import LM
from .pool import NGramPool, sequence_ngrams
from .sampling import Sampler, warp
from .sizes import StepCost, size_policy
from .trace import MethodRun, StepTrace
from .verify import verify_greedy, verify_sampled
from .window import JacobiWindow


class LookaheadDecoder:
    """The decoding state between steps: KV cache, committed tokens, the Jacobi window, the n-gram pool."""

    def __init__(self, lm: LM, prompt_ids: list[int], config: LookaheadConfig, sampling: Sampling | None = None,
                 step_cost: StepCost | None = None):
        self.lm, self.config, self.sampling = lm, config, sampling or Sampling()
        self.sampler = None if self.sampling.greedy else Sampler(self.sampling.seed)
        self.cache = lm.new_cache()
        self.committed = list(prompt_ids)
        self.window = JacobiWindow(prompt_ids, config.window, config.ngram, config.window_seed)
        self.pool = NGramPool(config.guess)
        self.sizes = size_policy(config, step_cost, lm.max_positions)
        self.index = 0

    def prefill(self) -> StepTrace:
        """The prompt's forward pass; under the "prompt" policy the pool takes the prompt's n-grams here."""
        step = prefill_step(self.lm, self.cache, self.committed, self.sampling, self.sampler)
        if self.config.pool != "prompt":
            return step
        added = sequence_ngrams(self.committed, self.config.ngram)
        return step.but(ngrams_added=tuple(added), ngrams_evicted=tuple(self.pool.add_all(added, source="text")),
                        pool_size=len(self.pool))

    def commit(self, tokens: list[int]) -> None:
        self.committed += tokens

    def step(self) -> StepTrace:
        t_start = time.perf_counter()
        self.index += 1
        x, p, N = self.committed[-1], len(self.committed) - 1, self.config.ngram

        # 1. the lookahead branch (the window, at this step's width) and the verification branch (n-grams under x)
        width, guess = self.sizes.choose(p, len(self.window.levels), self.pool.count(x))
        self.window.resize(width)
        levels = tuple(self.window.levels) if width else ()
        candidates = self.pool.lookup(x, guess)
        layout = StepLayout.for_candidates(len(levels), width, candidates, N - 1, self.config.tree)

        # 2. one forward pass; argmax at the rows read
        tokens = [x, *(t for level in levels for t in level), *layout.node_tokens(candidates)]
        t0 = time.perf_counter()
        logits = self.lm.step_forward(self.cache, tokens, layout)
        self.lm.sync()
        forward_s = time.perf_counter() - t0
        argmax = logits.argmax(dim=-1).cpu().numpy()
        predictions = argmax[layout.prediction_rows]  # (g, N)

        # 3. verification: the longest accepted prefix plus the model's next token
        if self.sampling.greedy:
            lengths, winner, accepted = verify_greedy(np.array(candidates).reshape(-1, N - 1), predictions, argmax[0])
            draws = []
        else:
            lengths, winner, accepted, draws = verify_sampled(candidates, self._target(logits, layout), self.sampler)

        matched = lengths[winner] if winner >= 0 else 0
        from_window = matched if winner >= 0 and self.pool.source(x, candidates[winner]) == "window" else 0

        # 4. Jacobi update of the window; completed n-grams (and the text's, by policy) go to the pool
        new_level = tuple(int(t) for t in argmax[layout.new_level_rows])
        added = self.window.update(new_level) if width else []
        text = sequence_ngrams(self.committed[-(N - 1):] + accepted, N) if self.config.pool != "paper" else []
        evicted = self.pool.add_all(added) + self.pool.add_all(text, source="text")
        added += text

        # 5. the KV cache keeps x and the accepted candidate tokens
        self.lm.keep_in_cache(self.cache, p, layout.cache_rows(max(winner, 0), matched))
        self.sizes.observe(lengths, layout.size, from_window)
        return self._trace(x, p, width, guess, levels, new_level, candidates, predictions, lengths, winner, accepted,
                           added, evicted, draws, forward_s, t_start)

    def _trace(self, x, p, width, guess, levels, new_level, candidates, predictions, lengths, winner, accepted, added,
               evicted, draws, forward_s: float, t_start: float) -> StepTrace:
        """The step as plain data: what it fed, what the model said, what it kept; its time outside the forward."""
        step = StepTrace(
            index=self.index, kind="warmup" if 0 < len(levels) < self.config.ngram - 1 else "lookahead", position=p,
            input_token=x, accepted=tuple(accepted), forward_s=forward_s, overhead_s=0.0, window=width,
            ngram=self.config.ngram, guess=guess, tree=self.config.tree, levels_before=levels,
            new_level=new_level if width else (), candidates=tuple(candidates),
            predictions=tuple(tuple(int(t) for t in row) for row in predictions),
            match_lengths=tuple(int(m) for m in lengths), winner=winner, ngrams_added=tuple(added),
            ngrams_evicted=tuple(evicted), pool_size=len(self.pool), draws=tuple(draws))
        return step.but(overhead_s=time.perf_counter() - t_start - forward_s)

    def _target(self, logits, layout: StepLayout):
        """target(c, k): the warped distribution the model gives after x and candidate c's first k tokens."""
        rows: dict[int, np.ndarray] = {}

        def target(c: int, k: int) -> np.ndarray:
            row = int(layout.prediction_rows[c, k]) if k else 0  # k = 0: after x, whatever the candidate
            if row not in rows:
                rows[row] = warp(logits[row], self.sampling)
            return rows[row]

        return target


def lookahead_generate(
    lm: LM,
    prompt_ids: list[int],
    config: LookaheadConfig,
    max_new_tokens: int,
    on_step: StepCallback | None = None,
    sampling: Sampling | None = None,
    should_stop: StopCheck | None = None,
    step_cost: StepCost | None = None,
) -> MethodRun:
    """Decode up to `max_new_tokens` tokens with lookahead decoding; stop at EOS (emitted) or the budget.

    `on_step` gets each `StepTrace` as soon as it is made; `should_stop` is polled between steps (cancellation);
    `step_cost` (this device's forward cost by tokens fed) is what adaptive sizes weigh guesses against.
    """
    check_request(lm, prompt_ids, max_new_tokens)
    decoder = LookaheadDecoder(lm, list(prompt_ids), config, sampling, step_cost)
    return generate(decoder, lm.eos_ids, max_new_tokens, on_step, should_stop)
