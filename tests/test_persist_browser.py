"""Links that say how long they last (issue 50): with a persistent folder (`--runs-dir`, `LADE_RUNS_DIR`; a Space's
/data) a run's link works after the app restarts and a copied link says so; without one the store is in memory, and
a copied link says that a restart drops the run and the link will not open it. The share is named for what it is,
one network address's. On the landed code the store had no folder (a restart dropped every run) and the sentence
promised the run "while the server holds it", naming neither restarts nor the address."""

import json
import urllib.request

import pytest
from conftest_app import new_page, no_model_app, open_app
from hostile_cases import base_doc, cut, dumps

pytestmark = [pytest.mark.server, pytest.mark.browser]


def post_run(url: str, doc: dict) -> str:
    req = urllib.request.Request(url + "runs", data=dumps(doc), method="POST")
    req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=60) as res:
        assert res.status == 201
        return json.loads(res.read())["handle"]


def get_json(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=60) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


def copied_sentence(chromium, url: str, handle: str) -> str:
    """The notice a visitor reads after "Copy link" on the run `handle`."""
    page = new_page(chromium)
    open_app(page, f"{url}?run={handle}", f"s.state.current === '{handle}'")
    page.click("#copy-link")
    page.wait_for_function("() => /Link copied|Copy this link/.test(document.querySelector('.notice').textContent)")
    text = page.inner_text(".notice")
    assert page.errors == []
    page.close()
    return text


def test_a_runs_link_survives_a_restart_with_a_persistent_folder_and_says_so(chromium, tmp_path):
    doc = cut(base_doc("greedy"), 6)
    folder = tmp_path / "runs"
    with no_model_app("app-persist-1.log", LADE_RUNS_DIR=str(folder)) as (url, _):
        handle = post_run(url, doc)
        assert get_json(f"{url}runs/{handle}.json")[0] == 200
    assert (folder / "runs.sqlite3").exists() and (folder / "store.key").exists()
    with no_model_app("app-persist-2.log", LADE_RUNS_DIR=str(folder)) as (url, _):  # the app restarted
        status, payload = get_json(f"{url}runs/{handle}.json")
        assert status == 200 and payload["trace"]["prompt"] == doc["run"]["prompt"]
        assert get_json(f"{url}runs/{handle}/held.json")[1]["persistent"] is True
        assert post_run(url, doc) == handle  # the same file, the same handle: the key was kept too
        said = copied_sentence(chromium, url, handle)
    assert "a restart of the server keeps this one" in said and "one network address's" in said, said


def test_without_a_folder_a_copied_link_says_a_restart_drops_the_run(chromium, page_server):
    url = page_server[0]
    handle = post_run(url, cut(base_doc("greedy"), 5))
    assert get_json(f"{url}runs/{handle}/held.json")[1]["persistent"] is False
    said = copied_sentence(chromium, url, handle)
    assert "drops this run, and the link will not open it then" in said and "one network address's" in said, said
