"""The server's gate (app/guard.py) against clients that do not run the page: routes the page does not use, NUL bytes in
paths, bodies too large, too many or too slow, calls with the wrong arguments, values a component cannot take, one
client holding the engine's queue, and jobs nobody reads.

Most tests run a small Gradio app in this process behind the same middleware the app gets (`guard.middleware`), with one
slow event in the engine's concurrency group, so that queueing can be watched without a model. One test starts the real
app (without its model) to check that app.py installs the guard and that what a visitor's posted file and export
write is written once.
"""

import ast
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app import guard, limits

pytestmark = pytest.mark.server
READ_WITHIN_S = 1.5
# the toy's bodies in flight: two of the largest ordinary bodies and a little; a stall after 1 s
BODY_BYTES, BODY_IDLE_S = 2 * limits.MAX_BODY_BYTES + 2**18, 1.0
SLOW_S = 20.0  # what a slow job would take if nothing stopped it


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Toy:
    """A Gradio app behind the guard: `slow` (an engine job that yields for SLOW_S seconds unless stopped) and
    `add` (an ordinary event with two inputs)."""

    def __init__(self):
        import gradio as gr

        self.started: list[float] = []
        self.closed: list[float] = []
        self.stop = threading.Event()  # ends every slow job at its next yield (a test's clean-up)
        toy = self

        def slow(tag: str = "") -> Iterator[str]:
            toy.started.append(time.monotonic())
            try:
                end = time.monotonic() + SLOW_S
                while time.monotonic() < end and not toy.stop.is_set():
                    time.sleep(0.1)
                    yield tag
            finally:
                toy.closed.append(time.monotonic())

        def add(a: int, b: int) -> int:
            return a + b

        def who(request: gr.Request) -> str:
            return guard.counted_client(request) or ""

        def added(a: float, b: float, how: str) -> float:
            return a + b if how == "up" else a - b - 2

        with gr.Blocks() as demo:
            gr.api(slow, api_name="slow", concurrency_id=limits.ENGINE_GROUP, concurrency_limit=1)
            gr.api(slow, api_name="busy", concurrency_limit=1)  # a queued job that is not the engine's
            gr.api(add, api_name="add")
            a, b = gr.Number(label="a"), gr.Number(label="b")
            how, total = gr.Radio(["up", "down"], label="how"), gr.Number()
            gr.Button().click(added, [a, b, how], total, api_name="sum")
            gr.api(who, api_name="who")
        demo.queue(max_size=limits.QUEUE_SIZE, api_open=False)
        self.demo = demo
        port = _free_port()
        demo.launch(
            server_name="127.0.0.1",
            server_port=port,
            prevent_thread_lock=True,
            quiet=True,
            max_file_size=limits.UPLOAD_BYTES,
            app_kwargs={
                "middleware": [
                    guard.middleware(
                        demo,
                        trust_proxy=1,
                        per_client=2,
                        read_within_s=READ_WITHIN_S,
                        allow=None,  # every route: these tests reach what lies behind the allow-list
                        body_bytes=BODY_BYTES,
                        body_idle_s=BODY_IDLE_S,
                    )
                ]
            },
        )
        self.url = f"http://127.0.0.1:{port}/gradio_api"

    def call(self, api: str, data, client: str = "10.0.0.1", read: bool = True) -> httpx.Response:
        answer = httpx.post(f"{self.url}/call/{api}", json={"data": data}, headers={"X-Forwarded-For": client})
        if answer.status_code == 200 and read:
            event = answer.json()["event_id"]
            threading.Thread(target=self.read, args=(api, event), daemon=True).start()
        return answer

    def read(self, api: str, event: str) -> str:
        return httpx.get(f"{self.url}/call/{api}/{event}", timeout=60).text

    def wait_idle(self, timeout: float = 30) -> None:
        """End every job and wait until the queue is empty."""
        self.stop.set()
        deadline = time.monotonic() + timeout
        while len(self.closed) < len(self.started) or self.demo._queue.event_ids_to_events:
            assert time.monotonic() < deadline, "the toy app's jobs did not end"
            time.sleep(0.1)
        self.stop.clear()


@pytest.fixture(scope="module")
def toy():
    app = Toy()
    yield app
    app.demo.close()


def _files(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_size for p in folder.rglob("*") if p.is_file()}


# -- paths ---------------------------------------------------------------------------------------------------------
def test_a_nul_byte_in_a_path_is_answered_400_not_500(toy):
    """Gradio's proxy route met a NUL byte with an unhandled error (500); the guard answers 400 with a reason."""
    for path in ("/proxy=%00", "/proxy=http://x%00y", "/file=%00", "/info?x=%00"):
        answer = httpx.get(toy.url + path)
        assert answer.status_code == 400 and "NUL" in answer.text, (path, answer.status_code, answer.text)


def test_missing_or_extra_arguments_are_refused_with_the_endpoints_signature(toy):
    """A call with too few values was refused with {"error": null} and no reason, and an extra value was accepted
    silently; both are refused up front, naming the endpoint's parameters."""
    for data in ([1, 2, 3], [1]):
        answer = toy.call("add", data)
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"] == f"add takes 2 arguments (a, b), got {len(data)}."
    v2 = httpx.post(f"{toy.url}/call/v2/add", json={"a": 1, "b": 2, "c": 3})
    assert v2.status_code == 422 and "c is not one of them" in v2.json()["error"]
    join = httpx.post(f"{toy.url}/queue/join", json={"data": [1, 2, 3], "fn_index": 1, "session_hash": "s1"})
    assert join.status_code == 422 and "got 3" in join.json()["error"]
    good = toy.call("add", [1, 2], read=False)
    assert "event: complete\ndata: [3]" in toy.read("add", good.json()["event_id"])


def test_values_a_component_cannot_take_are_refused_with_their_type_and_answers_are_not_rewritten(toy):
    """Gradio answered a value a component could not take with {"error": null} (the guard rewrote that answer's
    body); the guard now refuses such a value before it is queued, naming the parameter and the type its API lists,
    and passes every answer on as Gradio wrote it."""
    for data, want in (
        (["text", 2], 'sum: a takes a number, got "text".'),
        ([1, True], "sum: b takes a number, got true."),
        ([1, 2, "sideways"], 'sum: how takes one of "up", "down", got "sideways".'),
    ):
        if len(data) == 2:
            data = [*data, "up"]
        answer = toy.call("sum", data)
        assert answer.status_code == 422 and answer.json()["error"] == want, answer.text
    v2 = httpx.post(f"{toy.url}/call/v2/sum", json={"a": "x", "b": 1, "how": "up"})
    assert v2.status_code == 422 and "a takes a number" in v2.json()["error"]
    good = toy.call("sum", [1, 2, "down"], read=False)
    assert "event: complete\ndata: [-3]" in toy.read("sum", good.json()["event_id"])
    event = toy.call("add", ["text", {"x": 1}], read=False).json()["event_id"]  # gr.api: its handler's to check
    stream = toy.read("add", event)
    assert 'event: error\ndata: {"error": null}' in stream  # Gradio's own answer, unrewritten
    assert "Traceback" not in stream and "/site-packages/" not in stream and 'File "' not in stream


def test_the_value_check_reads_the_schemas_gradio_lists():
    fit = guard.types_fit
    assert fit(3, {"type": "integer"}) is None and fit(3.0, {"type": "integer"}) is None
    assert fit(3.5, {"type": "integer"}) == "a whole number" and fit(True, {"type": "number"}) == "a number"
    assert fit(["a", 1], {"type": "array", "items": {"enum": ["a", "b"]}}) == 'a list of one of "a", "b"'
    assert fit(None, {"anyOf": [{"type": "string"}, {"type": "null"}]}) is None
    assert fit({"path": "x"}, {"$ref": "#/$defs/FileData"}) is None  # more than this check reads: Gradio's


def test_the_client_the_guard_counts_is_kept_for_the_handlers(toy):
    """Issue 39, finding 2: the store's share of runs is per client, counted as the guard counts it (one notion):
    the guard keeps the client it counted in the request, where an event's handler reads it."""
    event = toy.call("who", [], client="10.0.0.42", read=False).json()["event_id"]
    assert 'data: ["10.0.0.42"]' in toy.read("who", event)


# -- the engine's queue ----------------------------------------------------------------------------------------------
def test_one_client_may_have_two_engine_jobs_and_is_told_why_a_third_is_refused(toy):
    """Nothing limited one client, so it could fill the queue (24 jobs) alone; a third engine job from the same
    client is refused with a message while another client's job is still taken."""
    try:
        first, second = toy.call("slow", ["a"]), toy.call("slow", ["b"])
        assert first.status_code == second.status_code == 200
        third = toy.call("slow", ["c"])
        assert third.status_code == 429, third.text
        assert "at most 2 per visitor" in third.json()["error"]
        other = toy.call("slow", ["d"], client="10.0.0.2")
        assert other.status_code == 200
    finally:
        toy.wait_idle()  # the next test needs the engine's slot


def test_every_queued_job_counts_toward_a_clients_cap(toy):
    """Only engine jobs were counted, so one client filled all 24 queue places with other jobs; now any
    job in the queue counts, JOBS_PER_CLIENT at most, and another client is still taken."""
    try:
        codes = [toy.call("busy", [str(i)]).status_code for i in range(limits.JOBS_PER_CLIENT)]
        assert codes == [200] * limits.JOBS_PER_CLIENT
        refused = toy.call("busy", ["x"])
        assert refused.status_code == 429 and f"at most {limits.JOBS_PER_CLIENT} per visitor" in refused.json()["error"]
        assert toy.call("busy", ["y"], client="10.0.0.9").status_code == 200
    finally:
        toy.wait_idle()


def test_what_the_guard_reads_of_gradio_is_pinned_to_its_version(toy):
    """Private Gradio is read in one module (app/gradio_adapter.py), written for one version: an upgrade fails here
    first. On this version its accessors see the queue's jobs with their event, request, handler and values."""
    from app import gradio_adapter

    assert gradio_adapter.version() == gradio_adapter.GRADIO
    try:
        assert toy.call("slow", ["p"]).status_code == 200
        deadline = time.monotonic() + 10
        while not gradio_adapter.queued(toy.demo) and time.monotonic() < deadline:
            time.sleep(0.05)
        (job,) = gradio_adapter.queued(toy.demo).values()
        assert job.fn.api_name == "slow" and guard.client_of(job.request, 1) == "10.0.0.1"
        fn, values = gradio_adapter.call_of(job)  # what the expected wait reads of a race ahead (app/wait.py)
        assert fn.__name__ == "slow" and values == ["p"], (fn, values)
    finally:
        toy.wait_idle()


@pytest.mark.parametrize("index", ["0", 0.0, " 0 ", "0_0"])
def test_an_engine_job_joined_by_an_index_gradio_coerces_is_counted(toy, index):
    """The guard found an event by `fn_index` only when it was a JSON integer, while Gradio's body model coerces
    "0", 0.0, " 0 " and "0_0" to 0: joins written so passed unchecked (on main: 5 of 5 engine jobs from one
    client accepted). They are counted, and a third from one client is refused."""
    joined = []
    try:
        for n in range(3):
            joined.append(
                httpx.post(
                    f"{toy.url}/queue/join",
                    headers={"X-Forwarded-For": "10.0.0.9"},
                    json={"data": [str(n)], "fn_index": index, "session_hash": f"coerced-{n}"},
                )
            )
        assert [j.status_code for j in joined] == [200, 200, 429], [j.text for j in joined]
        assert "at most 2 per visitor" in joined[2].json()["error"]
    finally:
        toy.wait_idle()


def test_a_call_whose_event_cannot_be_named_is_refused_by_the_guard(toy):
    """A body naming no event (an index Gradio's model refuses, one out of range, none at all, a body that is not
    an object) is refused by the guard with a reason, never passed on for Gradio to interpret."""
    cases = {  # body -> (status, words of the reason)
        '{"data": ["x"], "fn_index": 0.5, "session_hash": "s"}': (422, "fn_index"),
        '{"data": ["x"], "fn_index": "zero", "session_hash": "s"}': (422, "fn_index"),
        '{"data": ["x"], "fn_index": 99, "session_hash": "s"}': (404, "no event with fn_index 99"),
        '{"data": ["x"], "session_hash": "s"}': (422, "must name its event"),
        '["x"]': (422, "JSON object"),
    }
    for body, (status, words) in cases.items():
        answer = httpx.post(f"{toy.url}/queue/join", content=body, headers={"content-type": "application/json"})
        assert answer.status_code == status and words in answer.json()["error"], (body, answer.text)
    direct = httpx.post(f"{toy.url}/run/add", json={"data": ["x"], "fn_index": "0"})  # the index wins over the path
    assert direct.status_code == 404 and "runs in the queue" in direct.json()["error"], direct.text
    unknown = httpx.post(f"{toy.url}/call/nothing", json={"data": []})
    assert unknown.status_code == 404 and "no endpoint named 'nothing'" in unknown.json()["error"]


def test_a_job_nobody_reads_is_stopped_and_frees_the_engine(toy):
    """A job posted to the REST route and never read ran to completion, holding the engine; it is stopped once
    nobody has opened its result for READ_WITHIN_S seconds, and the next job gets the engine."""
    toy.wait_idle()
    started = len(toy.started)
    posted = toy.call("slow", ["unread"], read=False)
    assert posted.status_code == 200
    deadline = time.monotonic() + 15
    while len(toy.closed) <= started and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(toy.closed) > started, "the unread job was not stopped"
    assert toy.closed[-1] - toy.started[started] < READ_WITHIN_S + 5 < SLOW_S
    read = toy.call("slow", ["read"], read=False)
    stream = {}
    reader = threading.Thread(target=lambda: stream.update(text=toy.read("slow", read.json()["event_id"])), daemon=True)
    reader.start()
    time.sleep(READ_WITHIN_S + 2)
    try:
        assert len(toy.started) == started + 2 and len(toy.closed) == started + 1  # a read job is left running
    finally:
        toy.wait_idle()
    reader.join(timeout=30)
    assert "event: complete" in stream.get("text", "")


# -- who is a client -------------------------------------------------------------------------------------------------
def test_a_client_is_its_address_unless_the_operator_trusts_a_proxy():
    """X-Forwarded-For is anyone's to write: it names the client only when the operator says how many proxies are in
    front (and then the entry that many hops from the right, the one the nearest proxy saw)."""
    scope = {"client": ("10.1.1.1", 5000), "headers": [(b"x-forwarded-for", b"6.6.6.6, 203.0.113.7")]}
    assert guard.client_of(scope) == "10.1.1.1"
    assert guard.client_of(scope, trust_proxy=1) == "203.0.113.7"
    assert guard.client_of(scope, trust_proxy=2) == "6.6.6.6"
    assert guard.client_of(scope, trust_proxy=3) == "10.1.1.1"  # fewer entries than proxies: the address
    assert [guard.trust_proxy_from_env(v) for v in ("", "0", "false", "1", "true", "2", "x")] == [0, 0, 0, 1, 1, 2, 0]


# -- the real app ----------------------------------------------------------------------------------------------------
def test_the_app_is_guarded_and_writes_each_visitor_file_once(tmp_path):
    """app.py puts the guard in front of the app and closes the REST routes that skip the queue; a trace posted to
    `runs` is written nowhere (kept in the store), its HTML export and download neither: they are answered from the
    store at the run's address (Gradio used to copy every upload, download and export into its cache); a posted body
    over the upload limit is refused by its length before it is read."""
    from conftest_app import NO_MODEL, serve_app

    trace = Path(__file__).parent / "hostile" / "base-greedy.json"
    with serve_app(["-c", NO_MODEL], "guard-test.log", HF_HUB_OFFLINE="1", GRADIO_TEMP_DIR=str(tmp_path)) as (url, _):
        api = url + "gradio_api"
        assert httpx.get(api + "/proxy=%00").status_code == 400
        names = [
            p["parameter_name"] for p in httpx.get(api + "/info").json()["named_endpoints"]["/generate"]["parameters"]
        ]
        direct = httpx.post(api + "/run/generate", json={"data": ["hi"] + [None] * (len(names) - 1)})
        assert direct.status_code == 404 and "runs in the queue" in direct.json()["error"]
        extra = httpx.post(api + "/call/generate", json={"data": ["hi"] + [0] * len(names)})
        assert extra.status_code == 422, extra.text
        assert extra.json()["error"] == (
            f"generate takes {len(names)} arguments ({', '.join(names)}), got {len(names) + 1}."
        )
        before = _files(tmp_path)
        posted = httpx.post(url + "runs", content=trace.read_bytes(), headers={"Content-Type": "application/json"})
        assert posted.status_code == 201, posted.text
        handle = posted.json()["handle"]
        big = httpx.post(
            url + "runs", content=b" " * (limits.UPLOAD_BYTES + 1), headers={"Content-Type": "application/json"}
        )
        assert big.status_code == 413 and f"at most {limits.UPLOAD_MIB} MiB" in big.json()["error"], big.text
        assert httpx.get(f"{url}runs/{handle}/replay.html").status_code == 200
        assert httpx.get(f"{url}runs/{handle}/trace.json").status_code == 200
        new = {k: v for k, v in _files(tmp_path).items() if k not in before and v}
    assert new == {}, new  # the posted file, its download and its export: nothing on disk


def test_only_the_routes_the_page_and_the_api_use_answer(monkeypatch):
    """Every route Gradio 6.31 mounts but those the page and the public API use is answered 404 by the guard,
    before Gradio reads the request: on main, one anonymous POST to `process_recording` (a "video" and 200 zoom
    effects) was answered 200 after starting ffmpeg and ffprobe 402 times, `monitoring/summary` showed every
    visitor's calls, `upload` stored files. The allowed ones and the app's own routes pass the guard; Gradio's
    monitoring is off."""
    import re

    from app import gradio_adapter, routes, serve
    from lade_core import checkpoint

    refused: list[str] = []
    monkeypatch.setattr(checkpoint, "bundled_gguf", lambda: None)  # the app without its model: routes need none
    monkeypatch.setattr(guard, "refusal", refused.append)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    port = _free_port()
    monkeypatch.setenv("GRADIO_SERVER_PORT", str(port))
    demo = serve.launch(serve.parser().parse_args(["--no-browser-engine"]), block=False)
    url = f"http://127.0.0.1:{port}"
    try:
        own = {r.path for r in routes.routes()}
        allowed = set(gradio_adapter.ROUTES)
        mounted = gradio_adapter.mounted(demo)
        assert allowed <= set(mounted), allowed - set(mounted)  # the list names routes this Gradio has
        assert {("GET", "/monitoring/summary"), ("POST", "/gradio_api/process_recording")} <= set(mounted)
        for method, template in mounted:
            path = re.sub(r"\{[^}]+\}", "x", template)
            before = len(refused)
            try:
                answer = httpx.request(method, url + path, content=b"{}", timeout=30)
            except httpx.HTTPError:  # an allowed route of Gradio's breaking off on a made-up request: Gradio's own
                answer = None
            by_guard = [line for line in refused[before:] if "a route this server does not answer" in line]
            if (method, template) in allowed or template in own or (method == "HEAD" and ("GET", template) in allowed):
                assert by_guard == [], (method, template)
            else:
                assert answer is not None and answer.status_code == 404 and by_guard, (method, template)
        assert demo.enable_monitoring is False
        page = httpx.get(url + "/monitoring/summary", headers={"accept": "text/html"})
        assert page.status_code == 404 and "There is nothing at this address" in page.text
    finally:
        demo.close()


def test_an_ipv6_client_is_its_64_network():
    """Issue 54, item 6: one IPv6 client holds a /64 (millions of addresses), so every per-client limit counting
    addresses counted it as millions of clients; a client is its /64 (an IPv4-mapped address, its IPv4 address)."""
    one = [("2001:db8:1:2::5", 1), ("2001:db8:1:2:ffff:ffff:ffff:9", 2), ("2001:DB8:1:2:0::7", 3)]
    clients = {guard.client_of({"client": c, "headers": []}) for c in one}
    assert clients == {"2001:db8:1:2::/64"}, clients
    assert guard.client_of({"client": ("2001:db8:1:3::5", 1), "headers": []}) == "2001:db8:1:3::/64"
    assert guard.client_of({"client": ("::ffff:203.0.113.7", 1), "headers": []}) == "203.0.113.7"
    forwarded = {"client": ("10.1.1.1", 5000), "headers": [(b"x-forwarded-for", b"2001:db8:9:9::1")]}
    assert guard.client_of(forwarded, trust_proxy=1) == "2001:db8:9:9::/64"
    odd = {"client": ("10.1.1.1", 5000), "headers": [(b"x-forwarded-for", b"not an address " + b"x" * 500)]}
    assert len(guard.client_of(odd, trust_proxy=1)) <= limits.MAX_CLIENT_CHARS


@pytest.fixture(scope="module")
def real_app(tmp_path_factory):
    """The app as app.py serves it (its guard, its routes, uvicorn as Gradio starts it), in this process, without
    its model; the per-client limits on and no proxy trusted: (url, Blocks)."""
    from app import serve
    from lade_core import checkpoint

    saved = checkpoint.bundled_gguf, os.environ.get("GRADIO_SERVER_PORT"), os.environ.get("FORWARDED_ALLOW_IPS")
    checkpoint.bundled_gguf = lambda: None
    os.environ.pop("FORWARDED_ALLOW_IPS", None)  # uvicorn's default: loopback peers trusted
    port = _free_port()
    os.environ["GRADIO_SERVER_PORT"] = str(port)
    demo = serve.launch(serve.parser().parse_args(["--no-browser-engine", "--trust-proxy", "0"]), block=False)
    try:
        yield f"http://127.0.0.1:{port}", demo
    finally:
        demo.close()
        checkpoint.bundled_gguf = saved[0]
        for key, value in (("GRADIO_SERVER_PORT", saved[1]), ("FORWARDED_ALLOW_IPS", saved[2])):
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def test_without_a_trusted_proxy_a_client_is_the_connecting_address(real_app):
    """Issue 54, item 7: Gradio starts uvicorn with its defaults (proxy headers read, loopback trusted), so with
    `--trust-proxy 0` a local process picked its identity for every per-client limit with X-Forwarded-For (140
    reads answered where 120 per 10 s is the limit). `--trust-proxy` is the one rule: FORWARDED_ALLOW_IPS is emptied
    before launch, so uvicorn rewrites no client and the guard reads X-Forwarded-For only when told to."""

    url, _ = real_app
    name = "code-class-W7N4G7"
    with httpx.Client(timeout=30) as client:
        codes = [
            client.get(f"{url}/runs/{name}/held.json", headers={"X-Forwarded-For": f"198.51.100.{i % 250}"}).status_code
            for i in range(3 * limits.RUN_READS)
        ]
    assert codes.count(429) > 0 and codes[: limits.RUN_READS] == [200] * limits.RUN_READS, (
        codes.count(200),
        codes.count(429),
    )
    assert os.environ["FORWARDED_ALLOW_IPS"] == ""


# -- bodies in flight ------------------------------------------------------------------------------------------------
def _partial(url: str, path: str, length: int, sent: int, client: str | None = None) -> socket.socket:
    """A POST to `path` stating `length` bytes of body and sending `sent` of them, left open."""
    host, port = url.split("//", 1)[1].split("/", 1)[0].split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n"
        + (f"X-Forwarded-For: {client}\r\n" if client else "")
        + "\r\n"
    )
    sock.sendall(head.encode() + b" " * sent)
    return sock


def _status(sock: socket.socket, timeout: float) -> int | None:
    """The status the server answered on `sock` within `timeout` seconds, or None."""
    sock.settimeout(timeout)
    try:
        line = sock.recv(64).split(b"\r\n", 1)[0]
    except OSError:
        return None
    finally:
        sock.close()
    return int(line.split()[1]) if line.startswith(b"HTTP/") else None


def test_bodies_in_flight_are_bounded_per_client_and_in_all_and_a_stalled_one_is_timed_out(toy):
    """Issue 54, item 2: every POST body was held whole before any check, with no bound on bodies in flight and no
    timeout (uvicorn has none): 40 connections each holding back the last byte of an 8 MiB body cost +317 to +408 MB.
    Before a byte is read, a client's third body still arriving is refused (429) and a body past what the server
    holds at once (here two of the largest ordinary bodies and a little) too (503); a body that stops arriving is
    answered 408."""
    url, join = toy.url, "/gradio_api/queue/join"
    held = [_partial(url, join, 1000, 10, "10.9.0.1") for _ in range(2)]
    started = time.monotonic()
    assert _status(_partial(url, join, 1000, 10, "10.9.0.1"), 0.8) == 429
    big = [_partial(url, join, limits.MAX_BODY_BYTES, 1000, f"10.9.0.{i}") for i in (2, 3)]
    assert _status(_partial(url, join, limits.MAX_BODY_BYTES, 1000, "10.9.0.4"), 0.8) == 503
    assert time.monotonic() - started < BODY_IDLE_S  # both refused before the stalled ones time out
    assert [_status(sock, BODY_IDLE_S + 5) for sock in held + big] == [408] * 4
    time.sleep(0.2)
    assert toy.call("add", [1, 2], client="10.9.0.4").status_code == 200  # the bodies left: a whole one taken again


def test_a_posted_trace_is_refused_by_its_rate_before_its_body_is_read(real_app):
    """Issue 54, item 2: the `runs` rate applied after the guard had read the whole body; a client past its rate is
    now refused before a byte of its body is read (the route checks its rate, then reads through the guard)."""

    url, _ = real_app
    with httpx.Client(timeout=30) as http:
        for _ in range(limits.POSTS):
            http.post(f"{url}/runs", content=b"{}", headers={"content-type": "application/json"})
    assert _status(_partial(url, "/runs", 8 * 2**20, 0), 3.0) == 429


def test_a_job_is_cancelled_only_by_its_own_session(toy):
    """Issue 54, observation: Gradio's `/cancel` took any job out of the queue, or stopped it, by its event id,
    another session's included; a job waiting or running is cancelled only by its own session (404 otherwise)."""
    fn_index = next(i for i, f in toy.demo.fns.items() if f.api_name == "slow")
    toy.wait_idle()
    try:
        started = len(toy.started)
        event = toy.call("slow", ["victim"]).json()["event_id"]
        deadline = time.monotonic() + 10
        while len(toy.started) == started and time.monotonic() < deadline:
            time.sleep(0.05)
        closed = len(toy.closed)
        other = httpx.post(
            f"{toy.url}/cancel", json={"session_hash": "someone-else", "fn_index": fn_index, "event_id": event}
        )
        assert other.status_code == 404 and "no job" in other.json()["error"], other.text
        time.sleep(1.0)
        assert len(toy.closed) == closed and event in toy.demo._queue.event_ids_to_events  # still running
        own = httpx.post(f"{toy.url}/cancel", json={"session_hash": event, "fn_index": fn_index, "event_id": event})
        assert own.status_code == 200, own.text  # a job posted to call/<api> is a session of its own
        deadline = time.monotonic() + 10
        while len(toy.closed) == closed and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(toy.closed) > closed
    finally:
        toy.wait_idle()


# What the app may read of Gradio's objects only through app/gradio_adapter.py: private state and the attributes of
# its events, jobs and blocks that no public API offers. `queue` is a name of both kinds: `demo.queue(...)` is public
# (a call), `fn.queue` an internal read. Keywords (`concurrency_id=` where an event is declared) are public.
GRADIO_INTERNALS = frozenset(
    {
        "fns",
        "_queue",
        "event_ids_to_events",
        "clean_events",
        "skip_api",
        "concurrency_id",
        "queue",
        "api_visibility",
        "api_name",
        "inputs",
        "_api_info",
        "_is_server_fn",
        "GRADIO_CACHE",
        "original_router",
        "get_api_info",
        "get_config_file",
    }
)


def internal_reads(source: str, name: str = "<source>") -> list[str]:
    """Where `source` reads a Gradio internal: an attribute read (`x.fns`; not a method call such as
    `demo.queue(...)`, not an attribute of the module's own object `self.x`) or a `getattr`/`hasattr`/`setattr`
    with the name as a string (`getattr(x, "skip_api")`); also any `from gradio... import`."""
    tree = ast.parse(source)
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and n.attr in GRADIO_INTERNALS and id(n) not in called:
            if not (isinstance(n.value, ast.Name) and n.value.id == "self"):
                found.append(f"{name}:{n.lineno} .{n.attr}")
        elif (
            isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in {"getattr", "hasattr", "setattr"}
        ):
            if len(n.args) >= 2 and isinstance(n.args[1], ast.Constant) and n.args[1].value in GRADIO_INTERNALS:
                found.append(f"{name}:{n.lineno} {n.func.id}(..., {n.args[1].value!r})")
        elif isinstance(n, ast.ImportFrom) and (n.module or "").startswith("gradio.") and n.level == 0:
            found.append(f"{name}:{n.lineno} from {n.module} import ...")
    return found


def test_no_gradio_internal_is_read_outside_the_adapter():
    """Every read of Gradio's internals, by attribute or by `getattr` with a string, lives in app/gradio_adapter.py,
    pinned to the version (the test above); the rest of the app reads Gradio through its public API."""
    from lade_core.paths import ROOT

    files = [ROOT / "app.py", *sorted((ROOT / "app").rglob("*.py"))]
    found = []
    for path in files:
        if path.name != "gradio_adapter.py":
            found += internal_reads(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert found == [], found
    assert len(files) > 20


@pytest.mark.parametrize(
    "planted",
    [
        'x = getattr(fn, "skip_api", False)',
        "x = fn.concurrency_id",
        "if fn.queue is False: pass",
        "jobs = blocks._queue.event_ids_to_events",
        'ok = hasattr(blocks, "fns")',
        "from gradio.blocks import BlockFunction",
    ],
)
def test_the_internal_read_finder_finds_a_planted_one(planted):
    assert internal_reads(planted), planted
    assert internal_reads("demo.queue(max_size=4)\nbtn.click(f, concurrency_id='engine')\nself.fns = {}") == []
