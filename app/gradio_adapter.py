"""Everything the app reads of Gradio beyond its public API, in one place, pinned to the Gradio version it was written
against (`GRADIO`; tests/test_guard.py fails on another version, so an upgrade re-reads these lines first).

What the guard and the expected wait (`wait.py`) need and Gradio does not offer publicly: the jobs waiting or running
in the queue (their event, request, handler and input values), taking a job out of the queue, an event's inputs as
its API lists them (state left out), how Gradio reads a call's body (`PredictBody`, `ComponentServerJSONBody`: the
models its routes use), the components' server functions (what `/component_server` may call), and the folder its
uploads go to.
"""

from __future__ import annotations

from pathlib import Path

import gradio
from gradio.data_classes import ComponentServerJSONBody, PredictBody  # noqa: F401 (re-exported: Gradio's body models)
from gradio.utils import get_upload_folder

GRADIO = "6.31.0"


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


def version() -> str:
    return gradio.__version__
