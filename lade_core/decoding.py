"""What every decoding engine shares: the request check, the decoder's state, the step clock, and the step loop.

An engine is a `Decoder`: `prefill()` and `step()` each make one forward pass of the model (plus, for a
speculative method, the draft's passes) and return its `StepTrace`; `commit(tokens)` tells it which of the step's
tokens were kept. `DecoderState` is the state all of them keep (the model, its KV cache, the committed tokens, the
random stream) with the prefill they share; `StepClock` times a step's forward, its drafting and the rest.
`steps()` is the loop around any decoder: it cuts each step's tokens at EOS and at the budget, commits them, yields
the step, polls for cancellation and asks for the next step; so every engine stops, streams and cancels in exactly
the same way, and several decoders can be stepped in turn (a race on one wall clock, `record.py`). `generate()`
runs the loop to the end.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from .config import Sampling
from .model import LM
from .sampling import Sampler, next_token, warp
from .trace import MethodRun, StepTrace
from .verify import Verdict, verify_greedy, verify_sampled

StepCallback = Callable[[StepTrace], None]
StopCheck = Callable[[], bool | str]  # truthy to stop: a reason ("budget"), or True for "cancelled"


class Decoder(Protocol):
    def prefill(self) -> StepTrace: ...

    def step(self) -> StepTrace: ...

    def commit(self, tokens: list[int]) -> None: ...


class StepClock:
    """One step's time, split the way `StepTrace` records it: the target model's forward, drafting (a draft
    model's passes, or prompt lookup's search), and the rest (overhead). Started when made."""

    def __init__(self):
        self.start = time.perf_counter()
        self.forward_s = self.draft_s = 0.0
        self.kernels = ""  # the layout the target model's forward ran on (`LM.used`)

    @contextmanager
    def timed(self, phase: str, lm: LM | None = None):
        """Time the block as `phase` ("forward" or "draft"), waiting for `lm`'s queued device work at its end."""
        t0 = time.perf_counter()
        yield
        if lm is not None:
            lm.sync()
        elapsed = time.perf_counter() - t0
        if phase == "forward":
            self.forward_s += elapsed
            self.kernels = lm.used if lm is not None else self.kernels
        else:
            self.draft_s += elapsed

    def split(self) -> dict:
        """forward_s, draft_s and overhead_s (everything else since the clock started), and the forward's layout, for
        a `StepTrace`."""
        total = time.perf_counter() - self.start
        return {
            "forward_s": self.forward_s,
            "draft_s": self.draft_s,
            "overhead_s": max(total - self.forward_s - self.draft_s, 0.0),
            "kernels": self.kernels,
        }


@dataclass(frozen=True)
class Feed:
    """What a step feeds the model and how its answer is read: the tokens (x first, then the step's rows in the
    layout's order), the layout, the candidates to verify, each candidate's prediction rows, and the rows the cache
    keeps for a verdict. Each method builds one (its proposal); `DecoderState.forward_verify_keep` does the rest."""

    tokens: list[int]
    layout: object  # a `StepLayout`
    candidates: tuple
    rows: tuple  # rows[c]: the rows after x, then after each token of candidate c
    keep: Callable[[Verdict], list[int]]


def candidate_feed(tokens: list[int], layout, candidates) -> Feed:
    """The feed of a step that verifies `candidates` laid out by `layout` (lookahead's verification branch, a
    speculative draft): each candidate read at its prediction rows, the winner's accepted tokens kept."""
    return Feed(
        tokens,
        layout,
        tuple(candidates),
        layout.prediction_rows,
        lambda verdict: layout.cache_rows(max(verdict.winner, 0), verdict.matched),
    )


class DecoderState:
    """What every decoder keeps between steps: the model, its KV cache, the committed tokens (prompt first), the
    seeded random stream when it samples, the step counter; and the prefill and verification they share."""

    def __init__(self, lm: LM, prompt_ids, sampling: Sampling | None = None):
        self.lm, self.sampling = lm, sampling or Sampling()
        self.sampler = None if self.sampling.greedy else Sampler(self.sampling.sample_seed)
        self.cache = lm.new_cache()
        self.prompt = tuple(prompt_ids)
        self.committed = list(prompt_ids)
        self.index = 0

    def prefill(self) -> StepTrace:
        return prefill_step(self.lm, self.cache, self.committed, self.sampling, self.sampler)

    def commit(self, tokens: list[int]) -> None:
        self.committed += tokens

    def advance(self) -> tuple[int, int]:
        """Start the next step: (x, p), the last committed token and its position."""
        self.index += 1
        return self.committed[-1], len(self.committed) - 1

    def forward_verify_keep(self, clock: StepClock, p: int, feed: Feed) -> tuple[np.ndarray, Verdict]:
        """The tail every step shares: one forward pass over `feed.tokens` at position `p` (timed on `clock`), the
        argmax of every row, verification of the candidates at their rows, and the cache keeping x and the accepted
        tokens. Returns (argmax, verdict)."""
        with clock.timed("forward", self.lm):
            logits = self.lm.step_forward(self.cache, feed.tokens, feed.layout)
        argmax = logits.argmax(dim=-1).cpu().numpy()
        verdict = self.verify(feed.candidates, logits, argmax, feed.rows)
        self.lm.keep_in_cache(self.cache, p, feed.keep(verdict))
        return argmax, verdict

    def verify(self, candidates, logits, argmax: np.ndarray, rows) -> Verdict:
        """Greedy or sampled verification of `candidates` against the kept rows' logits (and their `argmax`):
        `rows[c]` are the rows after x, then after each token of candidate c (a layout's `prediction_rows`)."""
        if self.sampling.greedy:
            return verify_greedy(candidates, [argmax[list(r)] for r in rows], argmax[0])
        warped: dict[int, np.ndarray] = {}

        def target(c: int, k: int) -> np.ndarray:
            row = int(rows[c][k]) if rows else 0  # k = 0 is row 0 (after x), whatever the candidate
            if row not in warped:
                warped[row] = warp(logits[row], self.sampling)
            return warped[row]

        return verify_sampled(candidates, target, self.sampler)


def clip(tokens: list[int], eos_ids: frozenset[int], room: int) -> tuple[list[int], str | None]:
    """Cut a step's tokens at the first EOS (kept) and at `room` tokens; say why generation stops, if it does."""
    for i, t in enumerate(tokens[:room]):
        if t in eos_ids:
            return tokens[: i + 1], "eos"
    if len(tokens) >= room:
        return tokens[:room], "length"
    return tokens, None


def check_request(lm: LM, prompt_ids, max_new_tokens) -> None:
    """Reject a request no engine can serve, with the numbers. The parallel engines ask no more room than greedy
    decoding: near the end of the context they narrow their window or draft instead."""
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be a whole number >= 1, got {max_new_tokens!r}")
    if len(prompt_ids) == 0:
        raise ValueError("the prompt is empty")
    if len(prompt_ids) + max_new_tokens > lm.max_positions:
        room = lm.max_positions - max_new_tokens
        raise ValueError(
            f"the prompt has {len(prompt_ids)} tokens, but with {max_new_tokens} new tokens only "
            f"{max(room, 0)} fit in the model's context of {lm.max_positions}"
        )


def prefill_step(lm: LM, cache, prompt_ids: list[int], sampling: Sampling, sampler: Sampler | None) -> StepTrace:
    """Step 0 of every method: the prompt in one causal forward, which yields the first new token."""
    clock = StepClock()
    with clock.timed("forward", lm):
        logits = lm.prefill(cache, prompt_ids)
    token = next_token(logits, sampling, sampler)
    return StepTrace(
        index=0,
        kind="prefill",
        position=len(prompt_ids) - 1,
        input_token=prompt_ids[-1],
        accepted=(token,),
        **clock.split(),
    )


@dataclass
class Progress:
    """Where a loop stands: the tokens kept so far and, once it ended, why ("eos", "length", "cancelled" or the
    reason `should_stop` gave, such as "budget")."""

    tokens: list[int]
    reason: str | None = None


def steps(
    decoder: Decoder,
    eos_ids: frozenset[int],
    max_new_tokens: int,
    should_stop: StopCheck | None = None,
    progress: Progress | None = None,
) -> Iterator[StepTrace]:
    """Yield the decoder's steps, each cut at EOS and at the budget, until one of them ends the run or
    `should_stop()` says so (with its reason when it names one: "budget"; else "cancelled"); `progress` (if given)
    holds the kept tokens and the reason the loop ended."""
    progress = progress if progress is not None else Progress([])
    step = decoder.prefill()
    while True:
        emitted, reason = clip(list(step.accepted), eos_ids, max_new_tokens - len(progress.tokens))
        if len(emitted) != len(step.accepted):
            step = replace(step, accepted=tuple(emitted))
        decoder.commit(emitted)
        progress.tokens += emitted
        yield step
        if reason is None and should_stop:
            stop = should_stop()
            reason = (stop if isinstance(stop, str) else "cancelled") if stop else None
        if reason:
            progress.reason = reason
            return
        step = decoder.step()


def generate(
    decoder: Decoder,
    eos_ids: frozenset[int],
    max_new_tokens: int,
    on_step: StepCallback | None = None,
    should_stop: StopCheck | None = None,
) -> MethodRun:
    """Run `decoder` to the end; `on_step` gets each step as soon as it is made."""
    start = time.perf_counter()
    progress = Progress([])
    done = []
    for step in steps(decoder, eos_ids, max_new_tokens, should_stop, progress):
        done.append(step)
        if on_step:
            on_step(step)
    return MethodRun(tuple(progress.tokens), tuple(done), time.perf_counter() - start, progress.reason)
