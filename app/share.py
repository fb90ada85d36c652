"""Share a run: download its trace, open a saved one, export it as one HTML file, link to it, save pictures of it.

The panel (`panel`) sits under the run status; `wire` connects it. Trace files are `RunTrace.to_json()`; an upload
is size-checked before it is read in full and loaded with the strict `parse_run` (never executed or unpickled), and
a bad file leaves the page as it was with a short notice. Deep links (`deeplink`) are read once per page load, where
`embed=1` also hides the intro, the controls and this panel for a compact lecture view. Pictures are made in the
browser (`slides.js`): the HTML views as PNG, the Plotly charts as SVG. Files written here go to the system temp
folder under a name derived from their content, so the same run is written once.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from functools import lru_cache
from pathlib import Path

import gradio as gr

from lade_core import RunTrace, TraceError, parse_run
from lade_core.export_html import render_html
from lade_core.trace import MAX_TRACE_BYTES

from . import deeplink, events, replay
from .examples import load_recorded, recorded_files
from .model import MODEL

SLIDES_JS = Path(__file__).with_name("slides.js")
HEAD = (f"<script>{SLIDES_JS.read_text(encoding='utf-8')}</script>"
        "<style>#embed-html pre.snippet { white-space: pre-wrap; word-break: break-all; font-size: 12px;"
        " margin: 2px 0 8px; padding: 6px 8px; background: #f8fafc; border: 1px solid #e2e8f0; border-radius: 6px;"
        " user-select: all; }"
        " #share-notice { color: #b45309; }</style>")
# Views a picture can be saved of: (label, elem_id); the charts come out as SVG, the rest as PNG.
PICTURES = [("Outputs side by side (PNG)", "outputs-row"), ("Counter (PNG)", "counter"),
            ("Jacobi window (PNG)", "window-view"), ("Trajectories (PNG)", "trajectory-view"),
            ("n-gram pool (PNG)", "pool-view"), ("Verification branch (PNG)", "verify-view"),
            ("Tokens vs step chart (SVG)", "progress-plot"), ("Pool size chart (SVG)", "pool-plot"),
            ("Attention mask (SVG)", "mask-view")]
SAVE_PICTURE = "(view) => { window.ladeSlides && window.ladeSlides.save(view); return []; }"
# Keeps the step in the Embed panel's snippets in step with the slider, in the browser.
EMBED_STEP = """(k) => {
  for (const el of document.querySelectorAll("#embed-html pre.snippet"))
    el.textContent = el.textContent.replace(/([?&]step=)\\d+/g, "$1" + Math.round(k));
  return [];
}"""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@lru_cache(maxsize=8)
def _shipped(name: str) -> RunTrace:
    return load_recorded(name)


def shipped_name(run: RunTrace) -> str | None:
    """The stem of the shipped run `run` is (by title and content), None for any other run."""
    if run.title in recorded_files() and _shipped(run.title) == run:
        return run.title
    return None


def file_stem(run: RunTrace) -> str:
    cfg = run.config
    stem = _UNSAFE.sub("-", run.title or "").strip("-.")[:60]
    return stem if stem and stem != "live" else f"lookahead-run-W{cfg.window}N{cfg.ngram}G{cfg.guess}"


def _write(text: str, name: str) -> str:
    """`text` saved as `name` in a temp folder named after its content; the path."""
    data = text.encode("utf-8")
    folder = Path(tempfile.gettempdir()) / "lade-share" / hashlib.sha256(data).hexdigest()[:20]
    path = folder / name
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{name}.{os.getpid()}.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return str(path)


def trace_file(run: RunTrace) -> str:
    return _write(run.to_json(), f"{file_stem(run)}.json")


def read_trace(path) -> RunTrace:
    """The run in the uploaded file at `path`; TraceError if it is too big or not a valid trace."""
    size = os.path.getsize(path)
    if size > MAX_TRACE_BYTES:
        limit = MAX_TRACE_BYTES / 2**20
        raise TraceError(f"the file is {size / 2**20:.1f} MiB; a trace may be at most {limit:.0f} MiB")
    with open(path, "rb") as f:
        return parse_run(f.read(MAX_TRACE_BYTES + 1))


def meta_html(run: RunTrace) -> str:
    """Hidden marker the browser names picture files after."""
    return f'<span data-run="{file_stem(run)}"></span>'


def _shared(run: RunTrace, k: int, origin: str) -> tuple:
    """(embed, meta, download) for the run now on the page."""
    return (deeplink.embed_html(origin or "", shipped_name(run), k), meta_html(run),
            gr.DownloadButton(value=trace_file(run)))


def _notice(text: str = ""):
    return gr.Markdown(value=text, visible=bool(text))


def panel(run: RunTrace) -> dict:
    """The Share panel for the page's first run; its parts by name."""
    s = {"origin": gr.State("")}
    with gr.Column(elem_id="share-panel") as s["column"]:
        with gr.Row(equal_height=True):
            s["download"] = gr.DownloadButton("Download trace (JSON)", value=trace_file(run), elem_id="download-trace",
                                              size="sm")
            s["upload"] = gr.UploadButton("Open a saved run (.json)", file_types=[".json"], type="filepath",
                                          elem_id="open-run", size="sm")
            s["export"] = gr.Button("Export HTML replay", elem_id="export-html", size="sm")
        s["exported"] = gr.File(visible=False, label="HTML replay: one file, opens offline", elem_id="export-file",
                                height=60)
        s["notice"] = gr.Markdown(visible=False, elem_id="share-notice")
        with gr.Accordion("Embed this run: link, iframe, web component", open=False, elem_id="embed-panel") as acc:
            s["embed_panel"] = acc
            s["embed"] = gr.HTML(deeplink.embed_html("", shipped_name(run), replay.interesting_step(run)),
                                 elem_id="embed-html")
        with gr.Accordion("Pictures for slides", open=False, elem_id="pictures-panel"):
            with gr.Row(equal_height=True):
                s["view"] = gr.Dropdown(PICTURES, value="window-view", label="View at the current step",
                                        elem_id="picture-view", scale=3)
                s["save"] = gr.Button("Save picture", elem_id="save-picture", scale=1)
            gr.Markdown("Made in your browser; nothing is uploaded. The charts' camera button saves SVG too.",
                        elem_classes=["muted"])
    s["meta"] = gr.HTML(meta_html(run), visible="hidden", elem_id="share-meta")
    return s


def wire(demo, s: dict, run_outputs: list, slider, state, recorded, page_parts: list, run_event, settled,
         default: str) -> None:
    """Connect the panel. `run_outputs` are the outputs of `events.open_run`, in its order; `page_parts` the intro
    and the controls (hidden in embed mode); `run_event` the live run and `settled` the events after which the page
    holds that run as it ended (finished, failed or stopped; one of them runs per live run); `default` the run a
    bad deep link opens."""
    quiet = dict(show_progress="hidden")
    shared = [s["embed"], s["meta"], s["download"]]
    s["upload"].upload(open_upload, [s["upload"], s["origin"]], [*run_outputs, s["notice"], *shared], **quiet)
    s["export"].click(export, state, [s["exported"], s["notice"]])
    s["save"].click(None, s["view"], None, js=SAVE_PICTURE)
    slider.change(None, slider, None, js=EMBED_STEP)
    s["embed_panel"].expand(current, [state, slider, s["origin"]], shared, **quiet)
    recorded.input(opened_recorded, [recorded, s["origin"]], [s["notice"], *shared], **quiet)
    for event in settled:
        event.then(current, [state, slider, s["origin"]], shared, **quiet)
    run_event.failure(failed_run_notice, None, s["notice"], **quiet)
    demo.load(link_opener(default), None, [s["origin"], *run_outputs, recorded, s["notice"], *shared, s["column"],
                                           *page_parts], **quiet)


def current(run: RunTrace, k, origin: str) -> tuple:
    return _shared(run, replay.clamp(run, k), origin)


def failed_run_notice():
    """After a live run failed, was refused or was stopped: if the model cannot be loaded here, a notice that stays
    (the error says what to install)."""
    try:
        MODEL.get()
    except Exception as exc:
        return _notice(f"⚠️ No live runs here: {exc} The recorded runs and saved traces work without the model.")
    return gr.skip()


def opened_recorded(name: str, origin: str) -> tuple:
    run = _shipped(name)
    return (_notice(), *_shared(run, replay.interesting_step(run), origin))


def export(run: RunTrace):
    """The run as one self-contained HTML replay, offered for download."""
    return gr.File(value=_write(render_html(run), f"{file_stem(run)}.html"), visible=True), _notice()


def open_upload(path, origin: str) -> tuple:
    """(*open_run outputs, notice, embed, meta, download) for an uploaded trace; the page unchanged if it is bad."""
    skip_all = [gr.skip()] * (events.OPEN_RUN_OUTPUTS + 4)
    if not path:
        return tuple(skip_all)
    try:
        run = read_trace(path)
    except (TraceError, OSError) as exc:
        message = f"Could not open {Path(path).name}: {exc}"
        gr.Warning(message)
        return (*skip_all[:-4], _notice(f"⚠️ {message}"), gr.skip(), gr.skip(), gr.skip())
    k = replay.interesting_step(run)
    opened = events.open_run(run, k, f"Saved run **{run.title or Path(path).name}** (opened from a file)")
    return (*opened, _notice(), *_shared(run, k, origin))


def link_opener(default: str):
    """The page-load handler: opens the run and step of a deep link (or `default` with a notice if it is bad)."""

    def open_link(request: gr.Request) -> tuple:
        """(origin, *open_run outputs, recorded, notice, embed, meta, download, share panel, *page parts)."""
        query = dict(getattr(request, "query_params", {}) or {})
        origin = deeplink.page_origin(dict(getattr(request, "headers", {}) or {}), str(getattr(request, "url", "")))
        names = list(recorded_files())
        name, step, notice = deeplink.resolve(query, names, default)
        hide = deeplink.wants_embed(query)
        layout = (gr.Column(visible=not hide), gr.Markdown(visible=not hide), gr.Row(visible=not hide))
        if name is None:  # the page as built; only the links need the page's origin
            run = _shipped(default)
            return (origin, *[gr.skip()] * (events.OPEN_RUN_OUTPUTS + 1), _notice(),
                    *_shared(run, replay.interesting_step(run), origin), *layout)
        run = _shipped(name)
        k, step_notice = deeplink.check_step(step, replay.last_step(run), replay.interesting_step(run))
        notice = " ".join(n for n in (notice, step_notice) if n)
        return (origin, *events.open_run(run, k), name, _notice(f"⚠️ {notice}" if notice else ""),
                *_shared(run, k, origin), *layout)

    return open_link
