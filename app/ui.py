"""The page: controls, playback bar and the five synchronised views, wired to `events`. `build_demo()` returns it.

The page opens on a recorded run (assets/runs/), rendered when the page is built, so the first view needs no model
and no event. The live-run settings start at Auto's choice for this device (from the shipped cost curve and
sweeps). Stable elem_ids (tests rely on them): prompt, run, stop, window-w, ngram-n, guess-g, max-new-tokens,
temperature, top-p, sample-seed, step-slider, play, step-next, step-prev, speed, recorded-run, run-status, and the
views in `replay.VIEW_IDS`; intro, controls and outputs-row (hidden or pictured by `share`), whose panel has its own
ids (see share.py).
"""

from __future__ import annotations

from pathlib import Path

import gradio as gr

from . import api, events, limits, replay, share
from .examples import example_prompts, load_recorded, recorded_files
from .model import MODEL, device_kind
from .views import NOTES, cost_curve_figure, honest_note_md, load_measurement, sweep_figure, tokens_per_forward_md

STYLE = Path(__file__).with_name("style.css")
LAUNCH_OPTIONS = {"css_paths": [STYLE], "theme": gr.themes.Soft(), "state_session_capacity": limits.STATE_SESSIONS,
                  "head": share.HEAD}
DEFAULT_RUN = "code-fib-W7N4G7"
# Moves the step line (shapes[0]) of the small charts in the browser, so playback need not re-send them.
MOVE_STEP_LINES = """(k) => {
  for (const id of ["progress-plot", "pool-plot"]) {
    const div = document.querySelector("#" + id + " .js-plotly-plot");
    if (div && window.Plotly && div.layout && div.layout.shapes && div.layout.shapes.length)
      window.Plotly.relayout(div, {"shapes[0].x0": k, "shapes[0].x1": k});
  }
  return [];
}"""
INTRO = ("# Lookahead Decoding Explorer\nLookahead decoding (Fu, Bailis, Stoica, Zhang, ICML 2024) makes a language "
         "model emit several tokens per forward pass **without changing its greedy output**: a Jacobi *lookahead "
         "branch* guesses future tokens, an *n-gram pool* remembers them, and a *verification branch* checks them in "
         "the same pass. Below: a real small model (SmolLM2-135M-Instruct), every step recorded. Press ▶ Play or step "
         "through; change W, N, G and press Run for a live run.")


def _explain(key: str) -> None:
    with gr.Column(scale=1, min_width=220):
        gr.Markdown(f"**What am I looking at?** {NOTES[key]}", elem_classes=["explain"])


def _live_defaults(run) -> tuple[int, int, int, bool, str]:
    """W, N, G, pool seeding and the note beside them for the next live run: Auto's choice for this device from the
    shipped measurements, or the opening run's settings where this device has no saved cost curve."""
    from lade_core.autoconfig import predict_shipped
    from lade_core.loading import DEFAULT_MODEL

    best = predict_shipped(device_kind(), MODEL.name or DEFAULT_MODEL)
    if best is None:
        cfg = run.config
        W, N, G = cfg.window, cfg.ngram, cfg.guess
        return W, N, G, cfg.pool_from_prompt, tokens_per_forward_md(W, N, G)
    W, N, G = best["window"], best["ngram"], best["guess"]
    why = events.auto_reason(best) + " Opening a recorded run sets its own settings."
    return W, N, G, best["pool_from_prompt"], tokens_per_forward_md(W, N, G) + why


def _controls(run) -> dict:
    W, N, G, seeded, tpf = _live_defaults(run)
    c = {}
    with gr.Row(elem_id="controls") as c["row"]:
        with gr.Column(scale=3):
            c["prompt"] = gr.Textbox(value=run.prompt, label=f"Prompt (at most {limits.MAX_PROMPT_CHARS:,} characters)",
                                     lines=3, elem_id="prompt")
            prompts = example_prompts()
            gr.Examples([[p["prompt"]] for p in prompts], inputs=[c["prompt"]], label="Example prompts (code and chat)",
                        example_labels=[p["id"] for p in prompts], examples_per_page=8)
            names = list(recorded_files())
            c["recorded"] = gr.Dropdown(names, value=DEFAULT_RUN, label="Recorded runs (open instantly, no model needed)",
                                        elem_id="recorded-run")
            c["share"] = share.panel(run)
        with gr.Column(scale=2):
            c["W"] = gr.Slider(*limits.WINDOW, value=W, step=1, label="W: window width (how far ahead to guess)",
                               elem_id="window-w")
            c["N"] = gr.Slider(*limits.NGRAM, value=N, step=1, label="N: n-gram size (window has N-1 levels)",
                               elem_id="ngram-n")
            c["G"] = gr.Slider(*limits.GUESS, value=G, step=1, label="G: candidates verified per step",
                               elem_id="guess-g")
            c["tpf"] = gr.Markdown(tpf, elem_id="tokens-per-forward")
            c.update(_sampling_controls(run))
            c["max_new"] = gr.Slider(*limits.MAX_NEW_TOKENS, value=64, step=1, label="Max new tokens",
                                     elem_id="max-new-tokens")
            c["seed"] = gr.Checkbox(value=seeded, label="Seed the pool with the prompt's n-grams",
                                    elem_id="pool-from-prompt")
            with gr.Row():
                c["auto"] = gr.Button("Auto W, N, G", elem_id="auto", scale=0, min_width=120)
                c["run"] = gr.Button("Run", variant="primary", elem_id="run")
                c["stop"] = gr.Button("Stop", elem_id="stop")
            gr.Markdown(limits.limits_md(), elem_id="limits", elem_classes=["explain"])
    return c


def _sampling_controls(run) -> dict:
    """Temperature, top-p and seed: temperature 0 is greedy decoding, anything above samples (both methods)."""
    s = run.sampling
    with gr.Row():
        t = gr.Slider(*limits.TEMPERATURE, value=s.temperature, step=0.05, elem_id="temperature",
                      label="Temperature (0 = greedy; above 0 both methods sample)")
        p = gr.Slider(*limits.TOP_P, value=s.top_p, step=0.05, label="Top-p (1 = whole distribution)", elem_id="top-p")
        seed = gr.Number(value=min(s.seed, limits.SAMPLE_SEED[1]), precision=0, minimum=limits.SAMPLE_SEED[0],
                         maximum=limits.SAMPLE_SEED[1], label="Sampling seed", elem_id="sample-seed", min_width=110)
    return {"temperature": t, "top_p": p, "sample_seed": seed}


def _playback(run, k: int) -> dict:
    c = {}
    with gr.Row(equal_height=True):
        c["prev"] = gr.Button("◀ Step", elem_id="step-prev", scale=0, min_width=90)
        c["play"] = gr.Button("▶ Play", elem_id="play", scale=0, min_width=100)
        c["next"] = gr.Button("Step ▶", elem_id="step-next", scale=0, min_width=90)
        c["slider"] = gr.Slider(0, max(replay.last_step(run), 1), value=k, step=1, label="Step (shared clock)",
                                elem_id="step-slider", scale=5)
        c["speed"] = gr.Slider(replay.MIN_SPEED, replay.MAX_SPEED, value=replay.DEFAULT_SPEED, step=1,
                               label="Speed (steps/s)", elem_id="speed", scale=2)
    return c


def _views(run, k: int) -> list:
    """The view outputs, in the order of replay.VIEW_IDS."""
    values = dict(zip(replay.VIEW_IDS, replay.render_step(run, k)))
    v = {}
    gr.Markdown("## 1. Side by side: same text, fewer steps")
    with gr.Row():
        with gr.Column(scale=3):
            with gr.Row(elem_id="outputs-row"):
                v["ar-output"] = gr.HTML(values["ar-output"], elem_id="ar-output")
                v["la-output"] = gr.HTML(values["la-output"], elem_id="la-output")
            v["counter"] = gr.HTML(values["counter"], elem_id="counter")
            v["progress-plot"] = gr.Plot(values["progress-plot"], elem_id="progress-plot", show_label=False)
        _explain("outputs")
    gr.Markdown("## 2. The Jacobi window (lookahead branch)")
    with gr.Row():
        with gr.Column(scale=3):
            v["window-view"] = gr.HTML(values["window-view"], elem_id="window-view")
            v["trajectory-view"] = gr.HTML(values["trajectory-view"], elem_id="trajectory-view")
        _explain("window")
    gr.Markdown("## 3. The n-gram pool")
    with gr.Row():
        with gr.Column(scale=3):
            v["pool-view"] = gr.HTML(values["pool-view"], elem_id="pool-view")
            v["pool-plot"] = gr.Plot(values["pool-plot"], elem_id="pool-plot", show_label=False)
        _explain("pool")
    gr.Markdown("## 4. Verification branch")
    with gr.Row():
        with gr.Column(scale=3):
            v["verify-view"] = gr.HTML(values["verify-view"], elem_id="verify-view")
        _explain("verify")
    gr.Markdown("## 5. Attention mask of the step")
    with gr.Row():
        with gr.Column(scale=3):
            v["mask-view"] = gr.Plot(values["mask-view"], elem_id="mask-view", show_label=False)
        _explain("mask")
    gr.Markdown("## 6. Where the speed comes from")
    with gr.Row():
        with gr.Column(scale=3), gr.Row():
            gr.Plot(cost_curve_figure(load_measurement(f"costcurve-{device_kind()}")), elem_id="cost-curve",
                    show_label=False)
            gr.Plot(sweep_figure(load_measurement("sweep"), load_measurement("sweep-seeded")), elem_id="sweep-plot",
                    show_label=False)
        _explain("scaling")
    return [v[i] for i in replay.VIEW_IDS]


def build_demo(model: str | None = None, preload: bool = True) -> gr.Blocks:
    """The app; `model` is a hub id or local folder for live runs (None = the embedded default)."""
    MODEL.configure(model)
    if preload:
        MODEL.preload()
    run = load_recorded(DEFAULT_RUN)
    k = replay.interesting_step(run)
    with gr.Blocks(title="Lookahead Decoding Explorer") as demo:
        state = gr.State(run)
        playing = gr.State(False)
        intro = gr.Markdown(INTRO, elem_id="intro")
        c = _controls(run)
        status = gr.Markdown(events.describe(run), elem_id="run-status")
        p = _playback(run, k)
        timer = gr.Timer(replay.tick_seconds(replay.DEFAULT_SPEED), active=False)
        views = _views(run, k)
        note = gr.Markdown(honest_note_md(run), elem_id="honest-note")
        run_event, settled = _wire(c, p, views, state, playing, timer, status, note)
        opened = [state, p["slider"], c["prompt"], c["W"], c["N"], c["G"], c["max_new"], c["seed"], *_sampling(c),
                  note, status, playing, timer, p["play"], *views]
        share.wire(demo, c["share"], opened, p["slider"], state, c["recorded"], [intro, c["row"]], run_event, settled,
                   DEFAULT_RUN)
    return demo


def _sampling(c) -> list:
    return [c["temperature"], c["top_p"], c["sample_seed"]]


def _wire(c, p, views, state, playing, timer, status, note):
    """Connect controls, playback and views to `events`; returns the live run's event and the events after which
    the page holds that run as it ended."""
    quiet = dict(show_progress="hidden")
    engine = dict(concurrency_id=limits.ENGINE_GROUP, concurrency_limit=limits.ENGINE_SLOTS)
    stop_play = [playing, timer, p["play"]]
    gr.on([c["W"].change, c["N"].change, c["G"].change], events.tokens_per_forward, [c["W"], c["N"], c["G"]],
          c["tpf"], **quiet)
    c["recorded"].input(events.open_recorded, c["recorded"],
                        [state, p["slider"], c["prompt"], c["W"], c["N"], c["G"], c["max_new"], c["seed"],
                         *_sampling(c), note, status, *stop_play, *views], **quiet)
    p["slider"].change(None, p["slider"], None, js=MOVE_STEP_LINES)
    p["slider"].input(events.show_step, [state, p["slider"]], views, trigger_mode="always_last", **quiet)
    p["next"].click(events.step_by(1), [state, p["slider"]], [p["slider"], *views], **quiet)
    p["prev"].click(events.step_by(-1), [state, p["slider"]], [p["slider"], *views], **quiet)
    p["play"].click(events.toggle_play, [state, p["slider"], playing, p["speed"]], [*stop_play, p["slider"], *views],
                    **quiet)
    timer.tick(events.tick, [state, p["slider"], playing], [p["slider"], *stop_play, *views], **quiet)
    p["speed"].change(events.set_speed, [p["speed"], playing], timer, **quiet)
    run_event = c["run"].click(
        events.run_live, [c["prompt"], c["W"], c["N"], c["G"], c["max_new"], c["seed"], *_sampling(c)],
        [state, p["slider"], status, note, *stop_play, *views], show_progress="minimal", **engine)
    # Stop is two listeners, because Gradio may skip the fn of a listener that also cancels. The cancel comes first:
    # the page runs a click's listeners one after another, and it cancels the Run event whether that is still
    # waiting in the queue or already streaming. The other stops the session's engine at its next step (the engine
    # runs in its own thread, which the cancel does not reach). Neither writes the status: only the Run event does,
    # and `settle_run` once that event has ended. Gradio follows a finished run with `.success`, a failed one and a
    # cancelled one with `.failure` (`.then` would miss a failure and fire twice on a cancel).
    c["stop"].click(None, None, None, cancels=[run_event])
    c["stop"].click(events.stop_live, None, None, **quiet)
    settled = [after(events.settle_run, state, [state, status], **quiet)
               for after in (run_event.success, run_event.failure)]
    c["auto"].click(events.auto_settings, None, [c["W"], c["N"], c["G"], c["seed"], c["tpf"]], **quiet)
    gr.api(api.generate, api_name="generate", **engine)
    return run_event, settled
