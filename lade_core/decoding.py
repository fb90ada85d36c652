"""What both decoding engines share: request checks, the prompt's prefill step, and the step loop.

`run_steps` is the loop around any engine's step: it cuts each step's tokens at EOS and at the budget, hands the
step to the callback, polls for cancellation, and asks the engine for the next step; so greedy decoding and
lookahead decoding stop, stream and cancel in exactly the same way.
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


def run_steps(
    first: StepTrace,
    advance: Callable[[list[int], int], StepTrace],
    eos_ids: frozenset[int],
    max_new_tokens: int,
    on_step: StepCallback | None,
    should_stop: StopCheck | None,
    start: float,
) -> MethodRun:
    """Loop from the `first` step; `advance(emitted, index)` commits the tokens a step emitted and makes step `index`."""
    tokens: list[int] = []
    steps: list[StepTrace] = []
    step = first
    while True:
        emitted, reason = clip(list(step.accepted), eos_ids, max_new_tokens - len(tokens))
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
        step = advance(emitted, len(steps))
