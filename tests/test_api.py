"""The public API as a script sees it (issue 57), without the model: `view_api()` of both clients Gradio publishes
(Python `gradio_client`, JavaScript `@gradio/client`, a pinned dev dependency) lists `/generate` alone, each parameter
named, typed, defaulted and described and the summary described; the page's own events are private, refused by name
and checked by their components' bounds. The README's examples against the model: tests/test_api_examples.py."""

import json
import subprocess

import httpx
import pytest
from conftest_app import no_model_app

from app import api, limits
from lade_core.paths import ROOT

pytestmark = pytest.mark.server
VIEW_API = ROOT / "tests" / "js" / "view_api.mjs"


@pytest.fixture(scope="module")
def app_url():
    with no_model_app("api-test.log") as (url, _):
        yield url


def _check_listing(listing: dict) -> None:
    assert list(listing["named_endpoints"]) == ["/generate"], list(listing["named_endpoints"])
    assert not listing.get("unnamed_endpoints")
    generate = listing["named_endpoints"]["/generate"]
    described = api.parameters()
    params = generate["parameters"]
    assert [p["parameter_name"] for p in params] == list(described)
    for p in params:
        assert p["python_type"]["type"] and p["python_type"]["description"] == described[p["parameter_name"]], p
        assert p["parameter_has_default"] is (p["parameter_name"] != "prompt"), p
    assert {p["parameter_name"]: p["parameter_default"] for p in params if p["parameter_has_default"]} == {
        "window": 7, "ngram": 4, "guess": 7, "max_new_tokens": 64, "pool_from_prompt": None, "temperature": 0,
        "top_p": 1, "seed": 0, "methods": None,
    }  # fmt: skip
    (returns,) = generate["returns"]
    assert returns["label"] == "summary" and "exact" in returns["python_type"]["type"]
    assert returns["python_type"]["description"].startswith("A run of /generate")


def test_the_python_client_lists_generate_alone_named_typed_defaulted_and_described(app_url):
    """On the landed code gradio_client listed eleven endpoints: `/generate` and ten of the page's internals
    (`/run_live`, `/lambda`, `/expected_wait_1`, ...), with no parameter described."""
    from gradio_client import Client

    _check_listing(Client(app_url, verbose=False).view_api(print_info=False, return_format="dict"))


def test_the_javascript_client_lists_generate_alone_named_typed_defaulted_and_described(app_url):
    listed = subprocess.run(
        ["node", str(VIEW_API), app_url], capture_output=True, text=True, timeout=120, cwd=ROOT, check=False
    )
    assert listed.returncode == 0, listed.stderr[-2000:]
    _check_listing(json.loads(listed.stdout))


def test_the_pages_events_are_refused_by_name_and_checked_by_their_bounds(app_url):
    """The page calls its events by index; a script naming one (`/call/run_live`) is told there is no such endpoint,
    and a value past a slider's bounds is refused by the guard with its range (Gradio's own check raised an error
    that logged a traceback per request, outside the log's rate)."""
    from app.ui import build_demo

    fns = {f.api_name: (i, f) for i, f in build_demo(preload=False).fns.items()}
    with httpx.Client(timeout=30) as http:
        for name in ("run_live", "expected_wait", "tokens_per_forward", "open_gallery", "auto_settings"):
            answer = http.post(f"{app_url}gradio_api/call/{name}", json={"data": []})
            assert answer.status_code == 404 and "no endpoint named" in answer.json()["error"], (name, answer.text)
        index = fns["tokens_per_forward"][0]
        body = {"fn_index": index, "session_hash": "api-test", "data": [1e308, 4, 7]}
        answer = http.post(f"{app_url}gradio_api/run/predict", json=body)
        W = limits.PUBLIC["window"]
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"] == f"tokens_per_forward: window takes a number from {W[0]} to {W[1]}, got 1e+308."
        answer = http.post(f"{app_url}gradio_api/run/predict", json={**body, "data": [5, 4, 7]})  # the page's way
        assert answer.status_code == 200 and "(5+7)" in answer.json()["data"][0], answer.text
