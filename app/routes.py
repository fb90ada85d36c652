"""Every run at one address, served beside the Gradio page the way the static site serves it.

    GET runs/<handle>.json               the run's payload (the JSON `runs/<name>.json` holds on the exported site);
                                         a live run answers {"payload": ..., "live": true} while it records
    GET runs/<handle>.json?since={...}   a live run's steps the page lacks: `since` maps each lane to the steps the
                                         page has ({"parallel": 12, "baseline": 30}); {"delta": ...}
    GET runs/<handle>/trace.json         the trace file, as a download
    GET runs/<handle>/replay.html        the run as one standalone HTML page, as a download
    GET runs/<handle>/held.json          whether the server holds the run and how full its store is, for a link's
                                         sentence (app/store.py `RunStore.held`)
    GET runs/<handle>/lab.json           the speed lab's predictions for the run (`payload.run_lab_data`), computed when
                                         the page's lab asks, once per run; 409 while the run still records
    POST runs                            a trace file as the body (its JSON, at most `limits.UPLOAD_BYTES`; the
                                         guard caps the body): kept in the store, answered {"handle": ...} (201)
    GET engine/<file>                    a file of the engine that races in the visitor's browser (the ones
                                         `lade export-site` writes as engine/: app/render/engine_files.py `served`),
                                         where the app was started with it; each client at most
                                         `limits.ENGINE_FILE_BYTES` of them per `ENGINE_FILE_S` seconds; answers 304
                                         to a copy the browser holds

A handle is a gallery run's name, a stored run's content hash (`u-...`) or a live run's unguessable token
(`live-...`): `store.STORE` is the one place a run lives. The page reads all three through this one path (and the
static site and the export through theirs, which answer the same JSON). An unknown or dropped handle answers 404 with
a sentence saying so; a handle that could not be one, 404 without looking; a bad `since`, 400 naming it. Each client
(counted as `guard.client_of` counts it, from the right of X-Forwarded-For by the configured proxy hops) has a token
bucket per kind of request (`limits`): `RUN_READS` payload reads per `RUN_READS_S` seconds, `EXPORTS` trace files
or replays (a replay is a page rendered on the CPU), `POSTS` trace files posted (each parsed, checked and derived on
the CPU); past it, 429 with the seconds to wait. Replays render one at a time, posted files are read one at a time,
each kept in its client's share of the store (`limits.STORE_SHARE`). A posted file is its JSON as the body, never a
form: a multipart or form body is refused (415), so no multipart parser reads it here. A file that cannot be opened
answers 400 with one line saying why.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import threading
import time
from collections import OrderedDict
from pathlib import Path

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.staticfiles import NotModifiedResponse, StaticFiles

from lade_core.schema import SchemaError
from lade_core.trace import MAX_STEPS
from lade_core.tracefile import TraceError, parse_run

from . import limits
from .guard import client_of
from .logs import refusal
from .notfound import not_found
from .render.payload import PayloadTooLarge, as_text, lane_methods, payload, run_lab_data
from .store import STORE, Gone

HANDLE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
FORMS = ("multipart/", "application/x-www-form-urlencoded")


class Turns:
    """Work done one at a time for everyone (reading a posted file, rendering a replay), waited for in turn: each
    client may have one request waiting or at work (a second is refused, 429), and at most `waiting` wait in all (one
    more is refused, 503); either with the seconds to wait (a visitor's 3 KB file waited 26 to 54 s behind three
    addresses posting the largest run)."""

    def __init__(self, what: str, waiting: int = limits.TURNS_WAITING, retry_s: int = limits.TURN_RETRY_S):
        self.what, self.waiting, self.retry_s = what, waiting, retry_s
        self.lock = asyncio.Lock()
        self.queued = 0
        self.clients: set[str] = set()

    def enter(self, client: str | None) -> JSONResponse | None:
        """None if `client` may wait its turn (then `leave` it); else the answer refusing it."""
        if client is not None and client in self.clients:
            status, why = 429, f"You already have one {self.what} waiting or under way on this server"
        elif self.queued >= self.waiting:
            status, why = 503, f"{self.queued} {self.what}s are waiting on this server"
        else:
            self.queued += 1
            if client is not None:
                self.clients.add(client)
            return None
        refusal(f"refused: a {self.what} from {client or 'a client'} ({why})")
        return _error(status, f"{why}; try again in {self.retry_s} s.", **{"Retry-After": str(self.retry_s)})

    def leave(self, client: str | None) -> None:
        self.queued -= 1
        self.clients.discard(client)

    async def once(self, kept: OrderedDict, most_bytes: int, handle: str, client: str | None, work, keep=True):
        """`work()` for `handle` (its bytes, or the answer refusing it), done in turn with every other and kept in
        `kept` (at most `most_bytes` of them, the least recently used out first) unless `keep` is False; a kept
        answer is given at once, without waiting a turn."""
        if handle in kept:
            kept.move_to_end(handle)
            return kept[handle]
        refused = self.enter(client)
        if refused:
            return refused
        try:
            async with self.lock:
                body = kept.get(handle) or await asyncio.to_thread(work)
        finally:
            self.leave(client)
        if keep and isinstance(body, bytes):
            kept[handle] = body
            while sum(len(b) for b in kept.values()) > most_bytes and len(kept) > 1:
                kept.popitem(last=False)
        return body


class Buckets:
    """Token buckets per client: `rate` tokens (requests, or bytes) per `seconds`, refilled continuously."""

    def __init__(self, rate: float, seconds: float):
        self.rate, self.seconds = rate, seconds
        self._tokens: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def wait(self, client: str, now: float | None = None, cost: float = 1) -> float:
        """0 if `client` may go now (`cost` tokens are spent), else the seconds until it may."""
        now = time.monotonic() if now is None else now
        with self._lock:
            tokens, then = self._tokens.pop(client, (float(self.rate), now))
            tokens = min(float(self.rate), tokens + (now - then) * self.rate / self.seconds)
            wait = 0.0 if tokens >= cost else (cost - tokens) * self.seconds / self.rate
            self._tokens[client] = (tokens - cost if wait == 0 else tokens, now)
            while len(self._tokens) > limits.RATE_CLIENTS:
                self._tokens.pop(next(iter(self._tokens)))
        return wait


def parse_since(text: str | None) -> dict[str, int] | None:
    """`since` as lane -> steps held, or ValueError with a sentence saying what is wrong."""
    if text is None:
        return None
    try:
        since = json.loads(text) if len(text) <= 1000 else None
    except ValueError:
        since = None
    ok = (
        isinstance(since, dict)
        and len(since) <= limits.SINCE_LANES
        and all(
            isinstance(k, str) and len(k) <= 20 and type(v) is int and 0 <= v <= MAX_STEPS for k, v in since.items()
        )
    )
    if not ok:
        raise ValueError(
            f"since must map at most {limits.SINCE_LANES} lane names to the steps the page has (whole numbers from "
            f'0 to {MAX_STEPS:,}), as JSON: {{"parallel": 12}}'
        )
    return since


def lab_answer(handle: str) -> bytes | Response:
    """A held run's lab figures as JSON, or the answer saying why there are none: no such run (404), a run still
    recording (409), a run of one step (404: nothing to predict from)."""
    run = STORE.run(handle)
    if run is None:
        return _gone(handle)
    if any(m.stop_reason == "running" for m in lane_methods(run).values()):
        return _error(409, "This run is still recording; its lab figures come once it has ended.")
    figures = run_lab_data(run)
    if figures is None:
        return _error(404, "This run has one step: the lab has nothing to predict from.")
    return as_text(figures).encode("utf-8")


def keep_file(data: bytes, owner: str | None = None) -> str:
    """A posted trace file, validated whole and within the public limits, kept in the store (derived as it enters)
    in `owner`'s share: its handle. TraceError, SchemaError, PayloadTooLarge or ValueError saying why it cannot be
    opened."""
    run = parse_run(data, limits.UPLOAD_BYTES)
    limits.check_trace(run)
    return STORE.add_run(run, payload(run), owner)


def _error(status: int, message: str, **headers) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _gone(handle: str) -> JSONResponse:
    return _error(
        404,
        f"No run {handle!r} is held by this server (it may have been dropped to keep memory bounded): open it again.",
    )


EXCEPTION_HANDLERS = {HTTPException: not_found}  # the app's keyword: FastAPI(exception_handlers=...)


def routes(
    trust_proxy: int = 0, per_client: int = limits.PER_CLIENT, engine: dict[str, Path] | None = None
) -> list[Route]:
    """The routes, counting clients behind `trust_proxy` proxy hops; `per_client` 0 lifts the per-client rates, as
    it lifts the guard's per-client caps (`--per-client 0`: a private server, or tests whose clients share one
    address); `engine`: the browser engine's files by name (`engine_files.served`), served at engine/<name>."""
    reads, exports = (
        Buckets(limits.RUN_READS, limits.RUN_READS_S),
        Buckets(limits.EXPORTS, limits.EXPORTS_S),
    )  # read when the app is made
    uploads, engine_reads = (
        Buckets(limits.POSTS, limits.POSTS_S),
        Buckets(limits.ENGINE_FILE_BYTES, limits.ENGINE_FILE_S),
    )
    conditional = StaticFiles(directory=".", check_dir=False)  # only its reading of If-None-Match / If-Modified-Since
    rendering, reading, figuring = Turns("replay"), Turns("file to read"), Turns("run's lab figures")
    kept: OrderedDict[tuple[str | None, str], str] = OrderedDict()  # (client, sha256 of a file it posted) -> handle
    replays: OrderedDict[str, bytes] = OrderedDict()  # handle -> its rendered replay (a run that cannot change)
    labs: OrderedDict[str, bytes] = OrderedDict()  # handle -> its lab figures as JSON (a run that cannot change)

    def limited(request: Request, buckets: Buckets, cost: float = 1, what: str = "runs") -> JSONResponse | None:
        if not per_client:
            return None
        client = client_of(request.scope, trust_proxy)
        wait = buckets.wait(client, cost=cost)
        if not wait:
            return None
        rate = f"{buckets.rate / 1e6:g} MB" if what != "runs" else f"{buckets.rate}"
        refusal(f"refused: {client} asked for {what} faster than {rate} per {buckets.seconds:g} s")
        seconds = max(1, round(wait + 0.5))
        return _error(
            429,
            f"Too many requests for {what} from one visitor; try again in {seconds} s.",
            **{"Retry-After": str(seconds)},
        )

    def counted(request: Request) -> str | None:
        """The client, for the store's shares and the turns (None with `per_client` 0: not counted)."""
        return client_of(request.scope, trust_proxy) if per_client else None

    def handle_of(request: Request) -> str | None:
        handle = request.path_params["handle"]
        return handle if HANDLE.fullmatch(handle) else None

    def read_of(request: Request) -> str | Response:
        """The run a read names, or the answer refusing it (the client past its read rate, or no run's name)."""
        refused = limited(request, reads)
        if refused:
            return refused
        handle = handle_of(request)
        return handle if handle is not None else _error(404, "That is not the name of a run.")

    async def run_json(request: Request) -> Response:
        handle = read_of(request)
        if isinstance(handle, Response):
            return handle
        try:
            since = parse_since(request.query_params.get("since"))
        except ValueError as exc:
            return _error(400, str(exc))
        try:
            # a gallery run is derived on first use; the reader holds the run now (store.py's share rules)
            answer = await asyncio.to_thread(STORE.get, handle, since, counted(request))
        except Gone:
            return _gone(handle)
        if "payload_text" in answer:
            return Response(answer["payload_text"], media_type="application/json")
        return JSONResponse(answer)

    async def held(request: Request) -> Response:
        """How long a link to a run may work: whether the store holds it, how full the store is (`RunStore.held`)."""
        handle = read_of(request)
        if isinstance(handle, Response):
            return handle
        return JSONResponse(STORE.held(handle), headers={"Cache-Control": "no-store"})

    async def lab(request: Request) -> Response:
        """The speed lab's predictions for a whole run (`payload.run_lab_data`): computed once per run, in turn with
        every other run's, when the page's lab asks for them."""
        handle = read_of(request)
        if isinstance(handle, Response):
            return handle
        body = await figuring.once(labs, limits.LAB_CACHE_BYTES, handle, counted(request), lambda: lab_answer(handle))
        return body if isinstance(body, Response) else Response(body, media_type="application/json")

    async def render(handle: str, run, client: str | None) -> bytes | Response:
        """A run's replay page: rendered once per run that cannot change (a gallery run, a posted or finished one),
        in turn with every other render."""
        from .render.export import render_html

        work = lambda: render_html(run, handle).encode("utf-8")  # noqa: E731
        # a live run's replay changes while it records: rendered in turn, not kept
        return await rendering.once(
            replays, limits.REPLAY_CACHE_BYTES, handle, client, work, keep=not handle.startswith("live-")
        )

    async def download(request: Request, what: str) -> Response:
        refused = limited(request, exports)
        if refused:
            return refused
        handle = handle_of(request)
        run = await asyncio.to_thread(STORE.run, handle) if handle else None
        if run is None:
            return _gone(request.path_params["handle"][:100])
        if what == "trace":
            body, kind, name = run.to_json(), "application/json", f"{handle}.json"
        else:
            body = await render(handle, run, counted(request))
            if isinstance(body, Response):
                return body
            kind, name = "text/html; charset=utf-8", f"{handle}.html"
        return Response(body, media_type=kind, headers={"Content-Disposition": f'attachment; filename="{name}"'})

    async def add(request: Request) -> Response:
        refused = limited(request, uploads)
        if refused:
            return refused
        kind = request.headers.get("content-type", "").strip().lower()
        if kind.startswith(FORMS):
            refusal(f"refused: a run posted as a form ({kind[:60]})")
            return _error(415, "Post the trace file itself as the request's body (its JSON), not as a form.")
        data = await request.body()  # at most limits.UPLOAD_BYTES: the guard refused a longer one
        client = counted(request)
        digest = (client, hashlib.sha256(data).hexdigest())  # per client: another's answer says nothing of it
        handle = kept.get(digest)
        if handle is not None and STORE.held(handle)["held"]:
            STORE.get(handle, client=client)  # posted again: opened, as the page is about to open it
        else:
            refused = reading.enter(client)
            if refused:
                return refused
            try:
                async with reading.lock:
                    handle = await asyncio.to_thread(keep_file, data, client)  # in the client's share of the store
            except (TraceError, SchemaError, PayloadTooLarge, ValueError) as exc:
                return _error(400, f"Could not open that file: {str(exc)[:300]}")
            finally:
                reading.leave(client)
            kept[digest] = handle
            while len(kept) > limits.KEPT_DIGESTS:
                kept.popitem(last=False)
        return JSONResponse({"handle": handle}, status_code=201, headers={"Location": f"runs/{handle}.json"})

    async def trace(request: Request) -> Response:
        return await download(request, "trace")

    async def replay(request: Request) -> Response:
        return await download(request, "replay")

    async def engine_file(request: Request) -> Response:
        path = (engine or {}).get(request.path_params["name"])  # only the files it was given: no path is built
        if path is None:
            return _error(404, "No such file of the browser engine on this server.")
        stat = os.stat(path)
        # revalidated on every load (a new model is new files at the same names), answered 304 when unchanged
        response = FileResponse(path, stat_result=stat, headers={"Cache-Control": "no-cache"})
        if conditional.is_not_modified(response.headers, request.headers):
            return NotModifiedResponse(response.headers)
        refused = limited(request, engine_reads, cost=min(stat.st_size, engine_reads.rate), what="engine files")
        return refused or response

    return [
        Route("/engine/{name:path}", engine_file, methods=["GET", "HEAD"]),
        Route(limits.RUNS_ROUTE, add, methods=["POST"]),
        Route("/runs/{handle}.json", run_json, methods=["GET"]),
        Route("/runs/{handle}/trace.json", trace, methods=["GET"]),
        Route("/runs/{handle}/held.json", held, methods=["GET"]),
        Route("/runs/{handle}/lab.json", lab, methods=["GET"]),
        Route("/runs/{handle}/replay.html", replay, methods=["GET"]),
    ]
