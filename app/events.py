"""Event handlers of the page: plain functions from what Gradio passes to what it updates.

The page's state is in the browser's stage (runs, step, mode); per session the server keeps only which run is shown
(`stage.Held`), for its download and export. Each handler that changes the run on screen returns `Opened`: the
stage's message, the held run, and the download button's file. Live runs have one lifecycle, shared by the Run
button and the `/generate` API: `start_run` checks the request and registers the run; the caller streams it.
"""

from __future__ import annotations

import threading
from typing import NamedTuple

import gradio as gr

from lade_core import RunTrace
from lade_core.load import TraceError, parse_run
from lade_core.schema import SchemaError

from . import deeplink, files, gallery, limits, zerogpu
from .live import LIVE, LiveRun, forget, register, stop_session
from .model import MODEL
from .render.export import render_html
from .render.payload import PayloadTooLarge, payload
from .stage import Held, gallery_payload, interesting_step, message, open_message

_ended: dict[str, LiveRun] = {}  # the last live run of each session, for settling after a cancel
_ended_lock = threading.Lock()


class Opened(NamedTuple):
    """The outputs of every handler that puts a run on screen, in this order."""

    stage: object  # the stage's message
    held: object  # stage.Held
    download: object  # gr.DownloadButton update


def session_of(request: gr.Request | None) -> str:
    return getattr(request, "session_hash", None) or "anonymous"


def trace_path(held: Held, run: RunTrace | None = None) -> str:
    """The run's trace file: a gallery run's own, else a temp copy."""
    if not held.blob:
        return str(gallery.RUNS / f"{held.name}.json")
    run = run or held.run()
    return files.write(run.to_json(), f"{files.safe_stem(run.title, 'lookahead-run')}.json")


def opened(held: Held, msg: dict, run: RunTrace | None = None) -> Opened:
    return Opened(msg, held, gr.DownloadButton(value=trace_path(held, run)))


def notice(text: str) -> Opened:
    return Opened(message("notice", notice=text), gr.skip(), gr.skip())


# -- opening runs ------------------------------------------------------------------------------------------------
def open_gallery(name: str) -> Opened:
    """A gallery run, at its opening step, in the explorer."""
    if name not in gallery.names():
        return notice(f"No gallery run is called {deeplink.shown(name)}.")
    run = gallery.load(name)
    return opened(Held(name), open_message(name, gallery_payload(name), interesting_step(run)))


def stage_opened(held: Held, evt: gr.EventData) -> tuple:
    """The stage opened a gallery run by itself (the lesson's "try it"): downloads follow it."""
    name = (getattr(evt, "_data", None) or {}).get("name")
    if not isinstance(name, str) or name not in gallery.names() or name == getattr(held, "name", None):
        return gr.skip(), gr.skip()
    held = Held(name)
    return held, gr.DownloadButton(value=trace_path(held))


def release_stage(evt: gr.EventData) -> str:
    """The page has drawn an opened run. Gradio keeps each component's last value per session, which for the stage
    is the run's whole payload (several MB for a long run); replace it with a few bytes that name the message
    acknowledged. The run itself stays in the session's `Held`, compressed."""
    seq = (getattr(evt, "_data", None) or {}).get("seq")
    return message("ack", of=seq if type(seq) is int and 0 <= seq < 2**53 else None)


def read_trace(path) -> RunTrace:
    """The run in an uploaded file: size checked before it is read, validated whole, within the public limits."""
    import os

    size = os.path.getsize(path)
    if size > limits.UPLOAD_BYTES:
        raise TraceError(f"the file is {size / 2**20:.1f} MiB; a trace may be at most {limits.UPLOAD_MIB} MiB")
    with open(path, "rb") as f:
        run = parse_run(f.read(limits.UPLOAD_BYTES + 1), limits.UPLOAD_BYTES)
    limits.check_trace(run)
    return run


def open_upload(path) -> Opened:
    """An uploaded trace, or a notice saying in one line why it cannot be opened (the page stays as it was)."""
    if not path:
        return Opened(gr.skip(), gr.skip(), gr.skip())
    try:
        run = read_trace(path)
        data = payload(run)
        held = Held.of(files.safe_stem(run.title, "saved-run"), run)
    except (SchemaError, PayloadTooLarge, ValueError, OSError) as exc:
        return notice(f"Could not open that file: {str(exc)[:300]}")
    name = held.name if held.name not in gallery.names() and held.name != LIVE else f"{held.name}-opened"
    held = Held(name, held.blob)
    return opened(held, open_message(name, data, interesting_step(run), notice=""), run)


def export(held: Held):
    """The run on screen as one self-contained HTML replay, offered for download."""
    run = held.run()
    path = files.write(render_html(run, held.name), f"{files.safe_stem(held.name, 'lookahead-run')}.html")
    return gr.DownloadButton(value=path, visible=True)


# -- live runs -----------------------------------------------------------------------------------------------------
def start_run(prompt, window, ngram, guess, max_new_tokens, pool, session: str, temperature=0.0, top_p=1.0,
              sample_seed=0) -> LiveRun:
    """The session's live run, checked against the public limits (gr.Error otherwise) and registered, which stops
    the session's previous one. Shared by the Run button and the `generate` API endpoint."""
    prompt, config, max_new = limits.check_request(prompt, window, ngram, guess, max_new_tokens, pool)
    sampling = limits.check_sampling(temperature, top_p, sample_seed)
    try:
        lm = MODEL.get()
        live = LiveRun(lm, prompt, config, max_new, sampling=sampling, lock=MODEL.engine_lock)
    except Exception as exc:
        raise gr.Error(f"Could not start the run: {exc}") from None
    limits.check_context(len(live.prompt_ids), lm.max_positions, max_new)
    register(session, live)
    with _ended_lock:
        _ended[session] = live
        while len(_ended) > limits.STATE_SESSIONS:
            _ended.pop(next(iter(_ended)))
    return live


def run_live(prompt, window, ngram, guess, max_new_tokens, pool, temperature, top_p, sample_seed,
             request: gr.Request):
    """Generator of `Opened`: the race streaming in, then the finished run held for download."""
    session = session_of(request)
    live = start_run(prompt, window, ngram, guess, max_new_tokens, pool, session, temperature, top_p, sample_seed)
    try:
        if zerogpu.available():  # one GPU call computes the whole run, then the page plays it back
            run = zerogpu.record_on_gpu(live.prompt, live.config, live.max_new_tokens, live.sampling)
            yield opened(Held.of(LIVE, run), open_message(LIVE, payload(run), 0, notice="Computed on ZeroGPU in one "
                                                          "call; press Play to watch it."), run)
            return
        for msg in live.messages():
            if live.result is None:
                yield Opened(msg, gr.skip(), gr.skip())
            else:
                yield opened(Held.of(LIVE, live.result), msg, live.result)
    except (ValueError, RuntimeError) as exc:
        raise gr.Error(f"The run failed: {exc}") from None
    finally:
        live.stop()
        forget(session, live)


def stop_live(request: gr.Request) -> None:
    """Stop the session's live run at its next step (the engine runs in its own thread, which cancelling the Run
    event does not reach)."""
    stop_session(session_of(request))


def settle_run(request: gr.Request):
    """After the Run event ended, however it ended: a run that Stop cut short is put on screen as it stood, marked
    cancelled, and held for download. A run that finished already did so itself."""
    with _ended_lock:
        live = _ended.pop(session_of(request), None)
    if live is None:  # it never started: say so where it stays, if the model is the reason
        try:
            MODEL.get()
        except Exception as exc:
            return notice(f"No live runs here: {exc} The gallery's runs and saved traces work without the model.")
    if live is None or live.result is not None or not live.steps["parallel"]:
        return Opened(gr.skip(), gr.skip(), gr.skip())
    run = live.partial()
    cut = {lane: getattr(run, lane).__class__(**{**getattr(run, lane).__dict__, "stop_reason": "cancelled"})
           for lane in ("parallel", "baseline")}
    run = RunTrace(**{**run.__dict__, **cut})
    return opened(Held.of(LIVE, run), open_message(LIVE, payload(run), "last", notice="Live run stopped."), run)


def auto_settings():
    """W, N, G and the pool policy with the best predicted tokens per second on this device, and why (with the
    spread over the benchmark prompts). The device's cost curve is measured at most once per process."""
    from lade_core.measure import autoconfig

    try:
        curve = MODEL.cost_curve()
        best = autoconfig.best(autoconfig.load_sweeps(), curve)
    except Exception as exc:
        raise gr.Error(f"Auto needs the cost curve and the sweeps in assets/ and the model: {exc}") from None
    return best["window"], best["ngram"], best["guess"], best["pool"], auto_reason(best)


def auto_reason(best: dict) -> str:
    low, high = best["predicted_speedup_range"]
    verdict = "" if best["predicted_speedup_median"] >= 1 else " No setting is predicted to beat plain decoding here."
    return (f"Auto: W={best['window']}, N={best['ngram']}, G={best['guess']} with the {best['pool']} pool feeds "
            f"{best['mean_tokens_fed']:.1f} tokens a step at {best['step_cost']:.2f}x the cost of a greedy step and is "
            f"predicted to run at {best['predicted_speedup_median']:.2f}x greedy's speed (median over the benchmark "
            f"prompts; {low:.2f}x to {high:.2f}x).{verdict}")


def load_page(request: gr.Request):
    """The page-load handler: what a deep link asks for (a run at a step, one view embedded, a chapter)."""
    query = dict(getattr(request, "query_params", {}) or {})
    link = deeplink.resolve(query, gallery.names())
    embed = {"view": link.view or "outputs"} if link.embed and link.run else None
    hide = link.embed  # embeds show the stage only
    chrome = (gr.Sidebar(visible=not hide), gr.Column(visible=not hide))
    if link.lesson:
        msg = message("open", mode="lesson", chapter=link.lesson, embed={"lesson": True} if link.embed else None,
                      notice=link.notice)
        return (*Opened(msg, gr.skip(), gr.skip()), *chrome)
    if link.run:
        run = gallery.load(link.run)
        step = interesting_step(run) if link.step is None else min(link.step, max(len(run.parallel.steps),
                                                                                     len(run.baseline.steps)) - 1)
        return (*opened(Held(link.run), open_message(link.run, gallery_payload(link.run), step, embed=embed,
                                                     notice=link.notice)), *chrome)
    if link.notice:
        return (*notice(link.notice), *chrome)
    return (*Opened(gr.skip(), gr.skip(), gr.skip()), *chrome)
