"""Plain autoregressive decoding, the baseline: one forward pass and one token per step, with a KV cache.

It returns the same `MethodRun` of `StepTrace`s as the lookahead engine (a prefill step, then one "greedy" step per
token), so the two can be drawn on one step clock. With `Sampling(temperature=0)` it is greedy decoding and equals
`model.generate(do_sample=False)` token for token; otherwise it is plain ancestral sampling with a seeded stream.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Callable

from .config import Sampling
from .model import LM
from .sampling import Sampler, next_token
from .trace import MethodRun, StepTrace

StepCallback = Callable[[StepTrace], None]
StopCheck = Callable[[], bool]


def clip(tokens: list[int], eos_ids: frozenset[int], room: int) -> tuple[list[int], str | None]:
    """Cut a step's tokens at the first EOS (kept) and at `room` tokens; say why generation stops, if it does."""
    for i, t in enumerate(tokens[:room]):
        if t in eos_ids:
            return tokens[: i + 1], "eos"
    if len(tokens) >= room:
        return tokens[:room], "length"
    return tokens, None


def check_request(lm: LM, prompt_ids, max_new_tokens, extra_positions: int = 0) -> None:
    """Reject a request no engine can serve, with the numbers. `extra_positions`: how far past the output the
    engine's guesses reach (the lookahead window)."""
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be a whole number >= 1, got {max_new_tokens!r}")
    if len(prompt_ids) == 0:
        raise ValueError("the prompt is empty")
    if len(prompt_ids) + max_new_tokens + extra_positions > lm.max_positions:
        room = lm.max_positions - max_new_tokens - extra_positions
        raise ValueError(
            f"the prompt has {len(prompt_ids)} tokens, but with {max_new_tokens} new tokens (and {extra_positions} "
            f"positions of lookahead) only {max(room, 0)} fit in the model's context of {lm.max_positions}"
        )


def prefill_step(lm: LM, cache, prompt_ids: list[int], sampling: Sampling, sampler: Sampler | None) -> StepTrace:
    """Step 0 of both methods: the prompt in one causal forward, which yields the first new token."""
    t0 = time.perf_counter()
    logits = lm.prefill(cache, prompt_ids)
    lm.sync()
    t1 = time.perf_counter()
    token = next_token(logits, sampling, sampler)
    return StepTrace(0, "prefill", len(prompt_ids) - 1, prompt_ids[-1], (token,), t1 - t0, time.perf_counter() - t1)


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
    tokens: list[int] = []
    steps: list[StepTrace] = []
    step = prefill_step(lm, cache, list(prompt_ids), sampling, sampler)
    while True:
        emitted, reason = clip(list(step.accepted), lm.eos_ids, max_new_tokens - len(tokens))
        if len(emitted) != len(step.accepted):
            step = replace(step, accepted=tuple(emitted))
        tokens += emitted
        steps.append(step)
        if on_step:
            on_step(step)
        if reason is None and should_stop and should_stop():
            reason = "cancelled"
        if reason:
            return MethodRun(tuple(tokens), tuple(steps), time.perf_counter() - start, reason)
        # one autoregressive step
        x, p = tokens[-1], len(prompt_ids) + len(tokens) - 1
        t0 = time.perf_counter()
        logits = lm.decode_one(cache, x, p)
        lm.sync()
        t1 = time.perf_counter()
        token = next_token(logits, sampling, sampler)
        step = StepTrace(len(steps), "greedy", p, x, (token,), t1 - t0, time.perf_counter() - t1)
