"""The page: the stage (the browser's renderer: the lesson, the explorer, the speed lab, the embeds) and the sidebar to
run your own race or open a run, wired to `events`. `build_demo()` returns it.

What a first-time visitor sees is the lesson, drawn from runs shipped in the gallery: no model and no event is needed
for it. Stable elem_ids (tests rely on them): stage (its views keep their own ids, see app/render/views.py), prompt,
run, stop, run-offer (its button race-offer), run-wait, auto, window-w, ngram-n, guess-g, pool-policy,
max-new-tokens, temperature, top-p, sample-seed, tokens-per-forward, gallery-run, open-run, run-files (its links
download-trace, export-html), limits, sidebar.
"""

from __future__ import annotations

import gradio as gr
from pydantic import TypeAdapter

from lade_core import LookaheadConfig, Sampling
from lade_core.config import METHOD_NAMES, POOL_POLICIES
from lade_core.measure.prompts import load_prompts

from . import api, askers, events, gallery, gradio_adapter, guard, limits, stage, wait
from .model import MODEL
from .render import assets
from .render.boot import boot_data, lab_data
from .routes import Buckets

PAGE_CSS = """
/* the browser's own controls and scroll bars in the page's scheme (Lade.theme marks it; Gradio's frame has `dark`) */
html[data-lade-scheme="dark"] { color-scheme: dark; }
body { background: var(--body-background-fill) !important; }
/* an embed is one view or a chapter in a slide: no Gradio chrome, margins or sidebar room around it */
body[data-lade-mode="embed"] footer, body[data-lade-mode="embed"] .sidebar-toggle { display: none !important; }
body[data-lade-mode="embed"] .gradio-container .main { padding: 0 !important; max-width: none !important; }
body[data-lade-mode="embed"] .sidebar-parent { padding-left: 0 !important; padding-right: 0 !important; }
body[data-lade-mode="embed"] #stage, body[data-lade-mode="embed"] #stage .html-container { padding: 0 !important; }
/* Gradio's footer and the theme's quiet labels, dark enough to read (4.5:1 and more) */
footer, footer a, footer button, footer .show-api, footer .built-with, footer .settings { color: #374151 !important; }
.dark footer, .dark footer a, .dark footer button, .dark footer .show-api, .dark footer .built-with,
.dark footer .settings { color: #d1d5db !important; }
/* Gradio's container hides overflow, which makes it the sticky playback bar's scroll box; clip instead. */
.gradio-container { overflow-x: clip !important; overflow-y: visible !important; }
/* the offer under Run (lade-handoff.js): when to try again, and the same race in this browser */
#run-offer .offer-text, #run-offer .offer-cost { margin: 0.25rem 0; color: var(--body-text-color); }
#run-offer .offer-cost { font-size: var(--text-sm); color: var(--body-text-color-subdued); }
#run-offer .offer-button { padding: 0.45rem 0.9rem; border-radius: var(--button-large-radius); font-weight: 600;
  background: var(--button-primary-background-fill); color: var(--button-primary-text-color); border: none; }
#run-offer .offer-button:hover { background: var(--button-primary-background-fill-hover); }
"""
# Gradio's Soft theme, with its quiet label and hint colours darkened to meet WCAG AA contrast (4.5:1), and its
# primary buttons and selected choices (white on indigo 500 is 4.46:1) a shade darker.
THEME = gr.themes.Soft().set(
    button_primary_background_fill="*primary_700",
    button_primary_background_fill_hover="*primary_800",
    button_primary_text_color="white",
    checkbox_label_background_fill_selected="*primary_700",
    checkbox_label_text_color_selected="white",
    checkbox_background_color_selected="*primary_700",
    block_label_text_color="*primary_800",
    block_title_text_color="*primary_800",
    body_text_color_subdued="*neutral_600",
    link_text_color="*secondary_800",
    # in the dark theme (lade-theme.js sets Gradio's own `dark` class): links light enough on its dark blocks (indigo
    # 500 was 3.97:1 on them)
    link_text_color_dark="*secondary_300",
    link_text_color_hover_dark="*secondary_200",
    link_text_color_active_dark="*secondary_200",
    link_text_color_visited_dark="*secondary_300",
)
LAUNCH_OPTIONS = {
    "theme": THEME,
    "css": PAGE_CSS,
    "state_session_capacity": limits.STATE_SESSIONS,
    "max_file_size": limits.UPLOAD_BYTES,
    "max_threads": limits.GRADIO_SLOTS,  # every follower of a run holds one of Gradio's job slots (limits.FOLLOWERS)
    "enable_monitoring": False,  # Gradio's /monitoring: every visitor's calls, to anyone (the guard 404s it too)
}
# js_on_load of the stage: it follows the component's value; Python listens to no event of the page.
RACE_NOTES = {"early-exit": " (the model's first layers draft)"}


def title(name: str) -> str:
    """A name from `METHOD_NAMES` at the start of a label."""
    return name[:1].upper() + name[1:]


MOUNT = "window.Lade.stage.mount(element, props, watch);"
# the sidebar may mount before the page's head scripts have run: the offer waits for its script
OFFER_MOUNT = (
    "const mount = () => window.Lade && window.Lade.handoff ? window.Lade.handoff.mount(element, props, watch) "
    ": setTimeout(mount, 50); mount();"
)
# The run on screen as files; the page points both at the run it shows (lade-stage.js `fileLinks`).
OPEN_FILE = (
    f'<p class="open-file"><button type="button" id="open-run">Open a saved run (.json, ≤ {limits.UPLOAD_MIB} MiB)'
    '</button><input type="file" id="open-run-file" accept=".json,application/json" hidden></p>'
)
RUN_FILES = (
    '<p class="run-files"><a id="download-trace" class="file-link" href="#" download>Download trace (JSON)</a> '
    '<a id="export-html" class="file-link" href="#" download>Export HTML replay</a></p>'
)


def tokens_per_forward(window, ngram, guess) -> str:
    """The cost of one step for the next live run's settings."""
    config = LookaheadConfig(window=int(window), ngram=int(ngram), guess=int(guess))
    W, N, G = config.window, config.ngram, config.guess
    return (
        f"Each step feeds at most 1 + (W+G)(N-1) = 1 + ({W}+{G})·({N}-1) = **{config.tokens_per_forward}** tokens; "
        f"a full match accepts up to N = {config.most_accepted} tokens per step."
    )


def _sidebar() -> dict:
    d, sampled = LookaheadConfig(), Sampling()  # the settings' defaults, declared with the engine's config
    c = {}
    with gr.Sidebar(open=False, elem_id="sidebar", width=420) as c["sidebar"]:  # not in an embed (lade.css)
        gr.Markdown(
            "### Run it yourself\nA live race of lookahead decoding against greedy decoding on this server's "
            "model. The page shows it step by step as it runs."
        )
        c["prompt"] = gr.Textbox(
            value="Give me five practical tips for sleeping better, one sentence each.",
            lines=3,
            label=f"Prompt (at most {limits.MAX_PROMPT_CHARS:,} characters)",
            elem_id="prompt",
        )
        # Run sits with the prompt (it was 1,457 px down, under twelve settings), and says what the race will cost
        with gr.Row():
            c["run"] = gr.Button("Run", variant="primary", elem_id="run")
            c["stop"] = gr.Button("Stop", elem_id="stop")
        # a refusal for want of room, or a long wait for the engine: when to try again, and the same race in this
        # browser instead (app/static/lade-handoff.js draws it from the JSON value `events.offer` sends)
        c["offer"] = gr.HTML(
            askers.NO_OFFER,
            html_template='<div class="lade-offer-host"></div>',
            js_on_load=OFFER_MOUNT,
            elem_id="run-offer",
            padding=False,
            apply_default_css=False,
        )
        # the expected wait (app/wait.py), computed when the sidebar opens, whenever a setting changes, and every
        # wait.REFRESH_S seconds while the sidebar is open (the queue moves while a visitor reads)
        c["wait_timer"] = gr.Timer(wait.REFRESH_S, active=False)
        c["wait"] = gr.Markdown(
            "The lanes take turns on this server's one engine: a race takes about as long as its lanes added "
            "together, after any run ahead of it in the queue.",
            elem_id="run-wait",
        )
        prompts = load_prompts()
        gr.Examples(
            [[p["prompt"]] for p in prompts],
            inputs=[c["prompt"]],
            label="Benchmark prompts (code and chat)",
            example_labels=[p["id"] for p in prompts],
            examples_per_page=8,
        )
        with gr.Group(elem_id="next-run"):
            gr.Markdown(
                "**Settings of the next live run** (the run on screen keeps its own; they are printed above its views)"
            )
            c["W"] = gr.Slider(
                *limits.PUBLIC["window"], value=d.window, step=1, label="W: window width", elem_id="window-w"
            )
            c["N"] = gr.Slider(
                *limits.PUBLIC["ngram"], value=d.ngram, step=1, label="N: n-gram size (N-1 levels)", elem_id="ngram-n"
            )
            c["G"] = gr.Slider(
                *limits.PUBLIC["guess"], value=d.guess, step=1, label="G: candidates per step", elem_id="guess-g"
            )
            c["pool"] = gr.Radio(
                list(POOL_POLICIES),
                value=d.pool,
                label="Pool policy: window only (paper), + text written (output), + prompt (prompt)",
                elem_id="pool-policy",
            )
            c["tpf"] = gr.Markdown(tokens_per_forward(d.window, d.ngram, d.guess), elem_id="tokens-per-forward")
            c["auto_reason"] = gr.Markdown(events.AUTO_WHAT, elem_id="auto-reason")
            c["max_new"] = gr.Slider(
                *limits.MAX_NEW_TOKENS,
                value=limits.NEW_TOKENS,
                step=1,
                label="Max new tokens",
                elem_id="max-new-tokens",
            )
            with gr.Row():
                c["temperature"] = gr.Slider(
                    *limits.PUBLIC_SAMPLING["temperature"],
                    value=sampled.temperature,
                    step=0.05,
                    label="Temperature (0 = greedy)",
                    elem_id="temperature",
                )
                c["top_p"] = gr.Slider(
                    *limits.PUBLIC_SAMPLING["top_p"], value=sampled.top_p, step=0.05, label="Top-p", elem_id="top-p"
                )
            c["seed"] = gr.Number(
                value=sampled.sample_seed,
                precision=0,
                minimum=0,
                maximum=limits.PUBLIC_SAMPLING["sample_seed"][1],
                label="Sampling seed",
                elem_id="sample-seed",
            )
        c["methods"] = gr.CheckboxGroup(
            [(title(METHOD_NAMES[m]) + RACE_NOTES.get(m, ""), m) for m in limits.RACE_METHODS],
            value=["lookahead"],
            label="Methods raced against greedy decoding (1 to 3; the first is drawn step by step)",
            elem_id="race-lanes",
        )
        c["auto"] = gr.Button("Auto W, N, G", elem_id="auto", scale=0, min_width=110)
        gr.Markdown("### Open a run")
        c["gallery"] = gr.Dropdown(
            [(e["title"], e["name"]) for e in gallery.listing()],
            value=None,
            label="Gallery (recorded runs, no model needed)",
            elem_id="gallery-run",
        )
        # A file the visitor chooses is posted to `runs` (app/routes.py) and opened at its address by the page.
        c["upload"] = gr.HTML(OPEN_FILE, elem_id="open-file", padding=False)
        gr.Markdown("### Share the run on screen")
        # Links to the run on screen at its address (`runs/<handle>/...`, app/routes.py); the page keeps them on it.
        c["files"] = gr.HTML(RUN_FILES, elem_id="run-files", padding=False)
        gr.Markdown(limits.limits_text(), elem_id="limits")
    return c


def build_demo(model: str | None = None, preload: bool = True, browser_engine: dict | None = None) -> gr.Blocks:
    """The app; `model` is a hub id or local folder for live runs (None = the embedded default); `browser_engine`:
    the page's `boot.engine` where the app serves the engine's files (`engine_files.served`), for "Race it in your
    browser"."""
    MODEL.configure(model)
    if preload:
        MODEL.preload()
    with gr.Blocks(title="Lookahead Decoding Explorer", delete_cache=(1800, 3600)) as demo:
        c = _sidebar()
        boot = boot_data("server", lab=lab_data(), engine=browser_engine)
        page = gr.HTML(
            stage.lesson(1),
            html_template='<div class="lade-host"></div>',
            js_on_load=MOUNT,
            head=assets.head(boot),
            elem_id="stage",
            apply_default_css=False,
        )
        _wire(demo, c, page)
    return demo


def _wire(demo, c: dict, page) -> None:
    # Every event of the page is private: the page calls it by its index, and the API lists `/generate` alone (a
    # script gets no name for the page's internals; the guard refuses a call that names one).
    quiet = dict(show_progress="hidden", api_visibility="private")
    # The light events (a slider's arithmetic, a gallery run: lookups, no work) answer at once outside the queue. Its
    # bound is for work that waits; a class arriving together must not be told the queue is full when they open a run.
    light = dict(quiet, queue=False)
    # The engine's events share one group. Gradio does not limit it: Run's and /generate's jobs follow the runs in the
    # engine's own queue (app/runqueue.py, where an identical request joins the run waiting or running), so none of
    # them waits in Gradio's queue or takes a place in it (`limits.FOLLOWERS` bounds them).
    engine = dict(concurrency_id=limits.ENGINE_GROUP, concurrency_limit=None)
    shown = [page]  # the stage's value: what to show
    sizes = [c["W"], c["N"], c["G"]]
    gr.on([c["W"].change, c["N"].change, c["G"].change], tokens_per_forward, sizes, c["tpf"], **light)
    c["gallery"].input(events.open_gallery, c["gallery"], shown, **light)
    # a race's settings, in the order of the Run button's inputs (and `/generate`'s parameters)
    keys = ("prompt", "W", "N", "G", "max_new", "pool", "temperature", "top_p", "seed", "methods")
    settings = [c[k] for k in keys]
    run_event = c["run"].click(
        events.run_live,
        settings,
        [page, c["offer"]],
        show_progress="minimal",
        show_progress_on=page,
        api_visibility="private",
        **engine,
    )
    races = (events.run_live, api.generate)  # the handlers whose queued jobs are races the wait can predict

    asks = Buckets(limits.WAIT_RATE, limits.WAIT_S)  # per client, as the run routes' reads

    def expected_wait(prompt, W, N, G, max_new, pool, temperature, top_p, seed, methods, request: gr.Request):
        values = (prompt, W, N, G, max_new, pool, temperature, top_p, seed, methods)
        # the engine's jobs as runs: the followers of one run (its askers) count once, a run that ended not at all
        jobs = events.engine_jobs(gradio_adapter.queued(demo).values(), races)
        return wait.too_often(asks, guard.counted_client(request)) or wait.wait_text(values, jobs, races)

    waits = [c["sidebar"].expand, c["wait_timer"].tick, *(c[k].change for k in keys)]
    gr.on(waits, expected_wait, settings, c["wait"], trigger_mode="always_last", **light)
    c["sidebar"].expand(lambda: gr.Timer(active=True), None, c["wait_timer"], **light)
    c["sidebar"].collapse(lambda: gr.Timer(active=False), None, c["wait_timer"], **light)
    run_event.then(expected_wait, settings, c["wait"], **light)  # the race ended: the queue has moved
    # Stop is two listeners: the cancel first (the page runs a click's listeners in turn; it cancels the Run event
    # whether it waits in the queue or streams), then one that stops the engine at its next step (the engine runs in
    # its own thread, which the cancel does not reach). A run cut short is settled as it stood.
    c["stop"].click(None, None, None, cancels=[run_event], api_visibility="private")
    c["stop"].click(events.stop_live, None, None, **quiet)
    run_event.failure(events.settle_run, None, shown, **quiet)
    c["auto"].click(
        events.auto_settings,
        None,
        [c["W"], c["N"], c["G"], c["pool"], c["auto_reason"]],
        show_progress="minimal",  # it waits its turn behind live runs: the queue's place shows where its answer goes
        show_progress_on=c["auto_reason"],
        api_visibility="private",
        **engine,
    )
    gr.api(api.generate, api_name="generate", api_description=api.DESCRIPTION, **engine)
    returns = {**TypeAdapter(api.Summary).json_schema(), "description": api.Summary.__doc__.replace("\n    ", " ")}
    gradio_adapter.describe(demo, "generate", api.parameters(), returns, "summary")
