"""The hostile corpus (tests/hostile_cases.py) in the page and the export, in Chromium, with `alert` and a global
flag hooked: no script runs, no external request is made, each bad file gets its one-line reason, every view of an
accepted hostile run is drawn at several steps with the hostile text as text, and the server's memory and temp files
stay within stated bounds while sessions open the largest accepted trace. Issue 17's findings each have a test here
or in tests/test_hostile_loader.py.
"""

import json
import time

import pytest

from app import files, limits
from app.render.export import render_html
from conftest_app import NO_MODEL, OUT, SHOTS, chromium_browser, rss_mb, serve_app, upload
from hostile_cases import CASES, MARKUP
from lade_core import parse_run

pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.server, pytest.mark.browser]
ACCEPTED = [c for c in CASES.values() if c.accepts and not c.limits]
REJECTED = [c for c in CASES.values() if c.rejects and c.name != "oversized"]
HOOKS = ("() => { window.__alerts = 0; window.__pwned = undefined; for (const f of ['alert', 'confirm', 'prompt'])"
         " window[f] = () => { window.__alerts += 1; }; }")
RSS_BOUND_MB = 400  # growth of the server while 6 sessions each open the largest accepted trace
MEASURED: dict = {}


@pytest.fixture(scope="module")
def server():
    with serve_app(["-c", NO_MODEL], "app-hostile-test.log", HF_HUB_OFFLINE="1") as (url, proc):
        yield url, proc
    (OUT / "hostile.json").write_text(json.dumps(MEASURED, indent=2))


@pytest.fixture(scope="module")
def chromium(server):
    with chromium_browser() as browser:
        yield browser


def watched(chromium, url):
    """A tab that records every request leaving the app's own origin, and page errors."""
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(60_000)
    page.outside = []
    page.on("request", lambda r: page.outside.append(r.url)
            if not r.url.startswith((url, "data:", "blob:", "file://")) else None)
    page.goto(url + "?run=code-class")
    page.wait_for_function("() => window.ladeStage && window.ladeStage.mode === 'explorer'")
    page.evaluate(HOOKS)
    page.click("#run-yourself")
    return page


def assert_clean(page):
    assert page.evaluate("() => [window.__alerts, typeof window.__pwned]") == [0, "undefined"]
    assert page.outside == [], page.outside
    assert page.locator(".lade-stage img, .lade-stage script, .lade-stage iframe, .notice a").count() == 0


def test_accepted_hostile_runs_are_drawn_as_text(chromium, server, tmp_path):
    """Finding 1 (stored XSS through a trace) and 5 (markup in titles and names): every accepted case opened in one
    tab, every view drawn at several steps (and the mask hovered), the hostile text shown as text."""
    url, _ = server
    page = watched(chromium, url)
    for case in ACCEPTED:
        path = tmp_path / f"{case.name}.json"
        path.write_bytes(case.data())
        run = parse_run(path.read_bytes())
        before = page.evaluate("window.ladeStage.seq")
        upload(page, path)
        page.wait_for_function("n => window.ladeStage.seq !== n", arg=before)
        last = max(len(run.parallel.steps), len(run.baseline.steps)) - 1
        for k in sorted({0, 2, last // 2, last}):
            page.evaluate("k => window.ladeStage.go(k)", k)
        page.keyboard.press("ArrowLeft")
        page.locator("#mask-view").hover()
        shown = page.inner_text(".lade-stage")
        if any(m in run.title for m in MARKUP):
            assert run.title.strip()[:15] in shown, case.name
        if case.name in ("prompt_markup", "title_markup", "token_text_bidi"):
            page.screenshot(path=str(SHOTS / f"hostile-{case.name}.png"), full_page=True)
        assert_clean(page)
    page.close()


def test_rejected_files_get_their_one_line_reason(chromium, server, tmp_path):
    url, _ = server
    page = watched(chromium, url)
    for case in REJECTED:
        path = tmp_path / "bad.json"
        path.write_bytes(case.data())
        page.evaluate("() => { const n = document.querySelector('.notice'); n.hidden = true; n.textContent = ''; }")
        upload(page, path)
        page.wait_for_selector(".notice:not([hidden])")
        notice = page.inner_text(".notice").strip()
        assert notice.startswith("Could not open that file:") and "\n" not in notice, notice
        assert case.rejects in notice or case.rejects[:40] in notice, (case.name, case.rejects, notice)
        assert page.evaluate("window.ladeStage.current") == "code-class-W7N4G7"
        assert_clean(page)
    page.close()


def test_an_oversized_file_is_refused_before_it_is_read(chromium, server, tmp_path):
    """Finding 4: one upload limit, stated the same way everywhere, enforced by Gradio and by the loader."""
    url, _ = server
    path = tmp_path / "big.json"
    path.write_bytes(b" " * (limits.UPLOAD_BYTES + 10))
    page = watched(chromium, url)
    upload(page, path)
    page.wait_for_function("() => document.body.innerText.includes('8 MiB') || document.body.innerText.includes('8.0 MiB')"
                           " || /too large|exceeds/i.test(document.body.innerText)")
    assert page.evaluate("window.ladeStage.current") == "code-class-W7N4G7"
    page.close()


@pytest.mark.parametrize("query", ["?run=![x](http://attacker/p.png)", "?run=[Log in again](https://evil.example)",
                                   "?run=code-class&step=<img src=x onerror=alert(1)>",
                                   "?run=code-class&view=<svg/onload=alert(1)>&embed=1", "?lesson=<script>",
                                   "?run=%E2%80%AEgnp.exe", "?run=" + "x" * 5000])
def test_hostile_links_show_plain_notices(chromium, server, query):
    """Finding 5: the deep-link notice shows the address as plain text; no external image loads, no link appears."""
    url, _ = server
    page = chromium.new_page()
    page.outside = []
    page.on("request", lambda r: page.outside.append(r.url) if not r.url.startswith((url, "data:")) else None)
    page.goto(url + query)
    page.wait_for_function("() => window.ladeStage && window.ladeStage.current")
    page.wait_for_timeout(500)
    assert page.outside == [] and page.locator(".notice a, .notice img").count() == 0
    notice = page.inner_text(".notice") if page.locator(".notice:not([hidden])").count() else ""
    assert len(notice) <= 300 and "<" not in notice
    page.close()


@pytest.mark.parametrize("case", [c for c in ACCEPTED if c.name in ("title_markup", "prompt_markup", "token_text_markup",
                                                                    "token_text_bidi", "emoji")], ids=lambda c: c.name)
def test_hostile_exports_run_no_script(chromium, tmp_path, case):
    run = parse_run(case.data())
    path = tmp_path / "x.html"
    path.write_text(render_html(run), encoding="utf-8")
    page = chromium.new_page()
    page.add_init_script("window.__alerts = 0; window.alert = () => { window.__alerts += 1; };")
    requests = []
    page.on("request", lambda r: requests.append(r.url) if not r.url.startswith("file://") else None)
    page.goto(path.as_uri())
    page.wait_for_selector("#counter table")
    for key in ("End", "Home", "ArrowRight", "ArrowRight"):
        page.keyboard.press(key)
    assert page.evaluate("() => [window.__alerts, typeof window.__pwned]") == [0, "undefined"] and requests == []
    page.close()


def test_sessions_holding_the_largest_trace_stay_within_bounds(chromium, server, tmp_path):
    """Findings 2-4: six sessions each open the largest accepted trace; the server's memory grows by less than
    RSS_BOUND_MB and the app's temp folder stays under its cap; a session's state is its compressed run."""
    url, proc = server
    largest = max((c for c in ACCEPTED), key=lambda c: len(c.data()))
    path = tmp_path / "largest.json"
    path.write_bytes(largest.data())
    before = rss_mb(proc.pid)
    pages = []
    for _ in range(6):
        page = watched(chromium, url)
        upload(page, path)
        page.wait_for_function("() => window.ladeStage.current !== 'code-class-W7N4G7'")
        pages.append(page)
    after = rss_mb(proc.pid)
    for page in pages:
        page.close()
    time.sleep(1)
    folder_bytes = sum(f.stat().st_size for f in files.FOLDER.rglob("*") if f.is_file()) if files.FOLDER.exists() else 0
    MEASURED.update(largest_case=largest.name, largest_bytes=path.stat().st_size, rss_before_mb=round(before, 1),
                    rss_after_6_sessions_mb=round(after, 1), temp_folder_bytes=folder_bytes)
    assert after - before < RSS_BOUND_MB, (before, after)
    assert folder_bytes <= files.MAX_TOTAL_BYTES


def test_a_refused_request_is_not_logged_whole(server):
    """Finding 8: a request with the wrong number of arguments used to land in the log whole (5 MB per request)."""
    import httpx

    url, _ = server
    log = OUT / "app-hostile-test.log"
    before = log.stat().st_size
    event = httpx.post(url + "gradio_api/call/generate", json={"data": ["A" * 5_000_000]}, timeout=60).json()["event_id"]
    assert "event: error" in httpx.get(f"{url}gradio_api/call/generate/{event}", timeout=60).text
    time.sleep(1)
    assert log.stat().st_size - before < 20_000
