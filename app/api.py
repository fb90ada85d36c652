"""The programmatic endpoint `/generate` for gradio_client: one live run, answered as a small JSON summary.

It takes the path of the Run button (`events.start_run`: the same checks, the same `LiveRun`, the same engine slot
and lock; on ZeroGPU the same one-call run) and streams a summary after each batch of steps, so that a cancelled job
is noticed at the next step; the last summary (`done: true`) is what `Client.predict` returns. It leaves out the
per-step traces: download a trace from the page for those.

    from gradio_client import Client
    Client("http://127.0.0.1:7860/").predict("Write a haiku about caches", 7, 4, 7, 32, False, api_name="/generate")
    # sampling: temperature, top-p, seed last (temperature 0, the default, is greedy)
    Client("http://127.0.0.1:7860/").predict("Write a haiku", 7, 4, 7, 32, True, 0.7, 0.9, 1, api_name="/generate")
"""

import time
from collections.abc import Iterator

import gradio as gr

from lade_core import MethodRun, RunTrace

from . import events, guard, limits, zerogpu
from .live import forget
from .logs import fault


def summary(run: RunTrace, done: bool, decode) -> dict:
    """Texts, token ids, steps and compression of both methods, and the sampling settings. `exact` (lookahead ==
    greedy, token for token) is reported once a greedy run is done; a sampled run has None there, since lookahead
    and plain sampling draw from the same distribution but not the same tokens."""

    def method(m: MethodRun) -> dict:
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


def generate(
    prompt: str,
    window: int = 7,
    ngram: int = 4,
    guess: int = 7,
    max_new_tokens: int = 64,
    pool_from_prompt: bool | str | None = None,
    temperature: float = 0.0,
    top_p: float = 1.0,
    seed: int = 0,
    methods: list[str] | None = None,
    request: gr.Request = None,
) -> Iterator[dict]:
    """Run lookahead and greedy decoding on `prompt` with W, N, G; yields JSON summaries, the last one with done=true.

    The lookahead text and token ids, the greedy token ids, the steps of each, the compression (tokens per step) and
    whether the two outputs are identical (they are, in fp32). With a temperature above 0 both methods sample
    (top-p, seed) instead: lookahead then keeps the model's distribution, not the plain run's tokens, and `exact`
    is None. The "baseline" entry is always the plain one-token-per-step run, greedy or sampled ("greedy" is the
    same entry under its old name). `pool_from_prompt`: true for the prompt-seeded pool, false for the paper's plain
    pool, a policy name ("paper", "output", "prompt"), or left out for the default. `methods`: up to three of
    "lookahead", "jacobi", "pld", "early-exit" raced against the baseline, the first in "lookahead" (named by
    "method"), the others in "lanes"; left out, lookahead alone.
    """
    live = events.start_run(
        prompt,
        window,
        ngram,
        guess,
        max_new_tokens,
        pool_from_prompt,
        events.session_of(request),
        (temperature, top_p, seed),
        methods,
        guard.counted_client(request),
        guard.client_name(request),
    )
    try:
        if zerogpu.available():  # as the Run button: one GPU call computes the whole run
            run = zerogpu.record_on_gpu(live.prompt, live.specs, live.max_new_tokens, live.sampling)
            yield summary(run, True, live.lm.decode)
            return
        last = 0.0
        for _ in live.follow():
            if time.monotonic() - last > 1.0:  # a summary a second while it runs, then the last one
                last = time.monotonic()
                yield summary(live.partial(), False, live.lm.decode)
        events.finished(events.session_of(request), live)
        last_summary = summary(live.result, True, live.lm.decode)
        yield {**last_summary, "note": limits.budget_text()} if live.out_of_budget else last_summary
    except (ValueError, RuntimeError) as exc:  # the engine's: logged once with its traceback, the caller told why
        fault(f"a /generate run failed ({guard.client_name(request)})")
        raise limits.refused(f"The run failed: {exc}") from None
    finally:
        live.stop()
        forget(events.session_of(request), live)
