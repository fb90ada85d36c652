"""Plain autoregressive decoding, the baseline: one forward pass and one token per step, with a KV cache.

It makes the same `StepTrace`s as the parallel engines (a prefill step, then one "autoregressive" step per token),
so all of them can be drawn on one step clock. With `Sampling(temperature=0)` it is greedy decoding and equals
`model.generate(do_sample=False)` token for token; otherwise it is plain ancestral sampling with a seeded stream.
"""

from __future__ import annotations

import time

from .config import Sampling
from .decoding import StepCallback, StopCheck, check_request, generate, prefill_step
from .model import LM
from .sampling import Sampler, next_token
from .trace import MethodRun, StepTrace


class AutoregressiveDecoder:
    """The decoding state between steps: KV cache and committed tokens."""

    def __init__(self, lm: LM, prompt_ids: list[int], sampling: Sampling | None = None):
        self.lm, self.sampling = lm, sampling or Sampling()
        self.sampler = None if self.sampling.greedy else Sampler(self.sampling.seed)
        self.cache = lm.new_cache()
        self.committed = list(prompt_ids)
        self.index = 0

    def prefill(self) -> StepTrace:
        return prefill_step(self.lm, self.cache, self.committed, self.sampling, self.sampler)

    def commit(self, tokens: list[int]) -> None:
        self.committed += tokens

    def step(self) -> StepTrace:
        self.index += 1
        x, p = self.committed[-1], len(self.committed) - 1
        t0 = time.perf_counter()
        logits = self.lm.decode_one(self.cache, x, p)
        self.lm.sync()
        t1 = time.perf_counter()
        token = next_token(logits, self.sampling, self.sampler)
        return StepTrace(self.index, "autoregressive", p, x, (token,), t1 - t0, time.perf_counter() - t1)


def greedy_generate(
    lm: LM,
    prompt_ids: list[int],
    max_new_tokens: int,
    sampling: Sampling | None = None,
    on_step: StepCallback | None = None,
    should_stop: StopCheck | None = None,
) -> MethodRun:
    """Decode up to `max_new_tokens` tokens one per forward; stop at EOS (emitted) or the budget."""
    check_request(lm, prompt_ids, max_new_tokens)
    decoder = AutoregressiveDecoder(lm, prompt_ids, sampling)
    return generate(decoder, lm.eos_ids, max_new_tokens, on_step, should_stop)
