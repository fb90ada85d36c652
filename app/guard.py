"""The server's gate: an ASGI middleware in front of Gradio's routes that refuses, early and with a reason, what a
public server should not take. Added with `launch(app_kwargs={"middleware": [guard.middleware(demo)]})` (app.py).

- **Paths**: a NUL byte (`%00`) anywhere in the path or query is answered 400 (Gradio's proxy route answered 500).
- **Bodies**: an upload (`/gradio_api/upload`) carries at most one file and at most `limits.UPLOAD_BYTES` plus
  `MULTIPART_OVERHEAD`; a larger body is refused with 413 before anything is stored (by its Content-Length, or as
  soon as a body sent without one passes it); any other request body at most `MAX_BODY_BYTES`.
- **Gradio's temp folder** (uploads and the copies of served files): before an upload is stored, the oldest files
  are deleted while the folder is over `limits.TEMP_BYTES`; if it cannot get under (all of it younger than
  `KEEP_S`) the upload is refused with 507 and a message.
- **Which event**: a call names its event as Gradio reads it (`fn_index` through Gradio's own body model, which
  takes "13" or 13.0 for 13; else the route's API name); a body whose event cannot be named so is refused here
  (404 or 422 with the reason), never passed on, since the limits below hang on knowing the event.
- **Arguments**: a call to an event (`/call/<api>`, `/call/v2/<api>`, `/run/<api>`, `/queue/join`) must send as
  many values as the event has inputs (or as its API lists: state inputs left out), and only named parameters it
  has; otherwise 422 with a message naming the endpoint's parameters. A refusal Gradio would answer with
  `{"error": null}` (a value its components cannot take) gets a message instead: "the arguments do not fit", with
  the parameters. No traceback or server path is sent to a client.
- **Jobs per client**: a client (its connecting address; the X-Forwarded-For entry `trust_proxy` hops from the
  right when the operator says the server is behind that many proxies) may have at most `limits.JOBS_PER_CLIENT`
  jobs of any kind (an upload too) waiting or running in the queue, and at most `per_client` of the engine events
  (`limits.ENGINE_GROUP`: the Run button, `/generate`, Auto); one more is refused with 429 and a message.
  (`per_client` 0 lifts both.) What the guard reads of Gradio's queue goes through `gradio_adapter`.
- **Jobs nobody reads**: an engine job posted to the REST route (`/call/<api>`) or joined with a session whose
  result stream (`/call/<api>/<id>`, `/queue/data`) is not opened within `READ_WITHIN_S` seconds is taken out of the
  queue, or stopped at its next step if it runs: nobody reads it.

Every refusal writes one line to the log (`logs.refusal`).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from pathlib import Path
from urllib.parse import parse_qs

from pydantic import ValidationError
from starlette.middleware import Middleware

from . import gradio_adapter, limits
from .gradio_adapter import PredictBody
from .logs import refusal

API = "/gradio_api"
MULTIPART_OVERHEAD = 64 * 2**10  # the multipart framing around one file, and a field or two
MAX_BODY_BYTES = 2**20  # any other request: a prompt is at most 8,000 characters; files go through the upload
READ_WITHIN_S = 10.0
KEEP_S = 60.0  # files younger than this are never pruned to make room (they are being served)
_EVENT = re.compile(rf"^{API}/(?:(call)/(v2/)?|(run|api)/)([^/]+)/?$")
_STREAM = re.compile(rf"^{API}/call/(?:v2/)?([^/]+)/([^/]+)/?$")
_NULL_ERROR = re.compile(rb'("error"\s*:\s*)null')


def client_of(scope_or_request, trust_proxy: int = 0) -> str:
    """The client's address: the connecting one, or the X-Forwarded-For entry `trust_proxy` hops from the right
    (the one the operator's nearest trusted proxy saw) when the server is behind that many proxies."""
    if isinstance(scope_or_request, dict):
        client = scope_or_request.get("client")
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope_or_request.get("headers", [])}
        host = client[0] if client else "unknown"
    else:
        client = getattr(scope_or_request, "client", None)
        headers = {k.lower(): v for k, v in getattr(scope_or_request, "headers", {}).items()}
        host = getattr(client, "host", None) or "unknown"
    if trust_proxy > 0:
        hops = [h.strip() for h in headers.get("x-forwarded-for", "").split(",") if h.strip()]
        if len(hops) >= trust_proxy:
            return hops[-trust_proxy]
    return host


def trust_proxy_from_env(value: str | None = None) -> int:
    """LADE_TRUST_PROXY: unset, 0 or false: no proxy (the connecting address); 1, true or yes: one proxy; N: N."""
    value = (os.environ.get("LADE_TRUST_PROXY", "") if value is None else value).strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return 0
    if value in ("true", "yes", "on"):
        return 1
    try:
        return max(0, int(value))
    except ValueError:
        return 0


async def _respond(send, status: int, message: str, as_json: bool = True) -> None:
    body = json.dumps({"detail": message, "error": message}).encode() if as_json else message.encode()
    kind = b"application/json" if as_json else b"text/plain; charset=utf-8"
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


class TooLarge(Exception):
    pass


async def _read_body(receive, limit: int) -> bytes:
    """The whole request body, or TooLarge as soon as it passes `limit` bytes."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ConnectionError("the client went away")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise TooLarge(size)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive):
    sent = False

    async def replayed():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


def folder_files(folder: Path) -> list[tuple[float, int, Path]]:
    """(mtime, size, path) of every file under `folder`."""
    out = []
    for root, _, names in os.walk(folder):
        for name in names:
            path = Path(root) / name
            try:
                st = path.stat()
            except OSError:
                continue
            out.append((st.st_mtime, st.st_size, path))
    return out


def make_room(folder: Path, incoming: int, cap: int, keep_s: float = KEEP_S, now: float | None = None) -> bool:
    """Delete the oldest files under `folder` (none younger than `keep_s`) until `incoming` more bytes fit in
    `cap`; whether they fit."""
    now = time.time() if now is None else now
    files = folder_files(folder)
    total = sum(size for _, size, _ in files)
    for mtime, size, path in sorted(files):
        if total + incoming <= cap or now - mtime < keep_s:
            break
        try:
            path.unlink()
            total -= size
        except OSError:
            continue
        try:
            path.parent.rmdir()  # Gradio keeps each file in a folder of its own
        except OSError:
            pass
    return total + incoming <= cap


class Guard:
    def __init__(
        self,
        app,
        blocks=None,
        trust_proxy: int = 0,
        per_client: int = limits.PER_CLIENT,
        upload_bytes: int = limits.UPLOAD_BYTES,
        temp_bytes: int = limits.TEMP_BYTES,
        temp_folder: str | os.PathLike | None = None,
        read_within_s: float = READ_WITHIN_S,
    ):
        self.app, self.blocks, self.trust_proxy, self.per_client = app, blocks, trust_proxy, per_client
        self.upload_limit = upload_bytes + MULTIPART_OVERHEAD
        self.temp_bytes, self.read_within_s = temp_bytes, read_within_s
        self._temp_folder = Path(temp_folder) if temp_folder else None
        self._client_locks: dict[str, asyncio.Lock] = {}
        self._unread: dict[str, tuple[float, str | None]] = {}  # event id -> (deadline, session hash or None)
        self._reading_sessions: dict[str, int] = {}
        self._read_events: set[str] = set()
        self._watchdog: asyncio.Task | None = None
        self._params: dict | None = None
        self._event_fns: dict[str, object] = {}  # event id -> its event, for the reasons given to its readers
        self._upload_lock: asyncio.Lock | None = None

    # -- the Gradio app behind us ----------------------------------------------------------------------------------
    @property
    def temp_folder(self) -> Path:
        if self._temp_folder is None:
            self._temp_folder = gradio_adapter.upload_folder(self.blocks)
        return self._temp_folder

    def _fns(self) -> dict:
        return dict(getattr(self.blocks, "fns", {}) or {})

    def _fn(self, api_name: str | None) -> object | None:
        return next((f for f in self._fns().values() if f.api_name == api_name), None)

    def _called(self, api_name: str | None, doc: dict, by_index: bool) -> tuple[object | None, int, str]:
        """The event a call reaches, found as Gradio finds it, or (None, status, why not). A join
        (`/queue/join`) and a direct call (`/run/<api>`) name it by `fn_index` when the body has one, read by
        Gradio's own body model (which takes "13", 13.0 and True as integers); the REST routes name it by their
        path. (Gradio looks an index up in the session's copy of the events, which is this app's own: the app
        renders nothing per session.)"""
        fn_index = None
        if by_index:
            try:
                fn_index = PredictBody.model_validate(doc).fn_index
            except ValidationError as error:
                first = error.errors()[0]
                where = ".".join(str(part) for part in first.get("loc", ())) or "the body"
                return None, 422, f"The request's body does not fit a call: {where}: {first.get('msg', 'invalid')}."
        if fn_index is not None:
            fn = self._fns().get(fn_index)
            return fn, 404, f"This server has no event with fn_index {str(fn_index)[:40]}."
        if api_name is None:
            return None, 422, "A join must name its event (fn_index)."
        return self._fn(api_name), 404, f"This server has no endpoint named {api_name[:80]!r}."

    def _parameters(self, fn) -> list[str]:
        """The names of an event's API parameters (its inputs without state), as /gradio_api/info lists them."""
        if self._params is None:
            try:
                info = self.blocks.get_api_info(all_endpoints=True)
                self._params = {
                    name.lstrip("/"): [p.get("parameter_name") or p.get("label") or "?" for p in e["parameters"]]
                    for name, e in info["named_endpoints"].items()
                }
            except Exception:
                self._params = {}
        if fn.api_name in self._params:
            return self._params[fn.api_name]
        return [getattr(b, "label", None) or type(b).__name__ for b in gradio_adapter.api_inputs(fn)]

    def _signature(self, fn) -> str:
        names = self._parameters(fn)
        return f"{fn.api_name or 'this event'} takes {len(names)} argument{'s' * (len(names) != 1)}" + (
            f" ({', '.join(names)})" if names else ""
        )

    def _is_engine(self, fn) -> bool:
        return fn is not None and getattr(fn, "concurrency_id", None) == limits.ENGINE_GROUP

    def _jobs(self, client: str) -> tuple[int, int]:
        """(all, engine) jobs of `client` waiting or running in Gradio's queue."""
        mine = [
            e for e in gradio_adapter.queued(self.blocks).values() if client_of(e.request, self.trust_proxy) == client
        ]
        return len(mine), sum(1 for e in mine if self._is_engine(e.fn))

    # -- the gate ------------------------------------------------------------------------------------------------
    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        self._start_watchdog()
        path, method = scope.get("path", ""), scope.get("method", "GET")
        raw = (scope.get("raw_path") or b"") + b"?" + (scope.get("query_string") or b"")
        if "\x00" in path or b"%00" in raw or b"\x00" in raw:
            refusal(f"refused: a NUL byte in the path of {method} {path[:80]!r}")
            return await _respond(send, 400, "A request path may not contain a NUL byte.", as_json=False)
        if method == "POST" and path.rstrip("/") == f"{API}/upload":
            return await self._upload(scope, receive, send)
        if method == "POST":
            return await self._post(scope, receive, send, path)
        if method == "GET":
            stream = _STREAM.match(path)
            if stream:
                return await self._reading(scope, receive, send, event_id=stream.group(2), api=stream.group(1))
            if path.rstrip("/") == f"{API}/queue/data":
                session = (parse_qs(scope.get("query_string", b"").decode("latin-1")).get("session_hash") or [""])[0]
                return await self._reading(scope, receive, send, session=session)
        return await self.app(scope, receive, send)

    def _length(self, scope) -> int | None:
        for key, value in scope.get("headers", []):
            if key.lower() == b"content-length":
                try:
                    return int(value)
                except ValueError:
                    return None
        return None

    async def _body(self, scope, receive, send, limit: int, rule: str) -> bytes | None:
        """The request's body, or None once a 413 saying `rule` has been sent (a body over `limit` bytes)."""
        length = self._length(scope)
        if length is not None and length > limit:
            refusal(f"refused: a body of {length:,} bytes for {scope.get('path', '')[:80]} (at most {limit:,})")
            await _respond(send, 413, f"{rule}; this one is {length / 2**20:.1f} MiB.")
            return None
        try:
            return await _read_body(receive, limit)
        except TooLarge:
            refusal(f"refused: a body over {limit:,} bytes for {scope.get('path', '')[:80]}")
            await _respond(send, 413, f"{rule}; this one is larger.")
            return None
        except ConnectionError:
            return None

    # -- uploads ---------------------------------------------------------------------------------------------------
    async def _upload(self, scope, receive, send):
        body = await self._body(
            scope,
            receive,
            send,
            self.upload_limit,
            f"An upload carries one trace file of at most {limits.UPLOAD_MIB} MiB",
        )
        if body is None:
            return
        kind = dict(scope.get("headers", [])).get(b"content-type", b"").decode("latin-1")
        found = re.search(r'boundary="?([^";]+)"?', kind)
        if found:
            delimiter = b"--" + found.group(1).encode("latin-1")
            parts = body.count(delimiter + b"\r\n")
            if parts > 1:
                refusal(f"refused: an upload of {parts} parts (one file per upload)")
                return await _respond(send, 400, f"An upload carries one file; this one has {parts} parts.")
        if self._upload_lock is None:
            self._upload_lock = asyncio.Lock()
        async with self._upload_lock:
            fits = await asyncio.to_thread(make_room, self.temp_folder, len(body), self.temp_bytes)
        if not fits:
            refusal(f"refused: an upload while the temp folder is full ({self.temp_bytes:,} bytes)")
            return await _respond(
                send,
                507,
                "The server's space for uploaded files is full for the moment (it "
                "holds the last minute's files); try again in a minute.",
            )
        return await self.app(scope, _replay(body, receive), send)

    # -- events --------------------------------------------------------------------------------------------------
    async def _post(self, scope, receive, send, path: str):
        event = _EVENT.match(path)
        join = path.rstrip("/") == f"{API}/queue/join"
        body = await self._body(
            scope,
            receive,
            send,
            MAX_BODY_BYTES,
            f"A request body may be at most {MAX_BODY_BYTES // 2**20} MiB (a trace goes through the upload)",
        )
        if body is None:
            return
        replay = _replay(body, receive)
        if not (event or join):
            return await self.app(scope, replay, send)
        try:
            doc = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            doc = None
        if not isinstance(doc, dict):
            refusal(f"refused: a call whose body is not a JSON object ({path[:80]})")
            return await _respond(
                send, 422, f"A call's body is a JSON object (see {API}/info for each endpoint's parameters)."
            )
        v2 = bool(event and event.group(2))
        direct = bool(event and event.group(3))
        fn, status, why_not = self._called(event.group(4) if event else None, doc, by_index=join or direct)
        if fn is None:  # refused here: an event the guard cannot name is one whose limits it cannot apply
            refusal(f"refused: a call to no known event ({why_not[:120]})")
            return await _respond(send, status, why_not)
        problem = self._check_arguments(fn, doc, v2)
        if problem:
            refusal(f"refused: {problem}")
            return await _respond(send, 422, problem)
        engine = self._is_engine(fn)
        if not engine and getattr(fn, "queue", True) is False:  # answered at once, outside the queue
            answer = await self._forward(scope, replay, send, fn)
            self._remember(answer, fn)
            return
        if direct and engine:
            refusal(f"refused: a direct call to {fn.api_name}, which runs in the queue")
            return await _respond(
                send,
                404,
                f"{fn.api_name} runs in the queue: post to {API}/call/{fn.api_name} "
                f"and read the result from {API}/call/{fn.api_name}/<event_id>, or use "
                f"gradio_client.",
            )
        client = client_of(scope, self.trust_proxy)
        lock = self._client_locks.setdefault(client, asyncio.Lock())
        async with lock:  # one join of a client at a time: the count below is then exact
            jobs, held = self._jobs(client)
            if self.per_client and jobs >= limits.JOBS_PER_CLIENT:
                refusal(f"refused: {client} has {jobs} jobs in the queue (at most {limits.JOBS_PER_CLIENT})")
                return await _respond(
                    send,
                    429,
                    f"You already have {jobs} requests waiting or running on this server (at most "
                    f"{limits.JOBS_PER_CLIENT} per visitor): wait for one to finish and try again.",
                )
            if engine and self.per_client and held >= self.per_client:
                refusal(f"refused: {client} has {held} engine jobs (at most {self.per_client})")
                return await _respond(
                    send,
                    429,
                    f"You already have {held} run{'s' * (held != 1)} waiting or running "
                    f"on this server (at most {self.per_client} per visitor): wait for "
                    f"{'it' if held == 1 else 'one'} to finish, or stop it, and try again.",
                )
            answer = await self._forward(scope, replay, send, fn)
        if not lock.locked() and self._client_locks.get(client) is lock:
            self._client_locks.pop(client, None)
        event_id = self._remember(answer, fn)
        if event_id and engine:
            session = doc.get("session_hash") if join else None
            if not (isinstance(session, str) and self._reading_sessions.get(session)):
                self._unread[event_id] = (
                    time.monotonic() + self.read_within_s,
                    session if isinstance(session, str) else None,
                )

    def _remember(self, answer: bytes, fn) -> str | None:
        """The event id a join answered with, remembered with its event (for the reasons given to its readers)."""
        try:
            event_id = json.loads(answer).get("event_id") if answer else None
        except (ValueError, AttributeError):
            return None
        if not isinstance(event_id, str):
            return None
        self._event_fns[event_id] = fn
        while len(self._event_fns) > 4096:
            self._event_fns.pop(next(iter(self._event_fns)))
        return event_id

    def _check_arguments(self, fn, doc: dict, v2: bool) -> str | None:
        """Why the request's arguments do not fit the event, or None."""
        if v2:
            names = set(self._parameters(fn)) | {"oauth_token"}
            extra = sorted(str(k) for k in doc if k not in names)
            if extra:
                return (
                    f"{self._signature(fn)}; {', '.join(extra)[:200]} "
                    f"{'is not one of them' if len(extra) == 1 else 'are not among them'}."
                )
            return None
        data = doc.get("data")
        if not isinstance(data, list):
            return None  # Gradio's own check names the field
        allowed = {len(fn.inputs), len(gradio_adapter.api_inputs(fn))}
        if len(data) not in allowed:
            return f"{self._signature(fn)}, got {len(data)}."
        return None

    async def _forward(self, scope, receive, send, fn=None, capture: int = 4096) -> bytes:
        """Forward to Gradio, giving `{"error": null}` answers a reason; the first `capture` bytes of the answer."""
        start: dict | None = None
        status = [200]
        kept = bytearray()

        def reason_for(body: bytes) -> str:
            found = re.search(rb'"event_id"\s*:\s*"([0-9a-f]{8,64})"', body)
            event_fn = self._event_fns.get(found.group(1).decode()) if found else None
            return self._null_reason(fn or event_fn)

        async def rewrite(message):
            nonlocal start
            if message["type"] == "http.response.start":
                status[0] = message.get("status", 200)
                if any(k.lower() == b"content-length" for k, _ in message.get("headers", [])):
                    start = message  # held until the body shows whether its length changes
                    return
                return await send(message)  # a stream: its length is not stated, so it may change
            if message["type"] != "http.response.body":
                return await send(message)
            body = message.get("body", b"")
            failed = (
                b"event: error" in body
                or b'"success":false' in body
                or b'"success": false' in body
                or (start is not None and start.get("status", 200) >= 400)
                or status[0] >= 400
            )
            new = (
                _NULL_ERROR.sub(lambda m: m.group(1) + json.dumps(reason_for(body)).encode(), body)
                if failed and b"null" in body
                else body
            )
            if new != body:
                refusal(f"refused: values that do not fit {getattr(fn, 'api_name', None) or 'an event'}")
            if len(kept) < capture:
                kept.extend(new[: capture - len(kept)])
            if start is not None:
                headers = list(start.get("headers", []))
                if new != body:
                    headers = [(k, str(len(new)).encode() if k.lower() == b"content-length" else v) for k, v in headers]
                await send({**start, "headers": headers})
                start = None
            await send({**message, "body": new})

        await self.app(scope, receive, rewrite)
        if start is not None:
            await send(start)
        return bytes(kept)

    def _null_reason(self, fn) -> str:
        where = f"{self._signature(fn)}; " if fn is not None else ""
        return (
            f"The request was refused: {where}one of its values has a type or form this endpoint does not "
            f"take (see {API}/info for each endpoint's parameters and types)."
        )

    # -- readers of results ----------------------------------------------------------------------------------------
    async def _reading(
        self, scope, receive, send, event_id: str | None = None, session: str | None = None, api: str | None = None
    ):
        if event_id:
            self._read_events.add(event_id)
            self._unread.pop(event_id, None)
        if session:
            self._reading_sessions[session] = self._reading_sessions.get(session, 0) + 1
            for eid, (_, s) in list(self._unread.items()):
                if s == session:
                    self._unread.pop(eid, None)
        fn = self._fn(api) if api else None
        try:
            await self._forward(scope, receive, send, fn, capture=0)
        finally:
            if event_id:
                self._read_events.discard(event_id)
            if session:
                left = self._reading_sessions.get(session, 1) - 1
                if left > 0:
                    self._reading_sessions[session] = left
                else:
                    self._reading_sessions.pop(session, None)

    def _start_watchdog(self) -> None:
        if self._watchdog is None or self._watchdog.done():
            try:
                self._watchdog = asyncio.get_running_loop().create_task(self._watch())
            except RuntimeError:
                self._watchdog = None

    async def _watch(self) -> None:
        """Every second: jobs whose result nobody opened within READ_WITHIN_S are taken out (or stopped)."""
        while True:
            await asyncio.sleep(1.0)
            await self.sweep()

    async def sweep(self, now: float | None = None) -> list[str]:
        """Drop the jobs nobody has read in time; their ids."""
        now = time.monotonic() if now is None else now
        live = gradio_adapter.queued(self.blocks)
        dropped = []
        for eid, (deadline, session) in list(self._unread.items()):
            if eid not in live:
                self._unread.pop(eid, None)
            elif (session and self._reading_sessions.get(session)) or eid in self._read_events:
                self._unread.pop(eid, None)
            elif now >= deadline:
                self._unread.pop(eid, None)
                try:
                    await gradio_adapter.drop(self.blocks, eid)
                except Exception:
                    continue
                dropped.append(eid)
                refusal(f"refused: a job nobody read within {self.read_within_s:g} s (stopped)")
        return dropped


def middleware(blocks, trust_proxy: int | None = None, per_client: int | None = None, **options) -> Middleware:
    """The guard as `launch(app_kwargs={"middleware": [...]})` takes it."""
    return Middleware(
        Guard,
        blocks=blocks,
        trust_proxy=trust_proxy_from_env() if trust_proxy is None else trust_proxy,
        per_client=limits.PER_CLIENT if per_client is None else per_client,
        **options,
    )
