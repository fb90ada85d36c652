"""The hostile corpus (tests/hostile_cases.py) in the page and the export, in Chromium, with `alert` and a global
flag hooked: no script runs, no external request is made, each bad file gets its one-line reason, every view of an
accepted hostile run is drawn at several steps with the hostile text as text, hostile links are read by the page's
one reading of a link and echoed as plain text, and the server's memory and temp files
stay within stated bounds while sessions open the largest accepted trace.
"""

import json
import re
import time
from urllib.parse import quote, urlencode

import pytest
from conftest_app import OUT, SHOTS, new_page, open_app, rss_mb, state, upload
from hostile_cases import CASES, MARKUP, QUERIES

from app import limits
from app.render.export import render_html
from lade_core import parse_run

pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.server, pytest.mark.browser]
ACCEPTED = [c for c in CASES.values() if c.accepts and not c.limits]
REJECTED = [c for c in CASES.values() if c.rejects and c.name != "oversized"]
HOOKS = (
    "() => { window.__alerts = 0; window.__pwned = undefined; for (const f of ['alert', 'confirm', 'prompt'])"
    " window[f] = () => { window.__alerts += 1; }; }"
)
RSS_BOUND_MB = 400  # growth of the server while 6 sessions each open the largest accepted trace
MEASURED: dict = {}


@pytest.fixture(scope="module")
def server(page_server):
    yield page_server
    (OUT / "hostile.json").write_text(json.dumps(MEASURED, indent=2))


def watched(chromium, url):
    """A tab that records every request leaving the app's own origin, and page errors."""
    page = new_page(chromium)
    page.outside = []
    page.on(
        "request",
        lambda r: page.outside.append(r.url) if not r.url.startswith((url, "data:", "blob:", "file://")) else None,
    )
    open_app(page, url + "?run=code-class", "s.state.mode === 'explorer' && s.run()")
    page.evaluate(HOOKS)
    page.click("#run-yourself")
    return page


def upload_run(page, path) -> None:
    """Upload `path` from the gallery run, and wait until the page shows the uploaded run."""
    page.evaluate("() => window.ladeStage.open('code-class-W7N4G7', 0)")
    page.wait_for_function("() => window.ladeStage.state.current === 'code-class-W7N4G7'")
    upload(page, path)
    page.wait_for_function("() => (window.ladeStage.state.current || '').startsWith('u-')")


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
        upload_run(page, path)
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


def _rejected_through_the_page(chromium, server, tmp_path, cases):
    url, _ = server
    page = watched(chromium, url)
    for case in cases:
        path = tmp_path / "bad.json"
        path.write_bytes(case.data())
        page.evaluate("() => window.ladeStage.set({ notice: '' })")
        upload(page, path)
        page.wait_for_selector(".notice:not([hidden])")
        notice = page.inner_text(".notice").strip()
        assert notice.startswith("Could not open that file:") and "\n" not in notice, notice
        assert case.rejects in notice or case.rejects[:40] in notice, (case.name, case.rejects, notice)
        assert state(page, "current") == "code-class-W7N4G7"
        assert_clean(page)
    page.close()


def test_rejected_files_get_their_one_line_reason(chromium, server, tmp_path):
    """Every seventh case of the corpus through the page's upload (each case's reason is checked without a browser
    for all of them: tests/test_hostile_loader.py, tests/test_store.py); the whole corpus in `make test-soak`."""
    _rejected_through_the_page(chromium, server, tmp_path, REJECTED[::7])


@pytest.mark.soak
def test_every_rejected_file_gets_its_one_line_reason_in_the_page(chromium, server, tmp_path):
    _rejected_through_the_page(chromium, server, tmp_path, REJECTED)


def test_an_oversized_file_is_refused_before_it_is_read(chromium, server, tmp_path):
    """Finding 4: one upload limit, stated the same way everywhere, enforced by Gradio and by the loader."""
    url, _ = server
    path = tmp_path / "big.json"
    path.write_bytes(b" " * (limits.UPLOAD_BYTES + 10))
    page = watched(chromium, url)
    upload(page, path)
    page.wait_for_function(
        "() => document.body.innerText.includes('8 MiB') || document.body.innerText.includes('8.0 MiB')"
        " || /too large|exceeds/i.test(document.body.innerText)"
    )
    assert state(page, "current") == "code-class-W7N4G7"
    page.close()


@pytest.mark.parametrize(
    "query",
    [
        "?run=![x](http://attacker/p.png)",
        "?run=[Log in again](https://evil.example)",
        "?run=code-class&step=<img src=x onerror=alert(1)>",
        "?run=code-class&view=<svg/onload=alert(1)>&embed=1",
        "?lesson=<script>",
        "?run=%E2%80%AEgnp.exe",
        "?run=" + "x" * 5000,
        "?run=code-class&view=constructor&embed=1",
        "?run=code-class&view=__proto__&embed=1",
    ],
)
def test_hostile_links_show_plain_notices(chromium, server, query):
    """Finding 5: the deep-link notice shows the address as plain text; no external image loads, no link appears."""
    url, _ = server
    page = new_page(chromium)
    page.outside = []
    page.on("request", lambda r: page.outside.append(r.url) if not r.url.startswith((url, "data:")) else None)
    open_app(page, url + query, "s.run()")
    page.wait_for_timeout(500)
    assert page.outside == [] and page.locator(".notice a, .notice img").count() == 0
    notice = page.inner_text(".notice") if page.locator(".notice:not([hidden])").count() else ""
    assert len(notice) <= 300 and "<" not in notice
    page.close()


@pytest.mark.parametrize(
    "case",
    [
        c
        for c in ACCEPTED
        if c.name in ("title_markup", "prompt_markup", "token_text_markup", "token_text_bidi", "emoji")
    ],
    ids=lambda c: c.name,
)
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


@pytest.mark.soak  # 30 s, six sessions; the hostile traces drawn as text and the store's bounds stay in `make test`
def test_sessions_holding_the_largest_trace_stay_within_bounds(chromium, server, tmp_path):
    """Findings 2-4: six sessions each open the largest accepted trace; the server's memory grows by less than
    RSS_BOUND_MB (the run lives once in the store; a session holds none of it)."""
    url, proc = server
    largest = max((c for c in ACCEPTED), key=lambda c: len(c.data()))
    path = tmp_path / "largest.json"
    path.write_bytes(largest.data())
    before = rss_mb(proc.pid)
    pages = []
    for _ in range(6):
        page = watched(chromium, url)
        upload_run(page, path)
        pages.append(page)
    after = rss_mb(proc.pid)
    for page in pages:
        page.close()
    time.sleep(1)
    MEASURED.update(
        largest_case=largest.name,
        largest_bytes=path.stat().st_size,
        rss_before_mb=round(before, 1),
        rss_after_6_sessions_mb=round(after, 1),
    )
    assert after - before < RSS_BOUND_MB, (before, after)


# Odd links that are not bad, and bad ones whose fallback matters: what the page makes of each.
ODD_LINKS = {
    "?run=code-fib&step=12&view=chain&embed=1": dict(run="code-fib-W7N4G7", step=12, view="chain", embed=True),
    "?lesson=3&embed=yes": dict(lesson=3, embed=True),
    "?lesson=%20": dict(lesson=1, embed=False, notice="There is no chapter “ ” (chapters 1 to 9); showing chapter 1."),
    "?run=CODE-FIB-W7N4G7&step=0007": dict(run="code-fib-W7N4G7", step=7, notice=""),
    "?run=code-fib&step=%D9%A1%D9%A2": dict(
        run="code-fib-W7N4G7", step=None, notice="Step “١٢” is not a step number; showing the run's opening step."
    ),
    "?run=code-fib&run=code-class": dict(run="code-class-W7N4G7", notice=""),  # a key twice: its last value
    "?lesson=2&lesson=9": dict(lesson=9, notice=""),
    "?run=code-fib&step=+12+": dict(run="code-fib-W7N4G7", step=12, notice=""),
    "?embed=1&view=mask-view": dict(run=None, view=None, embed=False, notice=""),  # no run: no embed, no view
    "?run=code-fib&view=outputs&embed=TRUE": dict(run="code-fib-W7N4G7", view="outputs", embed=True),
    "?run=code-fib&step=1234567": dict(
        step=None, notice="Step “1234567” is not a step number; showing the run's opening step."
    ),
}
READ = "s => Lade.links.read(s, window.ladeStage.boot, Lade.lesson.CHAPTERS.length)"


def test_the_page_reads_every_link_by_its_one_rule(chromium, server):
    """The page is the one reader of its address (lade-page.js links.read; the server reads none). Every hostile
    link gets a short plain-text notice: no markup (`<`, a Markdown `[text](url)` or image), no control or
    direction characters, never a whole long value, and reading it never throws. Odd but harmless links open what
    they name, a key given twice counts by its last value, and an embed needs a run or a chapter."""
    url, _ = server
    page = new_page(chromium)
    open_app(page, url, "s.run()")
    for query in QUERIES:
        notice = page.evaluate(READ, f"?{urlencode(query, quote_via=quote)}")["notice"]
        assert notice, ("every query here is bad somewhere: the visitor is told", query)
        assert not re.search(r"[<>\[\]`]|\]\(|!\[", notice), notice
        assert all(ch.isprintable() for ch in notice), ascii(notice)
        assert len(notice) <= 200 and "A" * 41 not in notice, notice
    differ = {}
    for search, want in ODD_LINKS.items():
        got = page.evaluate(READ, search)
        if any(got.get(k) != v for k, v in want.items()):
            differ[search] = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
    assert not differ, differ
    page.close()


def test_a_refused_request_is_not_logged_whole(server):
    """A request with the wrong number of arguments used to land in the log whole (5 MB per request): a body over
    the server's limit is refused before it is read (413, with the limit in words), one under it with the wrong
    number of arguments is refused saying how many it takes (422); neither grows the log by more than a line."""
    import httpx

    url, _ = server
    log = OUT / "app-pages-test.log"  # the session's no-model app (tests/conftest.py page_server)
    before = log.stat().st_size
    big = httpx.post(url + "gradio_api/call/generate", json={"data": ["A" * 5_000_000]}, timeout=60)
    assert big.status_code == 413 and re.search(r"at most [\d.]+ MiB", big.json()["error"]), big.text[:200]
    wrong = httpx.post(url + "gradio_api/call/generate", json={"data": ["A" * 500_000]}, timeout=60)
    assert wrong.status_code == 422 and re.search(r"takes \d+ arguments", wrong.json()["error"]), wrong.text[:200]
    assert len(wrong.text) < 1000
    time.sleep(1)
    assert log.stat().st_size - before < 20_000


def test_every_invisible_character_is_named_in_a_cell(chromium, server, tmp_path):
    """Finding 8 of the third round (hidden text in a token): each character that shows nothing (Unicode tags,
    variation selectors, Hangul fillers, U+180E and the other default-ignorables of the corpus) is written in a grid
    cell as its code point, ⟨U+E0041⟩, and the uploaded run that carries them shows every one of those names."""
    from hostile_cases import INVISIBLE_CODEPOINTS

    url, _ = server
    page = watched(chromium, url)
    names = [f"⟨U+{cp:04X}⟩" for cp in INVISIBLE_CODEPOINTS]
    cells = page.evaluate("cps => cps.map(cp => Lade.dom.cellText(String.fromCodePoint(cp), 0))", INVISIBLE_CODEPOINTS)
    assert cells == names
    path = tmp_path / "invisible.json"
    path.write_bytes(CASES["token_text_invisible"].data())
    upload_run(page, path)
    page.evaluate("() => window.ladeStage.go(window.ladeStage.run().lastStep())")
    page.wait_for_timeout(200)
    shown = page.inner_text(".lade-stage")
    assert [n for n in names if n not in shown] == []
    assert_clean(page)
    page.close()


def test_the_lab_shows_a_hostile_model_name_as_text(chromium, server, tmp_path):
    """Finding 1 of the third round: a trace whose `model` field is Markdown and HTML, opened and then read by the
    speed lab while its controls move, is shown as those characters: no image, no link, no request to another
    origin."""
    from hostile_cases import MODEL_MARKDOWN

    url, _ = server
    page = watched(chromium, url)
    path = tmp_path / "model.json"
    path.write_bytes(CASES["model_markdown_lab"].data())
    upload_run(page, path)
    page.click("#mode-lab")
    page.wait_for_selector("#lab-prediction")
    for device in ("a100-80gb", "h100", "cpu"):
        page.select_option("#lab-device", device)
        page.wait_for_timeout(150)
    page.select_option("#lab-device", "h100")
    lab = page.locator(".lab-text")
    assert lab.locator("img, a[href*='evil'], a[href*='attacker'], h1, strong").count() == 0
    assert MODEL_MARKDOWN[:36] in lab.inner_text(), "the model's name is quoted as text in the lab's note"
    assert_clean(page)
    page.close()


def test_a_runs_title_and_model_name_are_named_and_isolated(chromium, server, tmp_path):
    """Issue 39, finding 3: a title ending in U+202E "gnp.exe" showed as "exe.png" in the page, the export and the
    browser tab, and a model name with U+202E reversed the device, dtype and date after it. Text from a run shown as
    a label goes through one rule (`Lade.dom.label`): its invisible and bidirectional controls named, isolated in a
    <bdi>; the tab, which cannot isolate, gets the named text."""
    from hostile_cases import BIDI_MODEL, BIDI_TITLE

    named = {"\u202e": "⟨U+202E⟩", "\u2067": "⟨U+2067⟩"}
    title, model = ("".join(named.get(c, c) for c in text) for text in (BIDI_TITLE, BIDI_MODEL))
    path = tmp_path / "bidi.json"
    path.write_bytes(CASES["title_and_model_bidi"].data())
    url, _ = server
    page = watched(chromium, url)
    upload_run(page, path)
    export = tmp_path / "bidi.html"
    export.write_text(render_html(parse_run(path.read_bytes())), encoding="utf-8")
    replay = chromium.new_page()
    replay.goto(export.as_uri())
    replay.wait_for_function("() => document.title !== 'Lookahead decoding replay'")
    for shown in (page, replay):
        assert shown.locator(".run-title bdi").first.inner_text() == title
        labels = shown.locator("#run-settings bdi").all_inner_texts()
        assert labels[0] == model and len(labels) >= 3, labels  # the model, the device and the date: each isolated
        assert not any(c in shown.inner_text(".runbar") for c in named)
    assert replay.title() == title
    assert_clean(page)
    page.close()
    replay.close()
