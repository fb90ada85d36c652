"""Everything the app reads of Gradio beyond its public API, in one place, pinned to the Gradio version it was written
against (`GRADIO`; tests/test_guard.py fails on another version, so an upgrade re-reads these lines first).

Which of Gradio's routes the app answers (`ROUTES`, the guard's allow-list) and what the guard and the expected wait
(`wait.py`) need and Gradio does not offer publicly: the jobs waiting or running in the queue (their event, request,
session, handler and input values), taking a job out of the queue, an event's inputs as its API lists them (state
left out), how Gradio reads a call's body (`PredictBody`: the model its routes use), every event's parameters as
its API would list them (private events too, which Gradio's listing leaves out), the descriptions a `gr.api`
endpoint's listing takes from no public argument (`describe`), and the inline scripts Gradio re-creates from a
component's `head` (`head_scripts`, which the page's policy allows by hash).
"""

from __future__ import annotations

import re

import gradio
from gradio.blocks import _get_api_parameter_name
from gradio.data_classes import PredictBody  # noqa: F401 (re-exported: Gradio's body model)
from gradio.utils import get_function_params

GRADIO = "6.31.0"
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)  # the form assets.head writes
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


def events(blocks) -> dict:
    """Index -> event (Gradio's `BlockFunction`) of every event the app declares, as the page and its API call them."""
    return dict(getattr(blocks, "fns", {}) or {})


def api_name(fn) -> str | None:
    """The name an event answers to in the API (None for an event only the page calls, by its index)."""
    return fn.api_name


def group(fn) -> str | None:
    """The concurrency group an event runs in (`concurrency_id=` where it was declared)."""
    return getattr(fn, "concurrency_id", None)


def in_queue(fn) -> bool:
    """Whether an event runs in Gradio's queue (`queue=False` where it was declared answers at once)."""
    return getattr(fn, "queue", True) is not False


def inputs(fn) -> list:
    """Every input of an event, state included, in the order its call's `data` carries them."""
    return list(fn.inputs)


def event_of(job):
    """The event a queued job calls."""
    return job.fn


def request_of(job):
    """The request a queued job came with (Gradio's `Request`, its client and headers as the route saw them)."""
    return job.request


def queued(blocks) -> dict:
    """Event id -> job, for the jobs waiting or running in the queue (each has `.fn` and `.request`)."""
    queue = getattr(blocks, "_queue", None)
    return dict(getattr(queue, "event_ids_to_events", {}) or {}) if queue is not None else {}


def session_of(job) -> str | None:
    """The session a queued job belongs to (a job posted to `call/<api>` is a session of its own)."""
    return getattr(job, "session_hash", None)


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


def is_private(fn) -> bool:
    """Whether an event is left out of the API (`api_visibility="private"`): only the page calls it, by its index."""
    return getattr(fn, "api_visibility", "public") == "private"


def parameters(fn) -> list[dict]:
    """An event's API parameters as Gradio's listing (`get_api_info`) writes them, private events included: name,
    label, component and JSON type; a component's `minimum` and `maximum` (a slider's, a number's, which Gradio checks
    itself by raising an error that logs a traceback) added to its type."""
    names = get_function_params(fn.fn) if fn.fn else []
    out = []
    for index, block in enumerate(fn.inputs):
        if getattr(block, "skip_api", False):
            continue
        kind = dict(block.api_info_as_input() if hasattr(block, "api_info_as_input") else block.api_info())
        for bound in ("minimum", "maximum"):
            value = getattr(block, bound, None)
            if isinstance(value, int | float) and not isinstance(value, bool):
                kind.setdefault(bound, value)
        out.append(
            {
                "parameter_name": _get_api_parameter_name(fn, names, index),
                "label": getattr(block, "label", None),
                "component": type(block).__name__,
                "type": kind,
            }
        )
    return out


def describe(blocks, api_name: str, described: dict[str, str], returns: dict, label: str) -> None:
    """Give a `gr.api` endpoint's listing what `gr.api` takes only from type hints: each parameter's description
    (`described`, by name; Gradio shows its component's `additional_description`) and label, and its return value's
    JSON Schema (`returns`, its `description` shown) and label. Before launch: the listing is read from the config."""
    fn = next(f for f in blocks.fns.values() if f.api_name == api_name)
    names = [name for name, *_ in get_function_params(fn.fn)]
    if sorted(names) != sorted(described):
        raise ValueError(f"{api_name}: described {sorted(described)}, but its parameters are {names}")
    for name, block in zip(names, fn.inputs, strict=True):
        block._api_info = {**block._api_info, "additional_description": described[name]}
        block.label = name
    (out,) = fn.outputs
    out._api_info, out.label = returns, label


def head_scripts(blocks) -> tuple[str, ...]:
    """The text of every inline script in a component's `head` (`gr.HTML(head=...)`), as Gradio's page re-creates
    them: the parsed element's text, inserted by the page's own script (app/page_policy.py allows them by hash)."""
    heads = [getattr(block, "head", None) for block in (getattr(blocks, "blocks", None) or {}).values()]
    return tuple(m.group(1) for head in heads if isinstance(head, str) for m in _INLINE_SCRIPT.finditer(head))


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
