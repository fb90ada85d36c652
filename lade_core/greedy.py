"""Plain autoregressive decoding, the baseline: one forward pass and one token per step, with a KV cache.

It returns the same `MethodRun` of `StepTrace`s as the lookahead engine (a prefill step, then one "greedy" step per
token), so the two can be drawn on one step clock. With `Sampling(temperature=0)` it is greedy decoding and equals
`model.generate(do_sample=False)` token for token; otherwise it is plain ancestral sampling with a seeded stream.
"""

from __future__ import annotations

import time

from .config import Sampling
from .decoding import StepCallback, StopCheck, check_request, prefill_step, run_steps
from .model import LM
from .sampling import Sampler, next_token
from .trace import MethodRun, StepTrace


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
    sampling = sampling or Sampling()
    sampler = None if sampling.greedy else Sampler(sampling.seed)
    start = time.perf_counter()
    cache = lm.new_cache()
    committed = list(prompt_ids)

    def advance(emitted: list[int], index: int) -> StepTrace:  # one autoregressive step
        committed.extend(emitted)
        x, p = committed[-1], len(committed) - 1
        t0 = time.perf_counter()
        logits = lm.decode_one(cache, x, p)
        lm.sync()
        t1 = time.perf_counter()
        token = next_token(logits, sampling, sampler)
        return StepTrace(index, "greedy", p, x, (token,), t1 - t0, time.perf_counter() - t1)

    first = prefill_step(lm, cache, committed, sampling, sampler)
    return run_steps(first, advance, lm.eos_ids, max_new_tokens, on_step, should_stop, start)
