"""Event handlers of the page: plain functions from what Gradio passes to what it updates.

The page's state lives in the browser's stage; the server sends it a few bytes naming what to show (`stage`), and
the page reads every run at its one address, `runs/<handle>.json` (`routes`), where its downloads are too: a session
holds nothing of its own. Each handler that changes the run on screen returns the stage's value. Live runs have one
lifecycle, shared by the Run button and the `/generate` API:
`start_run` checks the request, registers the run and starts it on the engine's thread; the caller follows it.
"""

from __future__ import annotations

import threading
import weakref

import gradio as gr

from . import gallery, guard, limits, stage, zerogpu
from .live import LiveRun, forget, register, stop_session
from .logs import fault, refusal
from .model import MODEL
from .store import STORE
from .wait import bound_s, curve_source

# The last live run of each session, for settling after a cancel: its handle and a weak reference, never the run
# itself (a cancelled run kept whole per session was up to about 0.5 GiB for 300 sessions; the store keeps what it
# recorded, under the handle).
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
) -> LiveRun:
    """The session's live run, checked against the public limits (gr.Error otherwise), registered (which stops the
    session's previous one), held by the store under a fresh handle (in `client`'s share of it) and started, with
    the engine time one run may take. Shared by the Run button and the `generate` API endpoint. `sampling` is
    (temperature, top-p, seed) as the request sent them; `methods` the names raced against the baseline (None:
    lookahead alone); `who`: the client as the log names it (`guard.client_name`). A refusal writes one line to the
    log."""
    try:
        prompt, config, max_new = limits.check_request(prompt, window, ngram, guess, max_new_tokens, pool)
        sampled = limits.check_sampling(*sampling)
        specs = limits.check_methods(methods, config)
        try:
            lm = MODEL.get()
        except Exception as exc:  # no model here (or it failed to load, once: MODEL keeps the reason)
            raise limits.refused(f"Could not start the run: {exc}") from None
        live = LiveRun(lm, prompt, specs, max_new, sampling=sampled, budget_s=limits.RUN_BUDGET_S)
        limits.check_context(len(live.prompt_ids), lm.max_positions, max_new)
        limits.check_cost(len(live.prompt_ids), len(specs))
    except gr.Error as exc:
        refusal(f"refused: a run from {who}: {exc.message}")
        raise
    live.handle, live.client = STORE.add_live(live, owner=client), client
    live.promised_s = bound_s(specs, len(live.prompt_ids), max_new)  # what the expected wait said, to check against

    def done(run) -> None:
        STORE.finish(live.handle, run, client)
        MODEL.observe(run)  # the engine's pace, for the next expected wait

    live.on_done = done
    register(session, live)
    with _ended_lock:
        _ended[session] = (live.handle, weakref.ref(live))
        while len(_ended) > limits.STATE_SESSIONS:
            _ended.pop(next(iter(_ended)))
    if not zerogpu.available():
        live.start(MODEL.engine_lock)
    return live


def run_live(
    prompt, window, ngram, guess, max_new_tokens, pool, temperature, top_p, sample_seed, methods, request: gr.Request
):
    """Generator of the stage's value: the race's handle and status as it records, then the finished run."""
    session = session_of(request)
    live = start_run(
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
    try:
        if zerogpu.available():  # one GPU call computes the whole run, then the page plays it back
            run = zerogpu.record_on_gpu(live.prompt, live.specs, live.max_new_tokens, live.sampling)
            STORE.finish(live.handle, run, live.client)
            finished(session, live)
            yield stage.show(live.handle, 0, notice="Computed on ZeroGPU in one call; press Play to watch it.")
            return
        yield stage.live(live.handle, "Live race: starting.")
        for status in live.follow(pulled=True):
            if live.result is None:
                yield stage.live(live.handle, status)
        finished(session, live)
        # Stop may reach the engine before it cancels this event: the run then ends here, stopped, and says so
        yield (
            stopped(live.handle, limits.budget_text() if live.out_of_budget else STOPPED)
            if (live.cancelled or live.out_of_budget)
            else stage.live(live.handle, live.status(), done=True)
        )
    except (ValueError, RuntimeError) as exc:  # the engine's: logged once with its traceback, the visitor told why
        fault(f"a live run failed ({guard.client_name(request)})")
        raise limits.refused(f"The run failed: {exc}") from None
    finally:
        live.stop()
        forget(session, live)


STOPPED = "Live run stopped."


def stopped(handle: str, why: str = STOPPED):
    """The stage's value for a run that ended before its last token (Stop, the budget): the run at its last step,
    with the sentence saying why."""
    return stage.show(handle, "last", notice=why)


def finished(session: str, live: LiveRun) -> None:
    """A run that ended by itself needs no settling: the session stops keeping it (it holds the whole run)."""
    with _ended_lock:
        if session in _ended and _ended[session][1]() is live:
            del _ended[session]


def stop_live(request: gr.Request) -> None:
    """Stop the session's live run at its next step (the engine runs on its own thread, which cancelling the Run
    event does not reach)."""
    stop_session(session_of(request))


def settle_run(request: gr.Request):
    """After the Run event ended without finishing (Stop, an error): a run that was cut short is put on screen as it
    stood, marked cancelled. A run that finished already did so itself."""
    with _ended_lock:
        handle, ref = _ended.pop(session_of(request), (None, lambda: None))
    live = ref()
    if handle is not None and live is None:  # it ended and was let go of: what it recorded is in the store
        return stopped(handle) if STORE.held(handle)["held"] else gr.skip()
    if live is None:  # it never started: say so where it stays, if the model is the reason
        try:
            MODEL.get()
        except Exception as exc:
            return stage.notice(f"No live runs here: {exc} The gallery's runs and saved traces work without the model.")
        return gr.skip()
    live.wait(timeout=30)  # the engine stops at its next step
    if live.result is None or not live.steps["parallel"]:
        return gr.skip()
    return stopped(live.handle)


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
