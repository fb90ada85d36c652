"""Event handlers of the page: plain functions from what Gradio passes to what it updates.

The page's state lives in the browser's stage; the server sends it a few bytes naming what to show (`stage`), and
the page reads every run at its one address, `runs/<handle>.json` (`routes`), where its downloads are too: a session
holds nothing of its own. Each handler that changes the run on screen returns the stage's value. Live runs have one
lifecycle, shared by the Run button and the `/generate` API: `start_run` checks the request and joins the identical
run waiting or running, or gives a new one a place in the engine's queue (app/runqueue.py) and starts it on the
engine's thread; the caller follows it (`LiveRun.follow`) and leaves it when its event ends; the run stops when the
last one following it leaves. A request the queue has no room for is refused with the seconds after which to try
again (`Busy`), and the page offers the race in the visitor's own browser beside it (`offer`).
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from typing import NamedTuple

import gradio as gr

from lade_core import RunTrace

from . import gallery, gradio_adapter, guard, limits, runqueue, stage, zerogpu
from .askers import NO_OFFER, Busy, busy_text, following, long_wait, offer, place_text, status_of
from .live import LiveRun, forget, register, session_run, stop_session
from .logs import fault, refusal
from .model import MODEL
from .runqueue import QUEUE
from .store import STORE
from .wait import curve_source, promise

# The last live run of each session, for settling after a cancel: its handle and a weak reference, never the run
# itself (a run is large; the store keeps what it recorded, under the handle).
_ended: dict[str, tuple[str, weakref.ref]] = {}
_ended_lock = threading.Lock()


def session_of(request: gr.Request | None) -> str:
    return getattr(request, "session_hash", None) or "anonymous"


# -- opening runs ------------------------------------------------------------------------------------------------
def open_gallery(name):
    """A gallery run from the sidebar's menu, at its opening step, in the explorer."""
    if not name:  # the menu was left without a choice
        return gr.skip()
    if name not in gallery.names():
        return stage.notice("No gallery run has that name; the gallery menu lists them.")
    return stage.show(name)  # at its opening step, which the page finds (Run.interestingStep)


# -- live runs -----------------------------------------------------------------------------------------------------
class Asked(NamedTuple):
    """What a request got: the run it follows, its follower's token (to leave with) and whether it joined a run
    someone else asked for first."""

    live: LiveRun
    token: str
    joined: bool


def start_run(
    prompt,
    window,
    ngram,
    guess,
    max_new_tokens,
    pool,
    session: str,
    sampling=(0.0, 1.0, 0),
    methods=None,
    client: str | None = None,
    who: str = "a client",
) -> Asked:
    """The run a request asks for, checked against the public limits (gr.Error otherwise): an identical run waiting
    or running, joined (`runqueue`: it takes no place and no engine time); else a new one, given a place in the
    engine's queue (`Busy` when it is full), held by the store under a fresh handle (in `client`'s share of it) and
    started, with the engine time one run may take. The session follows it (its previous run left). Shared by the
    Run button and the `generate` API endpoint. `sampling` is (temperature, top-p, seed) as the request sent them;
    `methods` the names raced against the baseline (None: lookahead alone); `who`: the client as the log names it
    (`guard.client_name`). A refusal writes one line to the log."""
    try:
        prompt, config, max_new = limits.check_request(prompt, window, ngram, guess, max_new_tokens, pool)
        sampled = limits.check_sampling(*sampling)
        specs = limits.check_methods(methods, config)
        try:
            lm = MODEL.get()
        except Exception as exc:  # no model here (or it failed to load, once: MODEL keeps the reason)
            raise limits.refused(f"Could not start the run: {exc}") from None
        candidate = LiveRun(lm, prompt, specs, max_new, sampling=sampled, budget_s=limits.RUN_BUDGET_S)
        limits.check_context(len(candidate.prompt_ids), lm.max_positions, max_new)
        limits.check_cost(len(candidate.prompt_ids), len(specs))
        # what the expected wait said this race alone would take, to check against and to tell those behind it
        candidate.promise = promise(specs, len(candidate.prompt_ids), max_new)
        if zerogpu.available():  # each request is one GPU call of its own: nothing to join, no engine queue
            live, token, joined = candidate, candidate.join(session), False
            _admit(candidate, client)
        else:
            live, token, joined = QUEUE.ask(candidate, session, lambda run: _admit(run, client))
    except runqueue.Busy as full:
        refusal(f"refused: a run from {who}: the engine's queue is full ({full.waiting} waiting)")
        raise Busy(busy_text(full), full.retry_s) from None
    except gr.Error as exc:
        refusal(f"refused: a run from {who}: {exc.message}")
        raise
    except (ValueError, RuntimeError) as exc:  # the app's own, building the run: logged once with its traceback
        fault(f"a run from {who} failed to start")
        raise limits.refused(f"The run failed: {exc}") from None
    register(session, live)
    with _ended_lock:
        _ended[session] = (live.handle, weakref.ref(live))
        while len(_ended) > limits.STATE_SESSIONS:
            _ended.pop(next(iter(_ended)))
    return Asked(live, token, joined)


def _admit(live: LiveRun, client: str | None) -> None:
    """A new run: held by the store (in `client`'s share), and started on the engine (unless on ZeroGPU)."""
    live.handle, live.client = STORE.add_live(live, owner=client), client

    def done(run) -> None:
        STORE.finish(live.handle, run, client)
        MODEL.observe(run)  # the engine's pace, for the next expected wait

    live.on_done = done
    if not zerogpu.available():
        live.start(MODEL.engine_lock)


async def run_live(
    prompt, window, ngram, guess, max_new_tokens, pool, temperature, top_p, sample_seed, methods, request: gr.Request
):
    """Async generator of (the stage's value, the sidebar's offer): the race's handle and status as it waits and
    records, then the finished run. A request identical to a run waiting or running follows that run; one the
    engine's queue has no room for is told when to try again, beside an offer to race in the browser."""
    session = session_of(request)
    settings = (prompt, window, ngram, guess, max_new_tokens, pool, temperature, top_p, sample_seed, methods)
    try:
        with following():
            asked = await asyncio.to_thread(
                start_run,
                prompt,
                window,
                ngram,
                guess,
                max_new_tokens,
                pool,
                session,
                (temperature, top_p, sample_seed),
                methods,
                guard.counted_client(request),
                guard.client_name(request),
            )
            async for value in _follow_live(session, asked, settings, request):
                yield value
    except Busy as busy:  # no bare refusal: when to try again, and the race in this browser instead
        yield stage.notice(busy.message), offer(busy.message, settings)


async def _follow_live(session: str, asked: Asked, settings: tuple, request):
    live, token = asked.live, asked.token
    try:
        if zerogpu.available():  # one GPU call computes the whole run, then the page plays it back
            run = await asyncio.to_thread(_on_gpu, live)
            STORE.finish(live.handle, run, live.client)
            finished(session, live)
            notice = "Computed on ZeroGPU in one call; press Play to watch it."
            yield stage.show(live.handle, 0, notice=notice), NO_OFFER
            return
        offered = False
        async for _ in live.follow(pulled=True, moved=lambda: QUEUE.ahead(live)[0]):
            if live.ended:  # follow raises the worker's error, or ends, next
                continue
            wait_long = long_wait(live)
            side = offer(place_text(live), settings) if wait_long else NO_OFFER if offered else gr.skip()
            offered = wait_long
            yield stage.live(live.handle, status_of(live)), side
        finished(session, live)
        # Stop may reach the engine before it cancels this event: the run then ends here, stopped, and says so
        yield (
            (
                stopped(live.handle, live.result, note=live.overrun())
                if (live.cancelled or live.out_of_budget)
                else stage.live(live.handle, live.overrun(), done=True)
            ),
            (NO_OFFER if offered else gr.skip()),
        )
    except (ValueError, RuntimeError) as exc:  # the engine's: logged once with its traceback, the visitor told why
        fault(f"a live run failed ({guard.client_name(request)})")
        raise limits.refused(f"The run failed: {exc}") from None
    finally:
        live.leave(token)
        forget(session, live)


_gpu_lock = threading.Lock()


def _on_gpu(live: LiveRun):
    """The whole run in one ZeroGPU call, one call at a time."""
    with _gpu_lock:
        return zerogpu.record_on_gpu(live.prompt, live.specs, live.max_new_tokens, live.sampling)


STOPPED = "Live run stopped."


def why_stopped(run: RunTrace | None) -> str:
    """Why a run ended before its last token, read off its lanes' own stop reasons (the one place this is chosen):
    the server's time limit where a lane ran out of it (`limits.budget_text`), else Stop's sentence."""
    lanes = () if run is None else (run.parallel, run.baseline, *(lane.run for lane in run.lanes))
    return limits.budget_text() if any(m.stop_reason == "budget" for m in lanes) else STOPPED


def stopped(handle: str, run: RunTrace | None = None, why: str | None = None, note: str = ""):
    """The stage's value for a run that ended before its last token (Stop, the budget): the run at its last step,
    with the sentence saying why (`why_stopped` of the run it recorded, unless `why` says otherwise), then `note`."""
    return stage.show(handle, "last", notice=f"{why_stopped(run) if why is None else why} {note}".strip())


def finished(session: str, live: LiveRun) -> None:
    """A run that ended by itself needs no settling: the session stops keeping it (it holds the whole run)."""
    with _ended_lock:
        if session in _ended and _ended[session][1]() is live:
            del _ended[session]


def stop_live(request: gr.Request) -> None:
    """This session leaves its live run: the run stops at its next step if nobody else watches it (the engine runs
    on its own thread, which cancelling the Run event does not reach)."""
    stop_session(session_of(request))


def left_text(others: int) -> str:
    return (
        f"You stopped following this run; {others} other{'s are' if others != 1 else ' is'} still watching it, so "
        f"it goes on without you. Here it is as it stood."
    )


def settle_run(request: gr.Request):
    """After the Run event ended without finishing (Stop, an error): a run that was cut short is put on screen as it
    stood, marked cancelled; one that others still watch goes on, and the page shows it as it stood and says so. A
    run that finished already did so itself."""
    session = session_of(request)
    with _ended_lock:
        handle, ref = _ended.pop(session, (None, lambda: None))
    live = ref()
    if handle is not None and live is None:  # it ended and was let go of: what it recorded is in the store
        return stopped(handle, STORE.run(handle)) if STORE.held(handle)["held"] else gr.skip()
    if live is None:  # it never started: say so where it stays, if the model is the reason
        try:
            MODEL.get()
        except Exception as exc:
            return stage.notice(f"No live runs here: {exc} The gallery's runs and saved traces work without the model.")
        return gr.skip()
    live.leave(session=session)  # the cancel's own leaving may not have run yet
    if not live.stopping and not live.ended:  # others watch it: it goes on without this page
        return stopped(live.handle, why=left_text(live.watchers))
    live.wait(timeout=30)  # the engine stops at its next step
    if live.result is None or not live.steps["parallel"]:
        return gr.skip()
    return stopped(live.handle, live.result)


AUTO_WHAT = (
    "Auto picks, among the swept settings, the W, N, G and pool with the best predicted speed-up over greedy on this "
    "server's measured cost curve (the median over the benchmark prompts). It needs the engine, so it waits its turn "
    "behind live runs."
)


def auto_settings():
    """W, N, G and the pool policy with the best predicted tokens per second on this device, and why (with the
    spread over the benchmark prompts). The device's cost curve is measured at most once per process."""
    from lade_core.measure import autoconfig

    try:
        curve, points = MODEL.cost_curve(), autoconfig.load_sweeps()
        best = autoconfig.best(points, curve)
    except Exception as exc:
        raise limits.refused(f"Auto needs the cost curve and the sweeps in assets/ and the model: {exc}") from None
    return best["window"], best["ngram"], best["guess"], best["pool"], auto_reason(best, len(points))


def auto_reason(best: dict, swept: int) -> str:
    low, high = best["predicted_speedup_range"]
    verdict = "" if best["predicted_speedup_median"] >= 1 else " No setting is predicted to beat plain decoding here."
    return (
        f"Auto chose the best predicted speed-up of {swept} swept settings: "
        f"W={best['window']}, N={best['ngram']}, G={best['guess']} with the {best['pool']} pool feeds "
        f"{best['mean_tokens_fed']:.1f} tokens a step at {best['step_cost']:.2f}x the cost of a greedy step and is "
        f"predicted to run at {best['predicted_speedup_median']:.2f}x greedy's speed (median over the benchmark "
        f"prompts; {low:.2f}x to {high:.2f}x), read off {curve_source(best.get('cost_curve') or {})}.{verdict}"
    )


def engine_jobs(jobs, races) -> list:
    """The engine's jobs in Gradio's queue as the runs they are, for the expected wait (`wait.wait_text`): a race's
    followers (the Run button's or `/generate`'s jobs, `races`) count once per run waiting or running, a job whose run
    has ended not at all, a job not yet given a run (or any other engine job, Auto) as itself."""
    out, seen = [], set()
    for job in jobs:
        fn, _ = gradio_adapter.call_of(job)
        if fn in races:
            live = session_run(gradio_adapter.session_of(job) or "")
            if live is not None and (live.ended or id(live) in seen):
                continue
            if live is not None:
                seen.add(id(live))
        out.append(job)
    return out
