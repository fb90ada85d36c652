"""Event handlers of the app: plain functions from the inputs Gradio passes to the updates it applies.

Per-user state is the current `RunTrace` (a gr.State), the step (the step slider) and whether playback runs (a
gr.State bool driving a gr.Timer). Each handler returns the views of the step it lands on, from `replay.render_step`.
"""

from __future__ import annotations

from dataclasses import replace

import gradio as gr

from lade_core import RunTrace

from . import limits, replay, zerogpu
from .examples import load_recorded
from .live import LiveRun, forget, register, stop_session
from .model import MODEL
from .views import honest_note_md, tokens_per_forward_md
from .views.common import last_step


def start_run(prompt, window, ngram, guess, max_new_tokens, seed_pool, session: str,
              temperature=0.0, top_p=1.0, sample_seed=0) -> LiveRun:
    """The session's live run, checked against the public limits (gr.Error otherwise) and registered, which stops
    the session's previous one. Shared by the Run button and the `generate` API endpoint. Temperature 0 is greedy."""
    prompt, config, max_new = limits.check_request(prompt, window, ngram, guess, max_new_tokens, seed_pool)
    sampling = limits.check_sampling(temperature, top_p, sample_seed)
    try:
        lm = MODEL.get()
        live = LiveRun(lm, prompt, config, max_new, lock=MODEL.engine_lock, sampling=sampling)
    except Exception as exc:
        raise gr.Error(f"Could not start the run: {exc}") from None
    limits.check_context(len(live.prompt_ids), lm.max_positions, config, max_new)
    register(session, live)
    return live


def session_of(request: gr.Request | None) -> str:
    return getattr(request, "session_hash", None) or "anonymous"


def describe(run: RunTrace, live: str = "") -> str:
    cfg = run.config
    what = live or f"Recorded run **{run.title or 'untitled'}**"
    s = run.sampling
    mode = "greedy" if s.greedy else f"sampling at temperature {s.temperature:g}, top-p {s.top_p:g}, seed {s.seed}"
    plain = "greedy" if s.greedy else "autoregressive sampling"
    seeded = ", prompt-seeded pool" if cfg.pool_from_prompt else ""
    return (f"{what}: W={cfg.window}, N={cfg.ngram}, G={cfg.guess}{seeded}, {mode}, "
            f"{run.max_new_tokens} new tokens max, "
            f"{run.model} on {run.device}. Lookahead: {len(run.lookahead.tokens)} tokens in "
            f"{len(run.lookahead.steps)} steps; {plain}: {len(run.greedy.tokens)} tokens in {len(run.greedy.steps)} "
            f"steps.")


def _slider(run: RunTrace, k: int):
    return gr.Slider(minimum=0, maximum=max(last_step(run), 1), value=k, step=1)


def _stopped():
    """Updates of (playing, timer, play button) that stop playback."""
    return False, gr.Timer(active=False), gr.Button(value="▶ Play")


def auto_settings():
    """W, N, G and pool seeding with the best predicted tokens per second on this device (cost curve x sweeps),
    and the reason."""
    from lade_core.autoconfig import predict

    try:
        best = predict(MODEL.get())
    except Exception as exc:
        raise gr.Error(f"Auto needs the cost curve and the sweep in assets/ and the model: {exc}") from None
    W, N, G = best["window"], best["ngram"], best["guess"]
    return W, N, G, best["pool_from_prompt"], tokens_per_forward_md(W, N, G) + auto_reason(best)


def auto_reason(best: dict) -> str:
    """Why Auto chose `best` (a ranked sweep point), in one sentence for the settings panel."""
    seeded = " with a prompt-seeded pool" if best["pool_from_prompt"] else ""
    return (f" Auto: on this device W={best['window']}, N={best['ngram']}, G={best['guess']}{seeded} predicts "
            f"{best['compression']:.2f} tokens per step at {best['step_cost']:.2f}x the cost of a greedy step, i.e. "
            f"**{best['predicted_speedup']:.2f}x** greedy's speed"
            f"{'' if best['predicted_speedup'] >= 1 else ' (no setting beats plain decoding on this device)'}.")


def tokens_per_forward(window, ngram, guess) -> str:
    return tokens_per_forward_md(int(window), int(ngram), int(guess))


OPEN_RUN_OUTPUTS = 16 + len(replay.VIEW_IDS)


def open_run(run: RunTrace, k: int, what: str = "") -> tuple:
    """(run, slider, prompt, W, N, G, max new, seed, temperature, top-p, sampling seed, note, status, playing, timer,
    play, *views) at step k: the controls take the run's settings, so Run repeats it."""
    cfg, s = run.config, run.sampling
    return (run, _slider(run, k), run.prompt, cfg.window, cfg.ngram, cfg.guess, run.max_new_tokens,
            cfg.pool_from_prompt, s.temperature, s.top_p, min(s.seed, limits.SAMPLE_SEED[1]), honest_note_md(run),
            describe(run, what), *_stopped(), *replay.render_step(run, k))


def open_recorded(name: str) -> tuple:
    """A shipped run at its most interesting step: the outputs of `open_run`."""
    run = load_recorded(name)
    return open_run(run, replay.interesting_step(run))


def show_step(run: RunTrace, k) -> tuple:
    return replay.render_step(run, replay.clamp(run, k))


def step_by(delta: int):
    def handler(run: RunTrace, k) -> tuple:
        k = replay.clamp(run, int(k or 0) + delta)
        return (k, *replay.render_step(run, k))
    return handler


def toggle_play(run: RunTrace, k, playing: bool, speed) -> tuple:
    """(playing, timer, play button, slider, *views): start (from 0 if at the end) or pause."""
    k = replay.clamp(run, k)
    if playing:
        return (*_stopped(), k, *replay.render_step(run, k))
    if replay.at_end(run, k):
        k = 0
    timer = gr.Timer(value=replay.tick_seconds(speed), active=True)
    return (True, timer, gr.Button(value="⏸ Pause"), k, *replay.render_step(run, k))


def tick(run: RunTrace, k, playing: bool) -> tuple:
    """(slider, playing, timer, play button, *views): one step forward; stop at the end."""
    if not playing:
        return (gr.skip(), *_stopped(), *[gr.skip()] * len(replay.VIEW_IDS))
    shown, k = replay.clamp(run, k), replay.next_step(run, k)
    state = _stopped() if replay.at_end(run, k) else (True, gr.skip(), gr.skip())
    stale = replay.stale_views(run, k, shown)
    fresh = [gr.skip() if name in stale else view for name, view in zip(replay.VIEW_IDS, _render_some(run, k, stale))]
    return (k, *state, *fresh)


def _render_some(run: RunTrace, k: int, skip: set[str]) -> tuple:
    return replay.render_step(run, k, skip)


def set_speed(speed, playing: bool):
    return gr.Timer(value=replay.tick_seconds(speed), active=bool(playing))


def _played_back(run: RunTrace) -> tuple:
    """(run, slider, status, note, playing, timer, play, *views): a finished run, playing from step 0."""
    timer = gr.Timer(value=replay.tick_seconds(replay.DEFAULT_SPEED), active=True)
    return (run, _slider(run, 0), describe(run, "Run computed on ZeroGPU, playing back"), honest_note_md(run), True,
            timer, gr.Button(value="⏸ Pause"), *replay.render_step(run, 0))


def run_live(prompt, window, ngram, guess, max_new_tokens, seed_pool, request: gr.Request,
             temperature=0.0, top_p=1.0, sample_seed=0):
    """Generator: (run, slider, status, note, playing, timer, play, *views) for each streamed snapshot. Gradio puts
    the request where its annotation is, so the sampling inputs (after it, with greedy defaults) come last."""
    session = session_of(request)
    live = start_run(prompt, window, ngram, guess, max_new_tokens, seed_pool, session, temperature, top_p, sample_seed)
    try:
        if zerogpu.available():  # one GPU call computes the whole run, then the page plays it back
            yield _played_back(zerogpu.record_on_gpu(live.prompt, live.config, live.max_new_tokens, live.sampling))
            return
        for run, k, done in live.snapshots():
            phase = "greedy" if run.greedy.steps else "lookahead"
            stopped = "cancelled" in (run.lookahead.stop_reason, run.greedy.stop_reason)
            status = describe(run, f"Live run, {phase} step {k}" if not done else
                              "Live run stopped" if stopped else "Live run finished")
            note = honest_note_md(run) if done else gr.skip()
            yield (run, _slider(run, k), status, note, *_stopped(), *replay.render_step(run, k))
    except (ValueError, RuntimeError) as exc:
        raise gr.Error(f"The run failed: {exc}") from None
    finally:
        live.stop()
        forget(session, live)


def stop_live(request: gr.Request) -> None:
    """Stop the session's live run at its next step. The engine runs in its own thread, which cancelling the page's
    Run event does not reach; this does, whether or not the event is still streaming."""
    stop_session(session_of(request))


def settle_run(run: RunTrace) -> tuple:
    """After the Run event ends, however it ended. If Stop cancelled it, or it failed, before its last update reached
    the page, the page still shows a run marked "running": mark it stopped and say so (what it recorded stays and
    can be scrubbed; a failure also shows its error). A run that finished already said how; then the page is left
    alone."""
    cut = {name: replace(method, stop_reason="cancelled") for name in ("lookahead", "greedy")
           if (method := getattr(run, name)).stop_reason == "running"}
    if not cut:
        return gr.skip(), gr.skip()
    run = replace(run, **cut)
    return run, describe(run, "Live run stopped")
