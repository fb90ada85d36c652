"""Lookahead decoding: each step is ONE forward pass over the lookahead branch and the verification branch.

The lookahead branch is a window of N-1 levels x W columns; the model's argmax at its newest level is the Jacobi
update, a new level. Each column then spells an N-gram (oldest level first, new token last), which goes into the
pool under its first token; the oldest level drops. The verification branch holds up to G pool n-grams keyed by the
last accepted token x; the longest prefix the model agrees with is accepted, plus the model's next token, so every
step emits at least one token, and greedy output equals greedy autoregressive decoding.

The input layout, positions and attention mask are in `layout.py`; the acceptance rules in `verify.py`. During
warm-up (the first N-2 steps) the window only gains levels. The level 0 of the window is drawn from the prompt's
tokens with the config's seed.
"""

from __future__ import annotations

import random
import time
from dataclasses import replace
from typing import Callable

import numpy as np
import torch

from .config import LookaheadConfig, Sampling
from .decoding import StepCallback, StopCheck, check_request, prefill_step, run_steps
from .layout import StepLayout
from .model import LM
from .pool import NGramPool, sequence_ngrams
from .sampling import Sampler, warp
from .trace import MethodRun, StepTrace
from .verify import verify_greedy, verify_sampled


class LookaheadDecoder:
    """The decoding state between steps: KV cache, committed tokens, window levels, n-gram pool."""

    def __init__(self, lm: LM, prompt_ids: list[int], config: LookaheadConfig, sampling: Sampling):
        self.lm, self.config, self.sampling = lm, config, sampling
        self.sampler = None if sampling.greedy else Sampler(sampling.seed)
        self.cache = lm.new_cache()
        self.committed = list(prompt_ids)
        pick = random.Random(config.seed)
        self.levels: list[tuple[int, ...]] = [tuple(pick.choice(prompt_ids) for _ in range(config.window))]
        self.pool = NGramPool(config.guess)
        self._keep: dict[StepLayout, torch.Tensor] = {}

    def prefill(self) -> StepTrace:
        """The prompt's forward pass; a seeded pool takes the prompt's n-grams here, recorded like any other."""
        step = prefill_step(self.lm, self.cache, self.committed, self.sampling, self.sampler)
        if not self.config.pool_from_prompt:
            return step
        t0 = time.perf_counter()
        added = sequence_ngrams(self.committed, self.config.ngram)
        evicted = self.pool.add_all(added)
        return replace(step, ngrams_added=tuple(added), ngrams_evicted=tuple(evicted), pool_size=len(self.pool),
                       overhead_s=step.overhead_s + time.perf_counter() - t0)

    def _keep_rows(self, layout: StepLayout) -> torch.Tensor:
        """Rows whose logits a step needs: x, the newest window level, every candidate token."""
        if layout not in self._keep:
            self._keep[layout] = torch.tensor(layout.logit_rows(), device=self.lm.device)
        return self._keep[layout]

    def step(self, index: int) -> StepTrace:
        t_start = time.perf_counter()
        W, N, G = self.config.window, self.config.ngram, self.config.guess
        x, p = self.committed[-1], len(self.committed) - 1

        # 1. build the step input: [x | window levels | candidates]
        candidates = self.pool.lookup(x, G) if G else []
        layout = StepLayout(len(self.levels), W, len(candidates), N - 1)
        tokens = [x, *(t for level in self.levels for t in level), *(t for c in candidates for t in c)]

        # 2. one forward pass; logits only at the rows read below
        t0 = time.perf_counter()
        logits = self.lm.step_forward(self.cache, tokens, layout, self._keep_rows(layout))
        self.lm.sync()
        forward_s = time.perf_counter() - t0
        greedy_ids = logits.argmax(dim=-1).tolist()  # (1 + W + g(N-1),)
        new_level = tuple(greedy_ids[1 : 1 + W])
        g = len(candidates)
        branch = np.array(greedy_ids[1 + W :], dtype=np.int64).reshape(g, N - 1)
        predictions = [(greedy_ids[0], *row) for row in branch.tolist()]  # (g, N) for the trace

        # 3. verify the candidates
        draws = ()
        if self.sampling.greedy:
            cands = np.array(candidates, dtype=np.int64).reshape(g, N - 1)
            lengths, winner, accepted = verify_greedy(greedy_ids[0], cands, branch)
        else:
            lengths, winner, accepted, draws = verify_sampled(candidates, self._target(logits, W, N), self.sampler)
        matched = lengths[winner] if winner >= 0 else 0

        # 4. Jacobi update of the window; full columns feed the pool
        levels_before = tuple(self.levels)
        added: list[tuple[int, ...]] = []
        if len(self.levels) < N - 1:
            self.levels.append(new_level)
        else:
            added = list(zip(*self.levels, new_level))  # W columns -> W N-grams
            self.levels = self.levels[1:] + [new_level]
        if self.config.pool_from_prompt:  # the text itself is a reference too: its newest n-grams join the pool
            added += sequence_ngrams(self.committed[-(N - 1) :] + accepted, N)
        evicted = self.pool.add_all(added)

        # 5. keep x and the accepted candidate tokens in the KV cache, drop the rest of this step
        cand_row = layout.cand_start + max(winner, 0) * (N - 1)
        self.lm.keep_in_cache(self.cache, p, [0, *range(cand_row, cand_row + matched)])

        return StepTrace(
            index=index,
            kind="lookahead" if len(levels_before) == N - 1 else "warmup",
            position=p,
            input_token=x,
            accepted=tuple(accepted),
            forward_s=forward_s,
            overhead_s=time.perf_counter() - t_start - forward_s,
            window=W,
            ngram=N,
            levels_before=levels_before,
            levels_after=tuple(self.levels),
            new_level=new_level,
            candidates=tuple(candidates),
            predictions=tuple(predictions),
            match_lengths=tuple(int(m) for m in lengths),
            winner=winner,
            ngrams_added=tuple(added),
            ngrams_evicted=tuple(evicted),
            pool_size=len(self.pool),
            draws=tuple(draws),
        )

    def _target(self, logits: torch.Tensor, W: int, N: int) -> Callable[[int, int], np.ndarray]:
        """target(c, k): warped distribution at position k of candidate c, computed once per row on demand."""
        rows: dict[int, np.ndarray] = {}

        def target(c: int, k: int) -> np.ndarray:
            row = 0 if k == 0 else 1 + W + c * (N - 1) + (k - 1)
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
) -> MethodRun:
    """Decode up to `max_new_tokens` tokens with lookahead decoding; stop at EOS (emitted) or the budget.

    `on_step` gets each `StepTrace` as soon as it is made; `should_stop` is polled between steps (cancellation).
    """
    check_request(lm, prompt_ids, max_new_tokens, extra_positions=config.window + config.ngram)
    start = time.perf_counter()
    decoder = LookaheadDecoder(lm, list(prompt_ids), config, sampling or Sampling())

    def advance(emitted: list[int], index: int) -> StepTrace:
        decoder.committed += emitted
        return decoder.step(index)

    return run_steps(decoder.prefill(), advance, lm.eos_ids, max_new_tokens, on_step, should_stop, start)
