"""Every run at one address (app/routes.py): the server's `runs/<handle>.json` answers the very text the static site's
file holds; a stored run and a live run are read through the same path; downloads by handle; and the hostile cases:
handles that could not be one, an odd `since`, floods from one client. No model: the routes run in a bare Starlette
app in front of the store, as the Gradio app mounts them."""

import dataclasses
import json

import pytest
from hostile_cases import CASES, base_doc, dumps
from starlette.applications import Starlette
from starlette.testclient import TestClient

from app import gallery, limits, routes
from app.render.payload import as_text, payload
from app.store import STORE
from lade_core import parse_run
from lade_core.paths import RUNS

NAME = "code-class-W7N4G7"


def client(trust_proxy: int = 1) -> TestClient:
    return TestClient(Starlette(routes=routes.routes(trust_proxy=trust_proxy)))


def as_visitor(ip: str) -> dict:
    return {"X-Forwarded-For": ip}


def test_a_gallery_run_answers_what_the_static_site_holds():
    """`GET /runs/code-class-W7N4G7.json` on the app is the exported site's `runs/code-class-W7N4G7.json`, byte for
    byte (both are `as_text(payload(run))`)."""
    got = client().get(f"/runs/{NAME}.json", headers=as_visitor("10.0.0.1"))
    assert got.status_code == 200 and got.headers["content-type"] == "application/json"
    assert got.text == as_text(payload(gallery.load(NAME)))


def test_a_stored_run_and_a_live_run_are_read_through_the_same_path():
    run = parse_run((RUNS / "code-fib-W7N4G7.json").read_text(encoding="utf-8"))
    handle = STORE.add_run(run)
    c = client()
    got = c.get(f"/runs/{handle}.json", headers=as_visitor("10.0.0.2")).json()
    assert got["trace"]["prompt"] == run.prompt and got["derived"]["layouts"]

    class Live:  # what the store keeps while a race records: anything that answers `pull(since)`
        def pull(self, since):
            return {"delta": {"lanes": {lane: [] for lane in since}, "derived": [], "layouts": [], "token_text": {}}}

    live = STORE.add_live(Live())
    since = json.dumps({"parallel": 3, "baseline": 7})
    got = c.get(f"/runs/{live}.json", params={"since": since}, headers=as_visitor("10.0.0.2")).json()
    assert set(got["delta"]["lanes"]) == {"parallel", "baseline"}
    # what a copied link may say of each: held, and how full the store is (never cached)
    for h in (handle, live):
        held = c.get(f"/runs/{h}/held.json", headers=as_visitor("10.0.0.2"))
        assert held.json()["held"] is True and held.headers["cache-control"] == "no-store"
        assert held.json()["most_runs"] == STORE.max_entries
    assert c.get("/runs/u-00000000000000000000/held.json", headers=as_visitor("10.0.0.2")).json()["held"] is False
    assert c.get("/runs/..%2f/held.json", headers=as_visitor("10.0.0.2")).status_code == 404


def test_downloads_are_the_trace_file_and_a_standalone_replay():
    c = client()
    trace = c.get(f"/runs/{NAME}/trace.json", headers=as_visitor("10.0.0.3"))
    assert trace.status_code == 200 and "attachment" in trace.headers["content-disposition"]
    assert parse_run(trace.text) == gallery.load(NAME)
    replay = c.get(f"/runs/{NAME}/replay.html", headers=as_visitor("10.0.0.3"))
    assert replay.status_code == 200 and replay.headers["content-type"].startswith("text/html")
    assert 'id="lade-run"' in replay.text and f'filename="{NAME}.html"' in replay.headers["content-disposition"]


@pytest.mark.parametrize(
    "handle",
    ["nope", "u-0000000000", "live-not-a-token", "..", ".hidden", "a" * 101, "%2e%2e%2fassets", "run%00x", "ü"],
)
def test_a_handle_no_run_has_answers_404_with_a_sentence(handle):
    got = client().get(f"/runs/{handle}.json", headers=as_visitor("10.0.0.4"))
    assert got.status_code == 404 and "<" not in got.text and len(got.text) < 300, got.text


@pytest.mark.parametrize(
    "since",
    [
        "bad",
        "[1]",
        '{"parallel": -1}',
        '{"parallel": 1.5}',
        '{"parallel": true}',
        '{"parallel": 10000000}',
        '{"p": {"q": 1}}',
        json.dumps({f"l{i}": 1 for i in range(9)}),
        '{"' + "x" * 21 + '": 1}',
        "1" * 1001,
    ],
)
def test_an_odd_since_is_refused_with_what_it_must_be(since):
    got = client().get(f"/runs/{NAME}.json", params={"since": since}, headers=as_visitor("10.0.0.5"))
    assert got.status_code == 400 and "since must map" in got.json()["error"]


@pytest.fixture
def slow_clock(monkeypatch):
    """Buckets that refill once an hour, so that a test's requests cannot earn tokens back while it runs."""
    monkeypatch.setattr(limits, "RUN_READS_S", 3600.0)
    monkeypatch.setattr(limits, "EXPORTS_S", 3600.0)
    monkeypatch.setattr(limits, "POSTS_S", 3600.0)


def test_a_flood_from_one_client_is_slowed_and_no_other_client_is(slow_clock):
    c = client()
    codes = [
        c.get(f"/runs/{NAME}.json", headers=as_visitor("10.0.1.1")).status_code for _ in range(limits.RUN_READS + 5)
    ]
    assert codes[: limits.RUN_READS] == [200] * limits.RUN_READS and set(codes[limits.RUN_READS :]) == {429}
    refused = c.get(f"/runs/{NAME}.json", headers=as_visitor("10.0.1.1"))
    assert "try again in" in refused.json()["error"] and int(refused.headers["retry-after"]) >= 1
    assert c.get(f"/runs/{NAME}.json", headers=as_visitor("10.0.1.2")).status_code == 200
    # exports have their own, smaller bucket: a replay renders a page on the CPU
    codes = [
        c.get(f"/runs/{NAME}/trace.json", headers=as_visitor("10.0.1.3")).status_code for _ in range(limits.EXPORTS + 2)
    ]
    assert codes.count(429) == 2


def test_the_client_is_counted_from_the_right_of_the_proxy_chain(slow_clock):
    """Behind one proxy, the client is the entry the proxy appended; a client-supplied entry on the left changes
    nothing (so a flood cannot pose as many visitors)."""
    c = client(trust_proxy=1)
    codes = [
        c.get(f"/runs/{NAME}.json", headers=as_visitor(f"192.0.2.{i % 250}, 10.0.2.1")).status_code
        for i in range(limits.RUN_READS + 1)
    ]
    assert codes[-1] == 429


def test_buckets_refill_with_time_and_forget_the_oldest_clients():
    buckets = routes.Buckets(2, 10.0)
    assert [buckets.wait("a", now=0.0) for _ in range(3)] == [0.0, 0.0, pytest.approx(5.0)]
    assert buckets.wait("a", now=5.0) == 0.0
    for i in range(limits.RATE_CLIENTS + 10):
        buckets.wait(f"c{i}", now=6.0)
    assert len(buckets._tokens) == limits.RATE_CLIENTS


# -- a trace file posted: POST /runs ----------------------------------------------------------------------------
ANSWER_BYTES = 1024
# The corpus's refusals (what a refusal echoes is what could make an answer large) and a few accepted files.
FILES = [c for c in CASES.values() if c.rejects] + [c for c in CASES.values() if c.accepts][:4]


def post(c: TestClient, body: bytes, ip: str = "10.0.3.1", kind: str = "application/json"):
    return c.post("/runs", content=body, headers={**as_visitor(ip), "Content-Type": kind})


@pytest.mark.parametrize("case", FILES, ids=lambda c: c.name)
def test_a_posted_file_is_kept_at_an_address_or_refused_in_one_short_line(slow_clock, case):
    """Every refused file of the hostile corpus and a few accepted ones: 201 with the handle the run is read at, or
    400 with one line saying why (echoing at most a short part of the file); the answer under 1 KB either way."""
    answer = post(client(), case.data(), ip=f"10.0.4.{FILES.index(case)}")
    assert len(answer.content) < ANSWER_BYTES, (case.name, len(answer.content))
    if answer.status_code == 201:
        handle = answer.json()["handle"]
        assert answer.headers["location"] == f"runs/{handle}.json"
        assert client().get(f"/runs/{handle}.json").json()["trace"]["title"] == parse_run(case.data()).title
    else:
        error = answer.json()["error"]
        assert answer.status_code == 400 and error.startswith("Could not open that file: ") and "\n" not in error
        assert case.rejects is not None or case.limits is not None, case.name


def test_the_same_file_posted_twice_is_one_run():
    c, data = client(), (RUNS / "code-fib-W7N4G7.json").read_bytes()
    first, again = post(c, data, "10.0.3.2"), post(c, data, "10.0.3.3")
    assert first.status_code == again.status_code == 201 and first.json() == again.json()


@pytest.mark.parametrize("field", ["dtype", "method", "device", "model"])
def test_a_refusal_echoes_little_of_a_long_value(field):
    """500 four-byte characters in a field: the refusal quotes only their start."""
    doc = base_doc("greedy")
    doc["run"][field] = "😀" * 500
    answer = post(client(), dumps(doc), ip="10.0.3.4")
    assert answer.status_code == 400 and len(answer.content) < ANSWER_BYTES


FORMS = [
    (
        "multipart/form-data; boundary=x",
        b'--x\r\nContent-Disposition: form-data; name="files"; filename="a.json"\r\n\r\n{}',
    ),
    ("multipart/form-data; BOUNDARY=x", b"--x\r\n"),
    ("multipart/form-data; boundary=x; boundary=y", b"--y\r\n"),
    ("Multipart/Form-Data;boundary=x", b"--x   \r\n"),
    ("application/x-www-form-urlencoded", b"files=%7B%7D"),
]


@pytest.mark.parametrize(("kind", "body"), FORMS, ids=[f"form{i}" for i in range(len(FORMS))])
def test_a_form_is_refused_whatever_its_boundary(kind, body):
    """The multipart tricks the upload route met (an upper-case BOUNDARY=, a second boundary, padding after the
    delimiter) never reach a parser here: a posted run is its JSON, and any form is refused with what to send."""
    answer = post(client(), body, ip="10.0.3.5", kind=kind)
    assert answer.status_code == 415 and "not as a form" in answer.json()["error"]


def test_a_body_over_the_upload_limit_is_refused_by_the_route_too():
    """The guard refuses it before it is read (tests/test_guard.py); the route, mounted without the guard, still
    refuses it with the limit in words."""
    answer = post(client(), b" " * (routes.limits.UPLOAD_BYTES + 1), ip="10.0.3.6")
    assert answer.status_code == 400 and "Could not open that file" in answer.json()["error"]


def test_a_flood_of_posted_files_is_slowed(slow_clock):
    c, data = client(), (RUNS / "code-fib-W7N4G7.json").read_bytes()
    codes = [post(c, data, "10.0.3.7").status_code for _ in range(limits.POSTS + 2)]
    assert codes[: limits.POSTS] == [201] * limits.POSTS and codes[limits.POSTS :] == [429] * 2
    assert post(c, data, "10.0.3.8").status_code == 201


def test_per_client_zero_lifts_the_rates(slow_clock):
    """`--per-client 0` (a private server, or tests whose clients share one address) lifts the routes' rates too."""
    c = TestClient(Starlette(routes=routes.routes(trust_proxy=1, per_client=0)))
    data = (RUNS / "code-fib-W7N4G7.json").read_bytes()
    assert {post(c, data, "10.0.3.9").status_code for _ in range(limits.POSTS + 2)} == {201}
    reads = {
        c.get(f"/runs/{NAME}.json", headers=as_visitor("10.0.3.9")).status_code for _ in range(limits.RUN_READS + 2)
    }
    assert reads == {200}


def test_the_engine_files_are_served_by_name_revalidated_and_bounded_in_bytes(tmp_path, monkeypatch):
    """engine/<name> answers only the files it was given (no path is built from the request), 304 to a copy the
    browser holds (If-None-Match), and each client at most `limits.ENGINE_FILE_BYTES` per `ENGINE_FILE_S` (429 past
    it, naming the engine's files); another client is not held back."""
    monkeypatch.setattr(limits, "ENGINE_FILE_BYTES", 3_000)
    chunk = tmp_path / "model.gguf.000"
    chunk.write_bytes(b"x" * 1_000)
    c = TestClient(Starlette(routes=routes.routes(trust_proxy=1, engine={"model.gguf.000": chunk})))
    for bad in ("engine/../model.gguf.000", "engine/%2e%2e/app.py", "engine/nothing"):
        assert c.get(bad, headers=as_visitor("10.0.0.1")).status_code == 404, bad
    first = c.get("engine/model.gguf.000", headers=as_visitor("10.0.0.1"))
    assert first.status_code == 200 and first.content == chunk.read_bytes()
    assert first.headers["cache-control"] == "no-cache" and first.headers["etag"]
    again = c.get("engine/model.gguf.000", headers={**as_visitor("10.0.0.1"), "If-None-Match": first.headers["etag"]})
    assert again.status_code == 304 and not again.content
    codes = [c.get("engine/model.gguf.000", headers=as_visitor("10.0.0.1")).status_code for _ in range(3)]
    assert codes == [200, 200, 429], codes  # 3,000 bytes: the first and these two, then the budget is spent
    refused = c.get("engine/model.gguf.000", headers=as_visitor("10.0.0.1"))
    assert "engine files" in refused.json()["error"] and int(refused.headers["retry-after"]) >= 1
    assert c.get("engine/model.gguf.000", headers=as_visitor("10.0.0.2")).status_code == 200


# -- work done one at a time: reading posted files, rendering replays ----------------------------------------------
def _async_client(**options):
    import httpx

    app = Starlette(routes=routes.routes(trust_proxy=1, **options))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://app")


def _slow_keep(monkeypatch, seconds: float, slow_for=lambda data: True) -> list:
    """keep_file taking `seconds` for the bodies `slow_for` picks (a large file's parse); the bodies it read."""
    import time as clock

    real, read = routes.keep_file, []

    def keep(data, owner=None):
        read.append(data)
        if slow_for(data):
            clock.sleep(seconds)
            return "u-" + "1" * 20
        return real(data, owner)

    monkeypatch.setattr(routes, "keep_file", keep)
    return read


def test_one_file_waits_per_client_and_a_few_in_all(monkeypatch):
    """Issue 54, item 3: posted files were read one at a time for everyone while the rates were per address, so a
    visitor's 3 KB file waited 26 to 54 s behind three addresses posting the largest run. Each client may have one
    file waiting or being read (a second: 429), and at most TURNS_WAITING wait in all (one more: 503), each told when
    to try again; nobody waits behind an unbounded line."""
    import asyncio

    _slow_keep(monkeypatch, 1.0)

    async def race():
        async with _async_client() as c:

            async def post_as(ip: str, body: bytes, delay: float):
                await asyncio.sleep(delay)
                kind = {"Content-Type": "application/json"}
                return await c.post("/runs", content=body, headers={**as_visitor(ip), **kind})

            tasks = [post_as("10.7.0.1", b'{"a": 1}', 0.0), post_as("10.7.0.1", b'{"a": 2}', 0.2)]
            tasks += [post_as(f"10.7.0.{i}", b'{"b": 1}', 0.3) for i in range(2, 2 + routes.limits.TURNS_WAITING + 1)]
            return await asyncio.gather(*tasks)

    answers = asyncio.run(race())
    codes = [a.status_code for a in answers]
    assert codes[1] == 429 and "already have one file to read" in answers[1].json()["error"], codes
    assert sorted(codes[2:]).count(503) == 2 and codes.count(201) == routes.limits.TURNS_WAITING, codes
    assert all(int(a.headers["retry-after"]) >= 1 for a in answers if a.status_code in (429, 503))


def test_a_file_posted_again_is_not_read_again(monkeypatch):
    """Issue 54, item 3: a file its client has posted and the store still holds is answered with its handle at
    once, without waiting for the reader, busy with another client's large file (counted per client: what one client
    posted says nothing of another's)."""
    import asyncio
    import time as clock

    small = (RUNS / "code-fib-W7N4G7.json").read_bytes()
    read = _slow_keep(monkeypatch, 1.5, slow_for=lambda data: data != small)

    async def race():
        async with _async_client() as c:
            kind = {"Content-Type": "application/json"}
            first = await c.post("/runs", content=small, headers={**as_visitor("10.7.1.1"), **kind})
            busy = asyncio.create_task(c.post("/runs", content=b"{}", headers={**as_visitor("10.7.1.2"), **kind}))
            await asyncio.sleep(0.2)
            started = clock.monotonic()
            again = await c.post("/runs", content=small, headers={**as_visitor("10.7.1.1"), **kind})
            waited = clock.monotonic() - started
            await busy
            return first, again, waited

    first, again, waited = asyncio.run(race())
    assert first.status_code == again.status_code == 201 and first.json() == again.json()
    assert waited < 0.5 and read.count(small) == 1, (waited, read.count(small))


def test_a_runs_lab_figures_are_computed_when_asked_once_per_run(monkeypatch):
    """Issue 52: every run's payload carried the speed lab's predictions (about 0.2 s of CPU and a sixth of its
    bytes), computed for every posted file and finished race whether or not its lab was opened. The payload now
    carries only its machine's curve; the predictions are at the run's `lab.json`, computed once when asked, the same
    figures `lab_run_data` makes; a run still recording is told to ask again once it has ended."""
    from lade_core.measure import labdata

    calls = []
    real = labdata.lab_run_data
    monkeypatch.setattr(routes, "run_lab_data", lambda run: calls.append(run.prompt) or real(run))
    run = gallery.load(NAME)
    shown = client().get(f"/runs/{NAME}.json", headers=as_visitor("10.7.3.1")).json()["derived"]
    assert "lab" not in shown and shown["machine_curve"]["machine_name"] == labdata.machine_curve(run)["machine_name"]
    c = client()
    answers = [c.get(f"/runs/{NAME}/lab.json", headers=as_visitor(f"10.7.3.{i}")) for i in range(2, 5)]
    assert [a.status_code for a in answers] == [200] * 3 and answers[0].content == answers[2].content
    assert answers[0].json() == json.loads(as_text(real(run))) and calls == [run.prompt]

    class Live:  # a race still recording: its lanes so far
        def partial(self):
            return dataclasses.replace(run, parallel=dataclasses.replace(run.parallel, stop_reason="running"))

    live = STORE.add_live(Live())
    assert c.get(f"/runs/{live}/lab.json", headers=as_visitor("10.7.3.9")).status_code == 409
    assert c.get("/runs/u-00000000000000000000/lab.json", headers=as_visitor("10.7.3.9")).status_code == 404


def test_a_replay_is_rendered_once_per_run(monkeypatch):
    """Issue 54, item 3: every replay was rendered again, one at a time for everyone (a tiny one took 25 s behind
    four addresses); a run that cannot change is rendered once and its page kept."""
    import app.render.export as export

    calls = []
    real = export.render_html
    monkeypatch.setattr(export, "render_html", lambda run, handle: calls.append(handle) or real(run, handle))
    c = client()
    pages = [c.get(f"/runs/{NAME}/replay.html", headers=as_visitor(f"10.7.2.{i}")) for i in range(3)]
    assert [p.status_code for p in pages] == [200] * 3 and pages[0].content == pages[2].content
    assert calls == [NAME]
