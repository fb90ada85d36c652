"""Every run at one address (app/routes.py): the server's `runs/<handle>.json` answers the very text the static site's
file holds; a stored run and a live run are read through the same path; downloads by handle; and the hostile cases:
handles that could not be one, an odd `since`, floods from one client. No model: the routes run in a bare Starlette
app in front of the store, as the Gradio app mounts them."""

import json

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from app import gallery, routes
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
    monkeypatch.setattr(routes, "RATE_S", 3600.0)
    monkeypatch.setattr(routes, "EXPORT_S", 3600.0)


def test_a_flood_from_one_client_is_slowed_and_no_other_client_is(slow_clock):
    c = client()
    codes = [c.get(f"/runs/{NAME}.json", headers=as_visitor("10.0.1.1")).status_code for _ in range(routes.RATE + 5)]
    assert codes[: routes.RATE] == [200] * routes.RATE and set(codes[routes.RATE :]) == {429}
    refused = c.get(f"/runs/{NAME}.json", headers=as_visitor("10.0.1.1"))
    assert "try again in" in refused.json()["error"] and int(refused.headers["retry-after"]) >= 1
    assert c.get(f"/runs/{NAME}.json", headers=as_visitor("10.0.1.2")).status_code == 200
    # exports have their own, smaller bucket: a replay renders a page on the CPU
    codes = [
        c.get(f"/runs/{NAME}/trace.json", headers=as_visitor("10.0.1.3")).status_code
        for _ in range(routes.EXPORT_RATE + 2)
    ]
    assert codes.count(429) == 2


def test_the_client_is_counted_from_the_right_of_the_proxy_chain(slow_clock):
    """Behind one proxy, the client is the entry the proxy appended; a client-supplied entry on the left changes
    nothing (so a flood cannot pose as many visitors)."""
    c = client(trust_proxy=1)
    codes = [
        c.get(f"/runs/{NAME}.json", headers=as_visitor(f"192.0.2.{i % 250}, 10.0.2.1")).status_code
        for i in range(routes.RATE + 1)
    ]
    assert codes[-1] == 429


def test_buckets_refill_with_time_and_forget_the_oldest_clients():
    buckets = routes.Buckets(2, 10.0)
    assert [buckets.wait("a", now=0.0) for _ in range(3)] == [0.0, 0.0, pytest.approx(5.0)]
    assert buckets.wait("a", now=5.0) == 0.0
    for i in range(routes.MAX_CLIENTS + 10):
        buckets.wait(f"c{i}", now=6.0)
    assert len(buckets._tokens) == routes.MAX_CLIENTS
