"""Everything the app reads of Gradio beyond its public API, in one place, pinned to the Gradio version it was written
against (`GRADIO`; tests/test_guard.py fails on another version, so an upgrade re-reads these lines first).

Which of Gradio's routes the app answers (`ROUTES`, the guard's allow-list) and what the guard and the expected wait
(`wait.py`) need and Gradio does not offer publicly: the jobs waiting or running in the queue (their event, request,
handler and input values), taking a job out of the queue, an event's inputs as its API lists them (state left out), how
Gradio reads a call's body (`PredictBody`, `ComponentServerJSONBody`: the models its routes use), the components' server
functions (what `/component_server` may call), and the folder its uploads go to.
"""

from __future__ import annotations

from pathlib import Path

import gradio
from gradio.data_classes import ComponentServerJSONBody, PredictBody  # noqa: F401 (re-exported: Gradio's body models)
from gradio.utils import get_upload_folder

GRADIO = "6.31.0"
# Gradio's routes this app answers (method, path template as Gradio 6.31 mounts them); the guard answers every other
# path 404 before Gradio reads it. The page's and gradio_client's walk (`python -m scripts.route_walk --open`) used
# exactly these, but the two `call` routes: Gradio's "Use via API" page shows them for curl (a job posted there and
# never read is stopped by the guard). The page's light events (arithmetic, a gallery run, the expected wait) use
# `run/<api>`: `api_open=False` keeps the queued ones off it. Left out on purpose, among others: `upload` (a run file
# is posted to the app's own `runs`), `file=`, `proxy=`, `process_recording` (ffmpeg), `monitoring`, `heartbeat`,
# `queue/status`, `openapi.json`, the login and run-history routes.
ROUTES: tuple[tuple[str, str], ...] = (
    ("GET", "/"),
    ("GET", "/config"),
    ("GET", "/assets/{path:path}"),
    ("GET", "/static/{path:path}"),
    ("GET", "/theme.css"),
    ("GET", "/favicon.ico"),
    ("GET", "/gradio_api/info"),
    ("GET", "/gradio_api/startup-events"),
    ("POST", "/gradio_api/queue/join"),
    ("GET", "/gradio_api/queue/data"),
    ("POST", "/gradio_api/cancel"),
    ("POST", "/gradio_api/reset"),
    ("POST", "/gradio_api/run/{api_name}"),
    ("POST", "/gradio_api/call/{api_name}"),
    ("GET", "/gradio_api/call/{api_name}/{event_id}"),
)


def queued(blocks) -> dict:
    """Event id -> job, for the jobs waiting or running in the queue (each has `.fn` and `.request`)."""
    queue = getattr(blocks, "_queue", None)
    return dict(getattr(queue, "event_ids_to_events", {}) or {}) if queue is not None else {}


def call_of(job) -> tuple[object, list | None]:
    """A queued job's handler (the function its event calls) and the input values its request sent (None until they
    arrive)."""
    body = getattr(job, "data", None)
    return getattr(job.fn, "fn", None), (list(body.data) if body is not None and body.data is not None else None)


async def drop(blocks, event_id: str) -> None:
    """Take a job out of the queue, or stop it at its next step if it runs."""
    await blocks._queue.clean_events(event_id=event_id)


def api_inputs(fn) -> list:
    """An event's inputs as its API lists them: state inputs left out."""
    return [b for b in fn.inputs if not getattr(b, "skip_api", False)]


def server_functions(blocks) -> frozenset[tuple[int, str]]:
    """(component id, function name) of every server function the app's components offer (`@server` methods), as
    Gradio's `/component_server` route finds them: the block by id, the function by name, marked `_is_server_fn`."""
    out = set()
    for block_id, block in (getattr(blocks, "blocks", None) or {}).items():
        for name in dir(type(block)):
            if getattr(getattr(type(block), name, None), "_is_server_fn", False):
                out.add((block_id, name))
    return frozenset(out)


def upload_folder(blocks) -> Path:
    """Where Gradio stores uploads (and its copies of served files)."""
    return Path(getattr(blocks, "GRADIO_CACHE", None) or get_upload_folder())


def mounted(blocks) -> list[tuple[str, str]]:
    """(method, path template) of every HTTP route the launched app mounts, Gradio's and the app's own, as its router
    holds them (FastAPI keeps an included router's routes behind `original_router`)."""

    def walk(routes, prefix=""):
        for route in routes:
            inner = getattr(route, "original_router", None)
            if inner is not None:
                yield from walk(inner.routes, prefix + (getattr(route, "prefix", "") or ""))
            elif getattr(route, "methods", None):
                yield from ((m, prefix + route.path) for m in sorted(route.methods))

    return sorted(set(walk(blocks.app.routes)))


def version() -> str:
    return gradio.__version__
