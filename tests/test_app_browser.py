"""The running app in a real browser (Playwright + Debian Chromium), as a first-time visitor, a lecturer and a
student use it: the lesson first, every chapter forward and back with its question answered and its sentences
checked against the trace, each "try it yourself" into the explorer, stepping without the server, deep links and
embeds, a live race, and the same lesson on a run recorded at test time from a prompt that is not in the gallery.

One app server (with the model) for the module. Screenshots go to out/screenshots/, the measured first view, key
latency and Play rate to out/measurements.json (BENCHMARKS.md takes its browser figures from there).
"""

import json
import statistics
import subprocess
import sys
import time

import pytest

from app import gallery
from app.lab_ui import lesson_data
from conftest_app import OUT, SHOTS, chromium_browser, serve_app
from lade_core import parse_run
from lade_core.paths import ROOT
from lesson_facts import answer, facts

pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.server, pytest.mark.browser]
MEASURED: dict = {}
LESSON = gallery.by_role("lookahead")
FRESH_PROMPT = "Explain in two sentences why the moon has phases."  # not a gallery prompt


@pytest.fixture(scope="module")
def server():
    with serve_app(["app.py"], "app-test.log") as (url, _):
        yield url
    (OUT / "measurements.json").write_text(json.dumps(MEASURED, indent=2))


@pytest.fixture(scope="module")
def chromium(server):
    with chromium_browser() as browser:
        yield browser


def new_page(chromium, width=1280, height=900, **options):
    page = chromium.new_page(viewport={"width": width, "height": height}, **options)
    page.set_default_timeout(60_000)
    page.server_requests = []
    page.on("request", lambda r: page.server_requests.append(r.url) if "/gradio_api/" in r.url else None)
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    return page


def stage(page, expr):
    return page.evaluate(f"() => window.ladeStage.{expr}")


def run_named(name: str):
    return gallery.load(name)


def read_facts(page) -> tuple[dict, int, str]:
    text = page.locator("#lesson-text")
    shown = {el.get_attribute("data-fact"): el.inner_text() for el in page.locator("#lesson-text .fact").all()}
    return shown, int(text.get_attribute("data-step")), text.get_attribute("data-run")


def check_facts(chapter: int, shown: dict, run, k: int, lab: dict | None = None) -> None:
    want = facts(chapter, run, k, lab)
    for name, value in shown.items():
        assert name in want, (chapter, name)
        if isinstance(want[name], float):
            assert abs(float(shown[name]) - want[name]) <= 0.011 * max(1, abs(want[name])), (chapter, name, shown, want)
        else:
            assert shown[name] == str(want[name]), (chapter, name, shown[name], want[name])
    assert set(want) - {"step_right", "step_kept", "winner", "matched", "identical"} <= set(shown), (chapter, shown)


def open_lesson(chromium, server, width=1280, height=900):
    page = new_page(chromium, width, height)
    page.goto(server)
    page.wait_for_selector("#lesson-text .fact")
    return page


def walk_chapter(page, chapter, runs, lab, shots=None):
    """Check the chapter's sentences against its run, answer its question, check the answer with the trace."""
    page.wait_for_function(f"() => document.querySelector('#lesson-text') && "
                           f"document.querySelector('#lesson-text').dataset.chapter == '{chapter}'")
    shown, k, name = read_facts(page)
    run = runs(name)
    check_facts(chapter, shown, run, k, lab)
    if shots:
        page.screenshot(path=str(SHOTS / f"{shots}-chapter{chapter}.png"), full_page=False)
    if page.locator("#lesson-predict button.option").count():
        want = answer(chapter, run, k, lab)
        page.locator("#lesson-predict button.option").first.click()
        page.wait_for_selector("#lesson-answer")
        assert int(page.get_attribute("#lesson-answer", "data-option")) == want, chapter
        # the reveal moved the page to the step the question was about; the sentences follow it
        shown, k2, _ = read_facts(page)
        check_facts(chapter, shown, run, k2, lab)
    return name, k


def test_the_first_screen_is_the_lesson(chromium, server):
    """Issue 14: the first-time visitor sees chapter 1 with a view in focus on the first screen, not controls."""
    page = new_page(chromium)
    t0 = time.perf_counter()
    page.goto(server)
    page.wait_for_selector("#lesson-text .fact")
    page.wait_for_selector("#ar-output .tk")
    MEASURED["first_view_s"] = round(time.perf_counter() - t0, 2)
    assert stage(page, "mode") == "lesson" and page.locator("#lesson-text").is_visible()
    box = page.locator("#ar-output").bounding_box()
    assert box["y"] < 900, box
    sidebar = page.locator("#sidebar").bounding_box()
    assert sidebar["x"] + sidebar["width"] <= 1, sidebar  # the controls wait in the closed sidebar, off screen
    page.screenshot(path=str(SHOTS / "page-first-screen.png"))
    assert page.errors == []
    page.close()


@pytest.mark.parametrize("width, height", [(1280, 900), (390, 844)])
def test_every_chapter_forward_and_back(chromium, server, width, height):
    """Issue 14: every chapter's computed sentences match the trace it shows, each question is answered from the
    trace, and Back walks the same way home."""
    page = open_lesson(chromium, server, width, height)
    lab = lesson_data()
    for chapter in range(1, 9):
        walk_chapter(page, chapter, run_named, lab, shots=f"lesson-{width}")
        if chapter < 8:
            page.click("#lesson-next")
    for chapter in range(8, 0, -1):
        page.wait_for_function(f"() => document.querySelector('#lesson-text').dataset.chapter == '{chapter}'")
        shown, k, name = read_facts(page)
        check_facts(chapter, shown, run_named(name), k, lab)
        if chapter > 1:
            page.click("#lesson-prev")
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 1 and page.errors == []
    page.close()


def test_each_try_it_opens_the_explorer_at_that_state(chromium, server):
    page = open_lesson(chromium, server)
    for chapter in range(1, 9):
        page.evaluate(f"() => window.Lade.lesson.show(window.ladeStage, {chapter})")
        page.wait_for_function(f"() => document.querySelector('#lesson-text').dataset.chapter == '{chapter}'")
        name, k = stage(page, "current"), stage(page, "k")
        page.click("#lesson-try")
        page.wait_for_function("() => window.ladeStage && window.ladeStage.mode === 'explorer'")
        assert (stage(page, "current"), stage(page, "k")) == (name, k)
        for view in ("ar-output", "window-view", "verify-view", "mask-view"):
            assert page.locator(f"#{view}").is_visible() and "dim" not in page.get_attribute(f"#{view}", "class")
        page.click("button.mode[data-mode=lesson]")
    page.close()


def test_stepping_asks_nothing_of_the_server_and_is_fast(chromium, server):
    """Issue 13: keys on the whole page, the buttons and the slider make no request; the playback bar stays in
    sight while the views scroll; key-to-update latency and the Play rate are measured."""
    page = new_page(chromium)
    page.goto(server + "?run=code-class&step=3")
    page.wait_for_function("() => window.ladeStage && window.ladeStage.mode === 'explorer' && window.ladeStage.k === 3")
    # the page's last exchange with the server: it acknowledged the opened run and the server answered
    page.wait_for_function("() => window.ladeStage.released === window.ladeStage.seq")
    time.sleep(1)
    page.server_requests.clear()
    for key in ("ArrowRight", "ArrowRight", "ArrowLeft", "End", "Home"):
        page.keyboard.press(key)
    page.click("#step-next"), page.click("#step-prev")
    page.locator("#step-slider").fill("20")
    assert stage(page, "k") == 20
    page.mouse.wheel(0, 2000)
    time.sleep(0.3)
    bar = page.locator(".playbar").bounding_box()
    assert 0 <= bar["y"] < 60, bar  # sticky
    latencies = page.evaluate("""async () => {
        const out = [];
        window.ladeStage.go(0);
        for (let i = 0; i < 100; i++) {
            const t0 = performance.now();
            document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight', bubbles: true}));
            await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
            out.push(performance.now() - t0);
        }
        return out;
    }""")
    latencies.sort()
    MEASURED["key_to_update_ms"] = {"median": round(statistics.median(latencies), 1),
                                   "p95": round(latencies[94], 1), "steps": 100}
    rate = page.evaluate("""async () => {
        const s = window.ladeStage; s.speed = 30; s.go(0);
        const r0 = s.k, t0 = performance.now(); s.play();
        await new Promise(r => setTimeout(r, 2000));
        const steps = s.k - r0, secs = (performance.now() - t0) / 1000; s.pause();
        return steps / secs;
    }""")
    MEASURED["play_steps_per_s_at_30"] = round(rate, 1)
    assert rate >= 20, rate
    assert page.server_requests == [], page.server_requests
    page.close()


def test_deep_links_and_embeds(chromium, server):
    """?run&step opens the explorer there; &view=...&embed=1 shows that view alone with its own step controls;
    ?lesson=K opens chapter K (embeddable too); a bad link falls back with a one-line notice."""
    page = new_page(chromium)
    page.goto(server + "?run=code-fib&step=12")
    page.wait_for_function("() => window.ladeStage && window.ladeStage.current === 'code-fib-W7N4G7' && window.ladeStage.k === 12")
    page.goto(server + "?run=code-class&step=9&view=mask-view&embed=1")
    page.wait_for_function("() => window.ladeStage && window.ladeStage.embed && window.ladeStage.k === 9")
    assert page.locator("#mask-view").is_visible() and page.locator("#step-slider").is_visible()
    for hidden in ("#window-view", "#ar-output", ".modes", "#sidebar", "#lab"):
        assert page.locator(hidden).count() == 0 or page.locator(hidden).first.is_hidden(), hidden
    page.screenshot(path=str(SHOTS / "embed-mask-view.png"))
    page.goto(server + "?run=code-class&view=outputs&embed=1")
    page.wait_for_function("() => window.ladeStage && window.ladeStage.embed && window.ladeStage.embed.view === 'outputs'")
    assert page.locator("#la-output").is_visible() and page.locator("#mask-view").is_hidden()
    page.goto(server + "?lesson=3&embed=1")
    page.wait_for_function("() => document.querySelector('#lesson-text') && "
                           "document.querySelector('#lesson-text').dataset.chapter == '3'")
    assert page.locator(".modes").is_hidden() and page.locator("#window-view").is_visible()
    page.screenshot(path=str(SHOTS / "embed-lesson-3.png"))
    page.goto(server + "?run=![x](http://attacker/p.png)&step=[evil](https://evil.example)")
    page.wait_for_selector(".notice:not([hidden])")
    notice = page.inner_text(".notice")
    assert "No gallery run" in notice and page.locator(".notice a, .notice img").count() == 0
    page.close()


@pytest.mark.model
def test_a_live_race_advances_both_lanes(chromium, server):
    """Issue 15: during a live run both methods advance on one clock; both lanes move before either finishes."""
    page = new_page(chromium)
    page.goto(server + "?run=code-class")
    page.wait_for_function("() => window.ladeStage && window.ladeStage.mode === 'explorer'")
    page.click("#run-yourself")
    page.fill("#prompt textarea", "List three uses of a hash map, one line each.")
    box = page.locator("#max-new-tokens input[type=number]")
    box.fill("40")
    box.press("Enter")
    page.click("#run")
    both = None
    deadline = time.time() + 240
    while time.time() < deadline:
        lanes = page.evaluate("() => Object.fromEntries([...document.querySelectorAll('.race .lane')]"
                              ".map(l => [l.dataset.lane, +l.dataset.tokens]))")
        done = page.evaluate("() => { const r = window.ladeStage.runs.get('live'); return r ? "
                             "[r.t.parallel.stop_reason, r.t.baseline.stop_reason] : []; }")
        if lanes and all(v >= 3 for v in lanes.values()) and "running" in done and both is None:
            both = lanes
        if done and "running" not in done:
            break
        time.sleep(0.25)
    assert both and all(v < 40 for v in both.values()), both
    page.wait_for_function("() => window.ladeStage.runs.get('live').t.parallel.stop_reason !== 'running'")
    run = page.evaluate("() => window.ladeStage.runs.get('live').t")
    assert run["parallel"]["tokens"] == run["baseline"]["tokens"] and len(run["parallel"]["tokens"]) == 40
    page.screenshot(path=str(SHOTS / "live-race.png"))
    assert page.errors == []
    page.close()


@pytest.mark.model
def test_the_lesson_on_a_run_recorded_now(chromium, server, tmp_path):
    """Issue 14: a chapter opened on another run still says true things about it: record a run now with the
    command line, open it from a file, open the lesson on it, and check every chapter's sentences."""
    path = tmp_path / "moon.json"
    out = subprocess.run([sys.executable, "-m", "lade_core", "trace", "--prompt", FRESH_PROMPT, "--max-new-tokens",
                          "48", "--title", "moon phases", "--out", str(path)], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    recorded = parse_run(path.read_bytes())
    page = new_page(chromium)
    page.goto(server + "?run=code-class")
    page.wait_for_function("() => window.ladeStage && window.ladeStage.mode === 'explorer'")
    page.click("#run-yourself")
    with page.expect_file_chooser() as chooser:
        page.click("#open-run")
    chooser.value.set_files(str(path))
    page.wait_for_function("() => window.ladeStage && window.ladeStage.current && window.ladeStage.current.startsWith('moon')")
    page.click("#teach-this")

    def runs(name):
        return recorded if name.startswith("moon") else run_named(name)

    for chapter in range(1, 9):
        name, _ = walk_chapter(page, chapter, runs, lesson_data())
        if chapter not in (2,):
            assert name.startswith("moon"), (chapter, name)
        if chapter < 8:
            page.click("#lesson-next")
    assert page.errors == []
    page.close()


def test_download_and_export_of_the_run_on_screen(chromium, server, tmp_path):
    page = new_page(chromium, accept_downloads=True)
    page.goto(server + "?run=code-bsearch")
    page.wait_for_function("() => window.ladeStage && window.ladeStage.current === 'code-bsearch-W7N4G7'")
    page.click("#run-yourself")
    with page.expect_download() as info:
        page.click("#download-trace")
    info.value.save_as(tmp_path / "t.json")
    assert parse_run((tmp_path / "t.json").read_bytes()) == run_named("code-bsearch-W7N4G7")
    page.click("#export-html")
    page.wait_for_selector("#export-file:not([hidden])")
    with page.expect_download() as info:
        page.click("#export-file")
    info.value.save_as(tmp_path / "t.html")
    assert (tmp_path / "t.html").stat().st_size < 1.5 * 2**20
    page.close()
