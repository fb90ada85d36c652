"""The programmatic endpoint `/generate` (gradio_client, @gradio/client): one live run, answered as a small JSON
summary. It is the one endpoint the API lists: the page's own events are private (app/ui.py).

It takes the path of the Run button (`events.start_run`: the same checks, the same `LiveRun`, the same engine queue,
thread and lock; on ZeroGPU the same one-call run): a request identical to a run waiting or running follows that run
and gets its summary, a new one waits its turn in the engine's queue, and a request the queue has no room for is
refused with one sentence naming the seconds after which to try again. It streams a summary after each batch of
steps, so that a cancelled job is noticed at the next step (the run stops there when nobody else follows it); the last
summary (`done: true`) is what `Client.predict` returns. What the listing
says of it is declared here once: the endpoint (`DESCRIPTION`), each parameter (`parameters()`, its ranges read from
`limits`) and the summary (`Summary` and the types in it, as a JSON Schema). It leaves out the per-step traces:
download a trace from the page for those. The README runs it from Python and JavaScript (tests/test_api_examples.py).

    from gradio_client import Client
    Client("http://127.0.0.1:7860/").predict(prompt="Write a haiku", max_new_tokens=32, api_name="/generate")
"""

import asyncio
import time
from collections.abc import AsyncIterator
from typing import NotRequired  # pydantic reads it on Python 3.11

import gradio as gr
from typing_extensions import TypedDict  # pydantic's JSON Schema of the summary needs this one on Python 3.11

from lade_core import LookaheadConfig, MethodRun, RunTrace, Sampling
from lade_core.config import POOL_POLICIES

from . import askers, events, guard, limits, zerogpu
from .live import forget
from .logs import fault

DEFAULT, SAMPLED = LookaheadConfig(), Sampling()  # the parameters' defaults: the engine's own (greedy when unsampled)


class MethodSummary(TypedDict):
    """One method's run: its text and token ids, its steps (model calls), its compression (tokens per step) and why
    it stopped ("length", "eos", "cancelled" or "budget")."""

    text: str
    tokens: list[int]
    steps: int
    compression: float
    stop_reason: str


class LaneSummary(MethodSummary):
    """A raced method after the first: its name, then what `MethodSummary` says of it."""

    method: str


class ConfigSummary(TypedDict):
    """Lookahead's settings as run: W, N, G and the pool's policy."""

    window: int
    ngram: int
    guess: int
    pool: str
    pool_from_prompt: bool


class SamplingSummary(TypedDict):
    """How both methods chose tokens: greedy, or sampled at this temperature, top-p and seed."""

    greedy: bool
    temperature: float
    top_p: float
    seed: int


class Summary(TypedDict):
    """A run of /generate: `done` (false while it runs, true on the last summary), the model, the prompt's tokens
    (with the chat template), the settings, the first method (`method`, in `lookahead`), the baseline (one token a
    step, greedy or sampled; `greedy` is its old name), the other raced methods (`lanes`), `exact` (every method wrote
    the baseline's tokens, once a greedy run is done; null while running or when sampled) and a `note`: while the run
    waits for the engine, its place in the engine's queue; when the server's per-run time ran out, that; when it took
    longer than the expected wait promised it, why (`LiveRun.overrun`)."""

    done: bool
    model: str
    prompt_tokens: int
    config: ConfigSummary
    max_new_tokens: int
    sampling: SamplingSummary
    method: str
    lookahead: MethodSummary
    baseline: MethodSummary
    greedy: MethodSummary
    lanes: list[LaneSummary]
    exact: bool | None
    note: NotRequired[str]


DESCRIPTION = (
    "Race lookahead decoding (or up to three methods) against greedy decoding on this server's model. Streams a "
    "summary about once a second while the run records and ends with the summary whose `done` is true (what "
    "predict returns); cancelling the job stops the run at its next step. A request outside the public limits is "
    "refused with one sentence saying why."
)


def parameters() -> dict[str, str]:
    """What each of `generate`'s parameters is, with the public ranges (`limits`), as the API listing shows it."""
    W, N, G = limits.PUBLIC["window"], limits.PUBLIC["ngram"], limits.PUBLIC["guess"]
    t, p, s = (limits.PUBLIC_SAMPLING[k] for k in ("temperature", "top_p", "sample_seed"))
    return {
        "prompt": f"the user's message: at most {limits.MAX_PROMPT_CHARS:,} characters and "
        f"{limits.MAX_PROMPT_TOKENS:,} tokens with the chat template",
        "window": f"W, lookahead's window width, {W[0]} to {W[1]}",
        "ngram": f"N, the n-gram size (N-1 levels), {N[0]} to {N[1]}",
        "guess": f"G, the candidates verified per step, {G[0]} to {G[1]}",
        "max_new_tokens": f"tokens to write, {limits.MAX_NEW_TOKENS[0]} to {limits.MAX_NEW_TOKENS[1]}",
        "pool_from_prompt": f"the n-gram pool's policy: one of {', '.join(POOL_POLICIES)} (true for prompt, false "
        f"for paper); left out, {DEFAULT.pool}",
        "temperature": f"0 is greedy; up to {t[1]:g} both methods sample (top_p, seed) and exact is null",
        "top_p": f"the probability mass sampling keeps, {p[0]:g} to {p[1]:g}",
        "seed": f"the sampling seed, {s[0]} to {s[1]:,}",
        "methods": f"1 to 3 of {', '.join(limits.RACE_METHODS)} raced against the baseline, the first reported "
        f"in lookahead (named by method), the others in lanes; left out, lookahead alone",
    }


def summary(run: RunTrace, done: bool, decode) -> Summary:
    """Texts, token ids, steps and compression of both methods, and the sampling settings. `exact` (lookahead ==
    greedy, token for token) is reported once a greedy run is done; a sampled run has None there, since lookahead
    and plain sampling draw from the same distribution but not the same tokens."""

    def method(m: MethodRun) -> MethodSummary:
        return {
            "text": decode(list(m.tokens)),
            "tokens": list(m.tokens),
            "steps": len(m.steps),
            "compression": round(m.compression, 4),
            "stop_reason": m.stop_reason,
        }

    cfg, s = run.config, run.sampling
    return {
        "done": done,
        "model": run.model,
        "prompt_tokens": len(run.prompt_ids),
        "config": {
            "window": cfg.window,
            "ngram": cfg.ngram,
            "guess": cfg.guess,
            "pool": cfg.pool,
            "pool_from_prompt": cfg.pool == "prompt",
        },
        "max_new_tokens": run.max_new_tokens,
        "sampling": {"greedy": s.greedy, "temperature": s.temperature, "top_p": s.top_p, "seed": s.sample_seed},
        "method": run.method,
        "lookahead": method(run.parallel),
        "baseline": method(run.baseline),
        "greedy": method(run.baseline),
        "lanes": [{"method": lane.method, **method(lane.run)} for lane in run.lanes],
        "exact": all(m.tokens == run.baseline.tokens for m in (run.parallel, *(lane.run for lane in run.lanes)))
        if done and s.greedy
        else None,
    }


async def generate(
    prompt: str,
    window: int = DEFAULT.window,
    ngram: int = DEFAULT.ngram,
    guess: int = DEFAULT.guess,
    max_new_tokens: int = limits.NEW_TOKENS,
    pool_from_prompt: bool | str | None = None,
    temperature: float = SAMPLED.temperature,
    top_p: float = SAMPLED.top_p,
    seed: int = SAMPLED.sample_seed,
    methods: list[str] | None = None,
    request: gr.Request = None,
) -> AsyncIterator[Summary]:
    """A live run of `prompt` with W, N, G (`DESCRIPTION`; the parameters: `parameters()`), yielding `Summary`s. A
    request identical to a run waiting or running follows that run (the same summary, token for token); one the
    engine's queue has no room for is refused with one sentence naming the seconds after which to try again."""
    session = events.session_of(request)
    with askers.following():
        asked = await asyncio.to_thread(
            events.start_run,
            prompt,
            window,
            ngram,
            guess,
            max_new_tokens,
            pool_from_prompt,
            session,
            (temperature, top_p, seed),
            methods,
            guard.counted_client(request),
            guard.client_name(request),
        )
        live = asked.live
        try:
            if zerogpu.available():  # as the Run button: one GPU call computes the whole run
                run = await asyncio.to_thread(events._on_gpu, live)
                yield summary(run, True, live.lm.decode)
                return
            last = 0.0
            async for _ in live.follow(moved=lambda: events.QUEUE.ahead(live)[0]):
                if live.ended:  # follow raises the worker's error, or ends, next
                    continue
                if not live.started:  # its place in the engine's queue, whenever it moves
                    yield {**summary(live.partial(), False, live.lm.decode), "note": askers.place_text(live)}
                elif time.monotonic() - last > 1.0:  # a summary a second while it runs, then the last one
                    last = time.monotonic()
                    yield summary(live.partial(), False, live.lm.decode)
            events.finished(session, live)
            last_summary = summary(live.result, True, live.lm.decode)
            note = f"{limits.budget_text() if live.out_of_budget else ''} {live.overrun()}".strip()
            yield {**last_summary, "note": note} if note else last_summary
        except (ValueError, RuntimeError) as exc:  # the engine's: logged once with its traceback, the caller told why
            fault(f"a /generate run failed ({guard.client_name(request)})")
            raise limits.refused(f"The run failed: {exc}") from None
        finally:
            live.leave(asked.token)
            forget(session, live)
