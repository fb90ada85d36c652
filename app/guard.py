"""The server's gate: an ASGI middleware in front of Gradio's routes that refuses, early and with a reason, what a
public server should not take. Added with `launch(app_kwargs={"middleware": [guard.middleware(demo)]})` (app.py).

- **Routes**: a request reaches Gradio only on a route the page or the public API uses (`gradio_adapter.ROUTES`,
  found by a recorded walk of both: `scripts/route_walk.py`) or one of the app's own (`app/routes.py`); any other
  path or method is answered 404 here (the page `notfound` draws, for a browser), before Gradio sees it.
- **Paths**: a NUL byte (`%00`) anywhere in the path or query is answered 400 (Gradio's proxy route answered 500).
- **Bodies**: a trace file posted to `limits.RUNS_ROUTE` at most `limits.UPLOAD_BYTES`; any other request body at
  most `limits.MAX_BODY_BYTES`; a larger body is refused with 413 before it is read (by its Content-Length, or as
  soon as a body sent without one passes it). Bodies in flight are bounded per client and in all, and one that
  stops arriving is timed out (`bodies.py`). (Gradio's upload route and its temp folder are behind the allow-list:
  nothing a visitor sends is stored there.)
- **Which event**: a call names its event as Gradio reads it (`fn_index` through Gradio's own body model, which
  takes "13" or 13.0 for 13; else the route's API name); a body whose event cannot be named so is refused here
  (404 or 422 with the reason), never passed on, since the limits below hang on knowing the event.
- **Arguments**: a call to an event (`/call/<api>`, `/call/v2/<api>`, `/run/<api>`, `/queue/join`) must send as
  many values as the event has inputs (or as its API lists: state inputs left out), only named parameters it has,
  and, for an input drawn by a component (a slider, a number, a radio), a value of the type the API lists for it
  (`types_fit`: its JSON type, its choices); otherwise 422 with a message naming the endpoint's parameters or the
  value's expected type. An `gr.api` endpoint's values are checked by its handler, which says why it refuses one.
  Answers are passed on as Gradio wrote them: no traceback or server path is in them, since a refusal is a
  `gr.Error` and Gradio sends no exception's text otherwise.
- **Jobs per client**: a client (its connecting address; the X-Forwarded-For entry `trust_proxy` hops from the
  right when the operator says the server is behind that many proxies) may have at most `limits.JOBS_PER_CLIENT`
  jobs of any kind waiting or running in the queue, and at most `per_client` of the engine events
  (`limits.ENGINE_GROUP`: the Run button, `/generate`, Auto); one more is refused with 429 and a message.
  (`per_client` 0 lifts both.) What the guard reads of Gradio's queue goes through `gradio_adapter`.
- **Cancels** (`/cancel`): a job waiting or running may be cancelled only by its own session (Gradio's route
  removed any event id it was given); otherwise 404.
- **Who the client is**: counted once here (`client_of`) and kept in the request's state for the handlers that
  share something per client (`counted_client`: the store's share of runs).
- **Jobs nobody reads**: an engine job posted to the REST route (`/call/<api>`) or joined with a session whose
  result stream (`/call/<api>/<id>`, `/queue/data`) is not opened within `limits.JOB_READ_WITHIN_S` seconds is taken
  out of the queue, or stopped at its next step if it runs: nobody reads it.

Every refusal writes one line to the log (`logs.refusal`).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import os
import re
import time
from urllib.parse import parse_qs

from pydantic import ValidationError
from starlette.middleware import Middleware
from starlette.routing import Match, Route

from . import gradio_adapter, limits, notfound
from .bodies import Bodies, Reader, Stalled, TooLarge
from .gradio_adapter import PredictBody
from .logs import refusal

API = "/gradio_api"
_EVENT = re.compile(rf"^{API}/(?:(call)/(v2/)?|(run|api)/)([^/]+)/?$")
_STREAM = re.compile(rf"^{API}/call/(?:v2/)?([^/]+)/([^/]+)/?$")
_HOST = re.compile(r"(?:[A-Za-z0-9_][A-Za-z0-9_.-]*|\[[0-9A-Fa-f:.]+\])(?::([0-9]{1,5}))?")
_SERVER = re.compile(r"https?://([^/?#\s]+)(?:/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*)?")


def client_of(scope_or_request, trust_proxy: int = 0) -> str:
    """The client: the connecting address, or the X-Forwarded-For entry `trust_proxy` hops from the right (the one
    the operator's nearest trusted proxy saw) when the server is behind that many proxies; an IPv6 address as its
    /`limits.IPV6_PREFIX` network (one client holds millions of addresses), an IPv4-mapped one as its IPv4 address,
    anything else cut to `limits.MAX_CLIENT_CHARS`. uvicorn rewrites no client (`serve.launch` trusts no proxy for it):
    this is the one reader of X-Forwarded-For."""
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
            host = hops[-trust_proxy]
    return _counted(host)


def _counted(host: str) -> str:
    """An address as a client is counted: IPv6 by its network, IPv4 as it is, anything else cut short."""
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return host[: limits.MAX_CLIENT_CHARS]
    if address.version == 6 and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    if address.version == 6:
        return str(ipaddress.ip_network(f"{address}/{limits.IPV6_PREFIX}", strict=False))
    return str(address)


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


def host_problem(value: str) -> str | None:
    """Why `value` is not host[:port] of at most `limits.FORWARDED_HOST_CHARS` characters, or None."""
    if len(value) > limits.FORWARDED_HOST_CHARS:
        return f"is {len(value):,} characters (at most {limits.FORWARDED_HOST_CHARS})"
    match = _HOST.fullmatch(value)
    if match is None or (match.group(1) and int(match.group(1)) > 65535):
        return "is not host[:port]"
    return None


def forwarded_problem(scope) -> str | None:
    """Why a forwarded host header of the request cannot be the app's address, or None: Gradio builds its root URL
    (the page's `config.root`) from X-Forwarded-Host (each comma-separated value host[:port]) and X-Gradio-Server (an
    http(s) address of such a host), and a malformed one made its page, `config` and `info` raise."""
    for key, raw in scope.get("headers", []):
        name = key.decode("latin-1").lower()
        if name not in ("x-forwarded-host", "x-gradio-server"):
            continue
        value = raw.decode("latin-1")
        if name == "x-gradio-server":
            match = _SERVER.fullmatch(value) if len(value) <= limits.FORWARDED_HOST_CHARS else None
            why = "is not an http(s) address" if match is None else host_problem(match.group(1))
        else:
            why = next((w for w in (host_problem(v.strip()) for v in value.split(",")) if w), None)
        if why:
            return f"{name} {why}"
    return None


def counted_client(request) -> str | None:
    """The client the guard counted for `request` (a Starlette request or a `gr.Request`), kept in its scope's state;
    None where the guard counts no clients (`per_client` 0) or is not in front."""
    state = getattr(request, "state", None)
    return getattr(state, "client", None) if getattr(state, "counted", False) else None


def client_name(request) -> str:
    """The client as the guard saw it, for a log line (whether or not it counts clients)."""
    return getattr(getattr(request, "state", None), "client", None) or "a client the guard did not see"


async def _respond(send, status: int, message: str, as_json: bool = True, retry_after: int | None = None) -> None:
    body = json.dumps({"detail": message, "error": message}).encode() if as_json else message.encode()
    kind = b"application/json" if as_json else b"text/plain; charset=utf-8"
    await _send(send, status, body, kind, [] if retry_after is None else [(b"retry-after", str(retry_after).encode())])


async def _send(send, status: int, body: bytes, kind: bytes, headers: list | None = None) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode()), *(headers or [])],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _read_body(receive) -> bytes:
    """The whole request body (read through a `bodies.Reader`, which raises TooLarge and Stalled)."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ConnectionError("the client went away")
        chunks.append(message.get("body", b""))
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


_JSON_TYPES = {"string": str, "boolean": bool, "object": dict, "array": list, "null": type(None)}


def types_fit(value, schema: dict) -> str | None:
    """What `value` should be when it does not fit the JSON Schema `schema` (the forms Gradio's components list:
    type, minimum and maximum, enum, const, items, anyOf/oneOf), or None when it fits or the schema says more than
    this reads."""
    for key in ("anyOf", "oneOf"):
        if key in schema:
            wants = [types_fit(value, option) for option in schema[key] if isinstance(option, dict)]
            return None if not wants or None in wants else " or ".join(wants)
    if "enum" in schema:
        return None if value in schema["enum"] else "one of " + ", ".join(json.dumps(v) for v in schema["enum"])[:200]
    if "const" in schema:
        return None if value == schema["const"] else json.dumps(schema["const"])
    kind = schema.get("type")
    if kind in ("number", "integer"):
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        whole = numeric and (kind == "number" or float(value).is_integer())
        low, high = schema.get("minimum"), schema.get("maximum")
        within = whole and (low is None or value >= low) and (high is None or value <= high)
        if within:
            return None
        what = "a number" if kind == "number" else "a whole number"
        return what + (f" from {low:g} to {high:g}" if low is not None and high is not None else "")
    if kind in _JSON_TYPES:
        if not isinstance(value, _JSON_TYPES[kind]):
            return {"string": "text", "boolean": "true or false", "object": "an object", "array": "a list"}.get(
                kind, "null"
            )
        if kind == "array" and isinstance(schema.get("items"), dict):
            wants = [types_fit(item, schema["items"]) for item in value]
            return next((f"a list of {w}" for w in wants if w), None)
    return None


class Routes:
    """The routes this server answers: `allowed` (method, path template) pairs of Gradio's, and the app's own routes
    (`own`: Starlette routes). `template(scope)`: the template a request matches, or None."""

    def __init__(self, allowed, own=()):
        self._routes = [Route(path, _unreachable, methods=[method]) for method, path in allowed] + list(own)

    def template(self, scope) -> str | None:
        return next((r.path for r in self._routes if r.matches(scope)[0] is Match.FULL), None)


def _unreachable(request):  # the endpoint of a route used only for matching
    raise AssertionError("a Routes entry is matched, never called")


def _header(scope, name: bytes) -> bytes:
    return next((v for k, v in scope.get("headers", []) if k.lower() == name), b"")


class Guard:
    def __init__(
        self,
        app,
        blocks=None,
        trust_proxy: int = 0,
        per_client: int = limits.PER_CLIENT,
        read_within_s: float = limits.JOB_READ_WITHIN_S,
        allow=gradio_adapter.ROUTES,
        own=(),
        body_bytes: int = limits.BODY_BYTES_IN_FLIGHT,
        body_idle_s: float = limits.BODY_IDLE_S,
    ):
        """`allow`: Gradio's routes a request may reach (None: every route, for tests of what lies behind the list);
        `own`: the app's own routes, which every request may reach."""
        self.app, self.blocks, self.trust_proxy, self.per_client = app, blocks, trust_proxy, per_client
        self.routes = None if allow is None else Routes(allow, own)
        self.read_within_s = read_within_s
        self._client_locks: dict[str, asyncio.Lock] = {}
        self._unread: dict[str, tuple[float, str | None]] = {}  # event id -> (deadline, session hash or None)
        self._reading_sessions: dict[str, int] = {}
        self._read_events: set[str] = set()
        self._watchdog: asyncio.Task | None = None
        self._params: dict | None = None
        self.bodies, self.body_idle_s = Bodies(body_bytes), body_idle_s  # the request bodies in flight

    # -- the Gradio app behind us ----------------------------------------------------------------------------------
    def _fns(self) -> dict:
        return gradio_adapter.events(self.blocks)

    def _fn(self, api_name: str | None) -> object | None:
        return next((f for f in self._fns().values() if gradio_adapter.api_name(f) == api_name), None)

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
        fn = self._fn(api_name)  # by its name: the API's endpoints only (the page calls its own events by index)
        return (
            (None if fn is None or gradio_adapter.is_private(fn) else fn),
            404,
            (f"This server has no endpoint named {api_name[:80]!r} (see {API}/info)."),
        )

    def _api(self, fn) -> list[dict]:
        """An event's API parameters (name, type, component; a slider's bounds in its type), state left out, as
        Gradio would list them, the page's private events too (`gradio_adapter.parameters`)."""
        if self._params is None:
            self._params = {}
        if fn not in self._params:
            try:
                self._params[fn] = gradio_adapter.parameters(fn)
            except Exception:
                self._params[fn] = [
                    {"label": getattr(b, "label", None) or type(b).__name__} for b in gradio_adapter.api_inputs(fn)
                ]
        return self._params[fn]

    def _parameters(self, fn) -> list[str]:
        """The names of an event's API parameters."""
        return [p.get("parameter_name") or p.get("label") or "?" for p in self._api(fn)]

    def _signature(self, fn) -> str:
        names = self._parameters(fn)
        return f"{gradio_adapter.api_name(fn) or 'this event'} takes {len(names)} argument{'s' * (len(names) != 1)}" + (
            f" ({', '.join(names)})" if names else ""
        )

    def _cancel_problem(self, body: bytes) -> str | None:
        """Why a cancel may not reach the job it names, or None: Gradio's route takes any job out of the queue (or
        stops it) by its event id, another session's too; a job waiting or running must be the cancelling session's.
        (A body Gradio's model refuses, or a job no longer in the queue, is Gradio's to answer: nothing to remove.)"""
        try:
            doc = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            return None
        if not isinstance(doc, dict) or not isinstance(doc.get("event_id"), str):
            return None
        job = gradio_adapter.queued(self.blocks).get(doc["event_id"])
        if job is None or gradio_adapter.session_of(job) == doc.get("session_hash"):
            return None
        return f"This session has no job {doc['event_id'][:40]!r} to cancel."

    def _is_engine(self, fn) -> bool:
        return fn is not None and gradio_adapter.group(fn) == limits.ENGINE_GROUP

    def _jobs(self, client: str) -> tuple[int, int]:
        """(all, engine) jobs of `client` waiting or running in Gradio's queue."""
        mine = [
            e
            for e in gradio_adapter.queued(self.blocks).values()
            if client_of(gradio_adapter.request_of(e), self.trust_proxy) == client
        ]
        return len(mine), sum(1 for e in mine if self._is_engine(gradio_adapter.event_of(e)))

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
        if len(raw) - 1 > limits.MAX_ADDRESS_BYTES:
            refusal(f"refused: an address of {len(raw) - 1:,} bytes ({method} {path[:80]!r})")
            return await _respond(
                send, 414, f"A request's address may be at most {limits.MAX_ADDRESS_BYTES:,} bytes.", as_json=False
            )
        forwarded = forwarded_problem(scope)
        if forwarded:
            refusal(f"refused: {method} {path[:80]!r}: {forwarded}")
            return await _respond(send, 400, f"The request's {forwarded}: this server takes host[:port] there.")
        if self.routes is not None and self.routes.template(scope) is None:
            refusal(f"refused: {method} {path[:80]!r}, a route this server does not answer")
            body, kind = notfound.answer(scope)
            return await _send(send, 404, body, kind)
        state = scope.setdefault("state", {})
        state["client"], state["counted"] = client_of(scope, self.trust_proxy), bool(self.per_client)
        if method == "POST":
            return await self._admitted(scope, receive, send, path)
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

    def _limit(self, path: str) -> tuple[int, str]:
        """The most a body posted to `path` may be, and the sentence a larger one is refused with."""
        if path.rstrip("/") == limits.RUNS_ROUTE:
            return limits.UPLOAD_BYTES, f"Could not open that file: a trace file may be at most {limits.UPLOAD_MIB} MiB"
        most = limits.MAX_BODY_BYTES
        return most, f"A request body may be at most {most // 2**20} MiB (a trace goes to runs)"

    async def _admitted(self, scope, receive, send, path: str):
        """A request with a body: refused by its stated length, then admitted among the bodies in flight (before a
        byte is read), then read against the clock (`bodies.Reader`) by the guard or, for a trace file posted to
        `runs`, by its route, which applies its rate first."""
        limit, rule = self._limit(path)
        length = self._length(scope)
        if length is not None and length > limit:
            refusal(f"refused: a body of {length:,} bytes for {path[:80]} (at most {limit:,})")
            return await _respond(send, 413, f"{rule}; this one is {length / 2**20:.1f} MiB.")
        client = scope["state"]["client"] if self.per_client else None
        size = limit if length is None else length
        refused = self.bodies.admit(client, size)
        if refused:
            status, why = refused
            refusal(f"refused: a body for {path[:80]} from {scope['state']['client']} ({why[:80]})")
            return await _respond(send, status, why, retry_after=5)
        reader = Reader(receive, limit, lambda: self.bodies.arrived(client), self.body_idle_s)
        started = False

        async def tracked(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            if path.rstrip("/") == limits.RUNS_ROUTE:  # a trace file posted (app/routes.py): read by its route
                return await self.app(scope, reader.receive, tracked)
            return await self._post(scope, reader.receive, tracked, path)
        except TooLarge:
            if not started:
                refusal(f"refused: a body over {limit:,} bytes for {path[:80]}")
                await _respond(send, 413, f"{rule}; this one is larger.")
        except Stalled as stalled:
            if not started:
                refusal(f"refused: a body that stalled after {stalled.args[0]:,} bytes for {path[:80]}")
                await _respond(
                    send,
                    408,
                    f"The request's body stopped arriving (no byte for {self.body_idle_s:g} s, or not whole after "
                    f"{limits.BODY_S:g} s).",
                )
        finally:
            reader.close()  # a body never read whole (refused by its route, say) is no longer arriving either
            self.bodies.release(size)

    async def _body(self, receive) -> bytes | None:
        """The request's body (TooLarge and Stalled from its reader); None if the client went away."""
        try:
            return await _read_body(receive)
        except ConnectionError:
            return None

    # -- events --------------------------------------------------------------------------------------------------
    async def _post(self, scope, receive, send, path: str):
        event = _EVENT.match(path)
        join = path.rstrip("/") == f"{API}/queue/join"
        body = await self._body(receive)
        if body is None:
            return
        replay = _replay(body, receive)
        if path.rstrip("/") == f"{API}/cancel":
            why_not = self._cancel_problem(body)
            if why_not:
                refusal(f"refused: {why_not[:160]}")
                return await _respond(send, 404, why_not)
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
        if not engine and not gradio_adapter.in_queue(fn):  # answered at once, outside the queue
            await self._forward(scope, replay, send)
            return
        if direct and engine:
            name = gradio_adapter.api_name(fn)
            refusal(f"refused: a direct call to {name}, which runs in the queue")
            return await _respond(
                send,
                404,
                f"{name} runs in the queue: post to {API}/call/{name} "
                f"and read the result from {API}/call/{name}/<event_id>, or use "
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
            answer = await self._forward(scope, replay, send)
        if not lock.locked() and self._client_locks.get(client) is lock:
            self._client_locks.pop(client, None)
        event_id = self._event_id(answer)
        if event_id and engine:
            session = doc.get("session_hash") if join else None
            if not (isinstance(session, str) and self._reading_sessions.get(session)):
                self._unread[event_id] = (
                    time.monotonic() + self.read_within_s,
                    session if isinstance(session, str) else None,
                )

    @staticmethod
    def _event_id(answer: bytes) -> str | None:
        """The event id a join answered with."""
        try:
            event_id = json.loads(answer).get("event_id") if answer else None
        except (ValueError, AttributeError):
            return None
        return event_id if isinstance(event_id, str) else None

    def _check_arguments(self, fn, doc: dict, v2: bool) -> str | None:
        """Why the request's arguments do not fit the event, or None."""
        params = self._api(fn)
        if v2:
            names = set(self._parameters(fn)) | {"oauth_token"}
            extra = sorted(str(k) for k in doc if k not in names)
            if extra:
                return (
                    f"{self._signature(fn)}; {', '.join(extra)[:200]} "
                    f"{'is not one of them' if len(extra) == 1 else 'are not among them'}."
                )
            named = {p.get("parameter_name"): p for p in params}
            return self._check_values(fn, [(named[k], v) for k, v in doc.items() if k in named])
        data = doc.get("data")
        if not isinstance(data, list):
            return None  # Gradio's own check names the field
        shown = gradio_adapter.api_inputs(fn)
        every = gradio_adapter.inputs(fn)
        if len(data) not in {len(every), len(shown)}:
            return f"{self._signature(fn)}, got {len(data)}."
        if len(data) != len(shown):  # every input's value, state included: keep those the API lists
            listed = {id(b) for b in shown}
            data = [v for b, v in zip(every, data, strict=True) if id(b) in listed]
        return self._check_values(fn, list(zip(params, data, strict=False)))

    def _check_values(self, fn, pairs: list[tuple[dict, object]]) -> str | None:
        """Why a value does not fit the type its component's API lists, or None (gr.api values: their handler's)."""
        for param, value in pairs:
            schema = param.get("type")
            if param.get("component") in (None, "Api") or not isinstance(schema, dict):
                continue
            want = types_fit(value, schema)
            if want:
                name = param.get("parameter_name") or param.get("label") or "a value"
                event = gradio_adapter.api_name(fn) or "this event"
                return f"{event}: {name} takes {want}, got {json.dumps(value)[:60]}."
        return None

    async def _forward(self, scope, receive, send, capture: int = 4096) -> bytes:
        """Forward to Gradio, passing its answer on as it is; the first `capture` bytes of the answer."""
        kept = bytearray()

        async def watch(message):
            if message["type"] == "http.response.body" and len(kept) < capture:
                kept.extend(message.get("body", b"")[: capture - len(kept)])
            await send(message)

        await self.app(scope, receive, watch)
        return bytes(kept)

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
        try:
            await self._forward(scope, receive, send, capture=0)
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
        """Every second: jobs whose result nobody opened within `read_within_s` are taken out (or stopped)."""
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
