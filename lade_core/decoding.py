"""What every decoding engine shares: the request check, the prompt's prefill step, and the step loop.

An engine is a `Decoder`: `prefill()` and `step()` each make one forward pass and return its `StepTrace`;
`commit(tokens)` tells it which of the step's tokens were kept. `steps()` is the loop around any decoder: it cuts each
step's tokens at EOS and at the budget, commits them, yields the step, polls for cancellation and asks for the next
step; so greedy, Jacobi and lookahead decoding stop, stream and cancel in exactly the same way, and two decoders can
be stepped in turn (a race on one wall clock, `record.race`). `generate()` runs the loop to the end.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Callable, Iterator, Protocol

from .config import Sampling
from .model import LM
from .sampling import Sampler, next_token
from .trace import MethodRun, StepTrace

StepCallback = Callable[[StepTrace], None]
StopCheck = Callable[[], bool]


class Decoder(Protocol):
    def prefill(self) -> StepTrace: ...

    def step(self) -> StepTrace: ...

    def commit(self, tokens: list[int]) -> None: ...


def clip(tokens: list[int], eos_ids: frozenset[int], room: int) -> tuple[list[int], str | None]:
    """Cut a step's tokens at the first EOS (kept) and at `room` tokens; say why generation stops, if it does."""
    for i, t in enumerate(tokens[:room]):
        if t in eos_ids:
            return tokens[: i + 1], "eos"
    if len(tokens) >= room:
        return tokens[:room], "length"
    return tokens, None


def check_request(lm: LM, prompt_ids, max_new_tokens) -> None:
    """Reject a request no engine can serve, with the numbers. Lookahead asks no more room than greedy decoding:
    near the end of the context it narrows its window instead (`room_for_window`)."""
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be a whole number >= 1, got {max_new_tokens!r}")
    if len(prompt_ids) == 0:
        raise ValueError("the prompt is empty")
    if len(prompt_ids) + max_new_tokens > lm.max_positions:
        room = lm.max_positions - max_new_tokens
        raise ValueError(f"the prompt has {len(prompt_ids)} tokens, but with {max_new_tokens} new tokens only "
                         f"{max(room, 0)} fit in the model's context of {lm.max_positions}")


def prefill_step(lm: LM, cache, prompt_ids: list[int], sampling: Sampling, sampler: Sampler | None) -> StepTrace:
    """Step 0 of every method: the prompt in one causal forward, which yields the first new token."""
    t0 = time.perf_counter()
    logits = lm.prefill(cache, prompt_ids)
    lm.sync()
    t1 = time.perf_counter()
    token = next_token(logits, sampling, sampler)
    return StepTrace(0, "prefill", len(prompt_ids) - 1, prompt_ids[-1], (token,), t1 - t0, time.perf_counter() - t1)


@dataclass
class Progress:
    """Where a loop stands: the tokens kept so far and, once it ended, why ("eos", "length" or "cancelled")."""

    tokens: list[int]
    reason: str | None = None


def steps(decoder: Decoder, eos_ids: frozenset[int], max_new_tokens: int, should_stop: StopCheck | None = None,
          progress: Progress | None = None) -> Iterator[StepTrace]:
    """Yield the decoder's steps, each cut at EOS and at the budget, until one of them ends the run or
    `should_stop()` says so; `progress` (if given) holds the kept tokens and the reason the loop ended."""
    progress = progress if progress is not None else Progress([])
    step = decoder.prefill()
    while True:
        emitted, reason = clip(list(step.accepted), eos_ids, max_new_tokens - len(progress.tokens))
        if len(emitted) != len(step.accepted):
            step = replace(step, accepted=tuple(emitted))
        decoder.commit(emitted)
        progress.tokens += emitted
        yield step
        if reason is None and should_stop and should_stop():
            reason = "cancelled"
        if reason:
            progress.reason = reason
            return
        step = decoder.step()


def generate(decoder: Decoder, eos_ids: frozenset[int], max_new_tokens: int, on_step: StepCallback | None = None,
             should_stop: StopCheck | None = None) -> MethodRun:
    """Run `decoder` to the end; `on_step` gets each step as soon as it is made."""
    start = time.perf_counter()
    progress = Progress([])
    done = []
    for step in steps(decoder, eos_ids, max_new_tokens, should_stop, progress):
        done.append(step)
        if on_step:
            on_step(step)
    return MethodRun(tuple(progress.tokens), tuple(done), time.perf_counter() - start, progress.reason)
