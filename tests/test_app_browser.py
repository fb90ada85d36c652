"""The running app in a real browser (Playwright + Debian Chromium), as a first-time visitor, a lecturer and a
student use it: the lesson first, every chapter forward and back with its landing step, its sentences checked
against the trace (tests/lesson_facts.py) and its question answered, each "try it yourself" into the explorer,
stepping without the server, deep links and embeds, the download and the export; with the model, a live race to
its finish, and the same lesson on a run recorded at test time from a prompt that is not in the gallery.

Most tests share one app server started WITHOUT the model (the lesson, the gallery and saved traces need none);
the live race starts its own server with the model. Screenshots go to out/screenshots/, the measured first view
and key latency to out/measurements.json (BENCHMARKS.md takes its browser figures from there).
"""

import json
import statistics
import subprocess
import sys
import time

import pytest
from conftest_app import (
    CHAPTERS,
    OUT,
    SHOTS,
    lab_settled,
    new_page,
    open_app,
    run_off,
    serve_app,
    settled,
    state,
    upload,
)
from lesson_facts import OPTIONS, answer, assert_facts, drift, landing, last_step, shown_facts

from app import gallery
from app.captions import bench_speedups
from lade_core import parse_run
from lade_core.paths import ROOT

pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.server, pytest.mark.browser]
MEASURED: dict = {}
FRESH_PROMPT = "Explain in two sentences why the moon has phases."  # not a gallery prompt
CHAPTER_LIST = (
    "() => Lade.lesson.CHAPTERS.map(c => ({ title: c.title, role: c.role, rules: c.start.map(r => r.rule) }))"
)


@pytest.fixture(scope="module")
def server(page_server):
    yield page_server[0]
    (OUT / "measurements.json").write_text(json.dumps(MEASURED, indent=2))


@pytest.fixture(scope="module")
def model_server():
    """The app with its model, for live runs (started only when a test asks for it)."""
    with serve_app(["app.py"], "app-model-test.log", OMP_NUM_THREADS="1") as (url, _):
        yield url


def gallery_run(name: str):
    return gallery.load(name)


def bench_of(name: str, run) -> list:
    """The bench's speed-ups the page has for a run: a gallery run's, none for any other."""
    return bench_speedups(run) if name in gallery.names() else []


def page_lab(page) -> dict | None:
    """The speed lab's data the page carries (what chapter 7 reads besides the run)."""
    return page.evaluate("() => window.ladeStage.boot.lab")


def open_lesson(chromium, server, width=1280, height=900):
    page = new_page(chromium, width, height)
    open_app(page, server, "document.querySelector('#lesson-text .fact')")
    return page


def at_chapter(page, chapter: int) -> None:
    page.wait_for_function(
        "n => { const t = document.querySelector('#lesson-text'); return t && t.dataset.chapter == n; }", arg=chapter
    )


def walk_chapter(page, chapter, runs, lab, chapters, shots=None):
    """The chapter opens where its rules say, states what the trace says, and its question's answer is the
    trace's; the reveal moves to the step asked about and the sentences follow."""
    at_chapter(page, chapter)
    lab_settled(page)  # chapter 8 reads the run's lab figures, which come after it is drawn
    title = chapters[chapter - 1]["title"]
    assert page.inner_text("#lesson-title") == title
    shown, k, name = shown_facts(page)
    run = runs(name)
    assert int(page.get_attribute("#lesson-text", "data-start")) == landing(chapters[chapter - 1]["rules"], run)[0] == k
    assert_facts(title, shown, run, k, lab, bench_of(name, run))
    if shots:
        page.screenshot(path=str(SHOTS / f"{shots}-chapter{chapter}.png"))
    if title in OPTIONS:
        options = page.locator("#lesson-predict button.option")
        shown = sorted((int(o.get_attribute("data-option")), o.inner_text().strip()) for o in options.all())
        assert [label for _, label in shown] == OPTIONS[title]  # in scale order (a scale may be shown running down)
        option, then = answer(title, run, k, lab)
        options.first.click()
        page.wait_for_selector("#lesson-answer")
        assert int(page.get_attribute("#lesson-answer", "data-option")) == option, chapter
        shown, k2, _ = shown_facts(page)
        assert k2 == min(then, last_step(run))
        assert_facts(title, shown, run, k2, lab, bench_of(name, run))
    return name, k


def test_the_first_screen_is_the_lesson(chromium, server):
    """A first-time visitor sees chapter 1 with its view on the first screen, not controls; chapter 1 shows the
    baseline lane only (the lookahead lane would talk ahead of the lesson)."""
    page = new_page(chromium)
    t0 = time.perf_counter()
    open_app(page, server, "document.querySelector('#lesson-text .fact')")
    page.wait_for_selector("#ar-output .tk")
    MEASURED["first_view_s"] = round(time.perf_counter() - t0, 2)
    assert state(page, "mode") == "lesson" and page.locator("#lesson-text").is_visible()
    assert page.locator("#ar-output").bounding_box()["y"] < 900
    assert page.locator("#la-output").count() == 0 or page.locator("#la-output").is_hidden()
    assert page.locator("#progress-plot .chart-legend .key").all_inner_texts() == ["greedy"]
    sidebar = page.locator("#sidebar").bounding_box()
    assert sidebar is None or sidebar["x"] + sidebar["width"] <= 1, sidebar  # the controls wait in the closed sidebar
    page.screenshot(path=str(SHOTS / "page-first-screen.png"))
    assert page.errors == []
    page.close()


@pytest.mark.parametrize("width, height", [(1280, 900), (390, 844)])
def test_every_chapter_forward_and_back(chromium, server, width, height):
    """Every chapter opens where its rules say, its computed sentences match the trace it shows, each question is
    answered from the trace, and Back walks the same way home."""
    page = open_lesson(chromium, server, width, height)
    lab, chapters = page_lab(page), page.evaluate(CHAPTER_LIST)
    assert len(chapters) == CHAPTERS
    for chapter in range(1, CHAPTERS + 1):
        walk_chapter(page, chapter, gallery_run, lab, chapters, shots=f"lesson-{width}")
        assert run_off(page) == [], chapter
        if chapter < CHAPTERS:
            page.click("#lesson-next")
    assert page.get_attribute("#lesson-next", "aria-disabled") == "true"
    for chapter in range(CHAPTERS, 0, -1):
        at_chapter(page, chapter)
        shown, k, name = shown_facts(page)
        run = gallery_run(name)
        assert_facts(chapters[chapter - 1]["title"], shown, run, k, lab, bench_of(name, run))
        if chapter > 1:
            page.click("#lesson-prev")
    assert page.get_attribute("#lesson-prev", "aria-disabled") == "true"
    page.click("#lesson-prev", force=True)  # at the first chapter Back does nothing (and stays focusable)
    at_chapter(page, 1)
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 1 and page.errors == []
    page.close()


def test_each_try_it_opens_the_explorer_at_that_state(chromium, server):
    page = open_lesson(chromium, server)
    for chapter in range(1, CHAPTERS + 1):
        page.evaluate("n => window.ladeStage.chapter(n)", chapter)
        at_chapter(page, chapter)
        name, k = state(page, "current"), state(page, "k")
        page.click("#lesson-try")
        page.wait_for_function("() => window.ladeStage.state.mode === 'explorer'")
        assert (state(page, "current"), state(page, "k")) == (name, k)
        for view in ("ar-output", "window-view", "verify-view", "mask-view"):
            assert page.locator(f"#{view}").is_visible(), view
        assert page.locator(".lesson-focus").count() == 0
        page.click("#mode-lesson")
        page.wait_for_function("() => window.ladeStage.state.mode === 'lesson'")
    assert page.errors == []
    page.close()


def test_stepping_asks_nothing_of_the_server(chromium, server):
    """Keys on the whole page, the buttons and the slider make no request; the playback bar stays in sight while
    the views scroll; Play draws once per step it moves. Key-to-update latency is measured (not asserted)."""
    page = new_page(chromium)
    open_app(page, server + "?run=code-class&step=3", "s.state.mode === 'explorer' && s.state.k === 3")
    settled(page)
    page.server_requests.clear()
    page.evaluate("document.activeElement && document.activeElement.blur()")
    for key in ("ArrowRight", "ArrowRight", "ArrowLeft", "End", "Home"):
        page.keyboard.press(key)
    assert state(page, "k") == 0
    page.click("#step-next")
    page.click("#step-prev")
    page.locator("#step-slider").fill("20")
    assert state(page, "k") == 20
    page.mouse.wheel(0, 2000)
    page.wait_for_function("() => window.scrollY > 500")
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
    MEASURED["key_to_update_ms"] = {
        "median": round(statistics.median(latencies), 1),
        "p95": round(latencies[94], 1),
        "steps": 100,
    }
    played = page.evaluate("""async () => {
        const s = window.ladeStage; s.set({ speed: 30 }); s.go(0);
        const r0 = s.renders, t0 = performance.now(); s.play();
        await new Promise(r => setTimeout(r, 2000));
        const out = { steps: s.state.k, renders: s.renders - r0, seconds: (performance.now() - t0) / 1000 };
        s.toggle();
        return out;
    }""")
    MEASURED["play_steps_per_s_at_30"] = round(played["steps"] / played["seconds"], 1)
    assert played["steps"] > 0 and played["renders"] <= played["steps"] + 2, played
    assert page.server_requests == [], page.server_requests
    page.close()


def test_deep_links_and_embeds(chromium, server):
    """?run&step opens the explorer there; &view=...&embed=1 shows that view alone with its own step controls and
    a link that opens the full app in a new tab; ?lesson=K opens chapter K (embeddable too, with "Try it yourself"
    opening a new tab); a bad link falls back with a one-line notice."""
    page = new_page(chromium)
    open_app(page, server + "?run=code-fib&step=12", "s.state.current === 'code-fib-W7N4G7' && s.state.k === 12")
    assert state(page, "mode") == "explorer" and page.get_attribute(".lade-host", "data-step") == "12"
    open_app(page, server + "?run=code-class&step=9&view=mask-view&embed=1", "s.state.embed && s.state.k === 9")
    assert state(page, "embed") == {"view": "mask-view", "from": 9, "to": 9}  # a slide of its one step
    assert page.locator("#mask-view").is_visible() and page.locator("#step-slider").is_visible()
    for hidden in ("#window-view", "#ar-output", ".modes", "#sidebar", "#lab"):
        assert page.locator(hidden).count() == 0 or page.locator(hidden).first.is_hidden(), hidden
    link = page.locator(".open-app")
    assert link.is_visible() and link.get_attribute("target") == "_blank"
    assert "embed" not in link.get_attribute("href") and "run=code-class" in link.get_attribute("href")
    page.screenshot(path=str(SHOTS / "embed-mask-view.png"))
    open_app(page, server + "?run=code-class&view=outputs&embed=1", "s.state.embed && s.state.embed.view === 'outputs'")
    assert page.locator("#la-output").is_visible() and page.locator("#mask-view").is_hidden()
    open_app(page, server + "?lesson=3&embed=1", "document.querySelector('#lesson-text')")
    at_chapter(page, 3)
    assert page.locator(".modes").is_hidden() and page.locator("#window-view").is_visible()
    assert page.get_attribute("#lesson-try", "target") == "_blank"
    for a in page.locator("#stage a[href]").all():  # nothing in a slide turns it into the app
        if a.is_visible() and a.get_attribute("class") != "skip":
            assert a.get_attribute("target") == "_blank", a.get_attribute("href")
    page.screenshot(path=str(SHOTS / "embed-lesson-3.png"))
    open_app(page, server + "?run=![x](http://attacker/p.png)&step=[evil](https://evil.example)", "s.run()")
    assert page.locator(".notice").is_visible(), "a link naming no gallery run says nothing"
    notice = page.inner_text(".notice")
    assert "No gallery run" in notice and page.locator(".notice a, .notice img").count() == 0
    page.close()


def test_download_and_export_of_the_run_on_screen(chromium, server, tmp_path):
    """The sidebar's links follow the run on screen, whichever way it opened (a link, then the gallery menu: no
    round trip to the server), and download it from its address."""
    page = new_page(chromium, accept_downloads=True)
    open_app(page, server + "?run=code-bsearch", "s.state.current === 'code-bsearch-W7N4G7'")
    page.click("#run-yourself")
    assert page.get_attribute("#download-trace", "href") == "runs/code-bsearch-W7N4G7/trace.json"
    page.evaluate("() => window.ladeStage.open('code-fib-W7N4G7', null)")
    page.wait_for_function("() => document.querySelector('#export-html').getAttribute('href').includes('code-fib')")
    with page.expect_download() as info:
        page.click("#download-trace")
    info.value.save_as(tmp_path / "t.json")
    assert parse_run((tmp_path / "t.json").read_bytes()) == gallery_run("code-fib-W7N4G7")
    with page.expect_download() as info:
        page.click("#export-html")
    info.value.save_as(tmp_path / "t.html")
    text = (tmp_path / "t.html").read_text(encoding="utf-8")
    assert (tmp_path / "t.html").stat().st_size < 1.5 * 2**20 and 'id="lade-run"' in text
    page.close()


def lanes_of(page) -> dict:
    return page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('.race .lane')].map(l =>
        [l.dataset.lane, { tokens: +l.dataset.tokens, done: l.dataset.done === '1',
                           width: parseFloat(l.querySelector('.fill').style.width),
                           now: +l.querySelector('[role=meter]').getAttribute('aria-valuenow'),
                           max: +l.querySelector('[role=meter]').getAttribute('aria-valuemax') }]))""")


def step_seconds(step: dict) -> float:
    """A recorded step's seconds on the race's clock: its forward, the engine's work around it and any drafting."""
    return step["forward_s"] + step["overhead_s"] + step.get("draft_s", 0)


def read_wait(page, box, tokens: int, seconds: float = 180) -> str:
    """The words under Run once they predict the race as set (`tokens` new tokens). While the model loads they say
    the wait is not predicted; max new tokens is then set again, which asks again."""
    deadline = time.monotonic() + seconds
    while f"then writing {tokens}, each at" not in (text := page.inner_text("#run-wait")):
        assert time.monotonic() < deadline and "would be refused" not in text, text
        if "has not loaded" in text or "still measuring" in text:
            for value in (tokens - 1, tokens):
                box.fill(str(value))
                box.press("Enter")
        page.wait_for_timeout(1000)
    return text


def assert_expected_wait(before: str, during: str, running: str, run: dict, note: str) -> None:
    """The sentences under Run: before Run, the race alone, a bound read off this server's own curve (measured at
    start-up, the way a race runs) with the engine's measured work between forwards and its pace, for the prompt's
    tokens the race then read and 40 new tokens. The race, promised that bound again when Run asked (its `running`
    status says it), then took no longer, or the finished race's `note` says it took longer and why, in numbers its
    record holds: a lane's seconds, its steps or their average against what the bound allowed (CI's other test workers
    slowed a race past its bound, and the page said nothing). With the race running, one run ahead of a race of 41
    tokens: the total is the two bounds added."""
    import re

    from app.wait import duration

    seconds = lambda text: float(re.search(r"Expected wait: up to about ([0-9.]+) s", text).group(1))  # noqa: E731
    assert "no run is ahead of it" in before and "from the cost curve measured here" in before, before
    assert f"prompt's {len(run['prompt_ids'])} tokens, then writing 40, each at the fewest" in before, before
    assert "plus the engine's measured work between forwards" in before, before
    took = {lane: sum(map(step_seconds, run[lane]["steps"])) for lane in ("parallel", "baseline")}
    promised = float(re.search(r"(?:promised it up to about|longer than the) ([0-9.]+) s", running).group(1))
    shown = 0.5 if promised >= 10 else 0.05  # the promise as the page rounds it (`wait.duration`)
    assert abs(promised - seconds(before)) <= 0.25 * seconds(before) + shown, (running, before)  # the same bound
    if sum(took.values()) > promised + shown or note:  # the bound did not hold: the race says so, from its record
        assert re.match(r"This race took .* on the engine, longer than the .* the expected wait promised", note), note
        named = {"Lookahead": "parallel", "Greedy": "baseline"}
        for name, lane in named.items():
            steps = [step_seconds(s) for s in run[lane]["steps"]]
            said = re.search(
                rf"{name} took ([0-9.]+ s) where its share of the bound was [0-9.]+ s: (.*?)\.(?: [A-Z]|$)", note
            )
            if said:  # the lane's seconds, and its steps or their average against what the bound allowed
                assert said[1] == duration(sum(steps)), (name, note)
                counted = re.search(r"^(\d+) steps where it allowed (\d+)", said[2])
                assert counted is None or int(counted[1]) == len(steps) > int(counted[2]), (name, note)
                average = re.search(r"(\d+) ms a step on average where it allowed (\d+) ms", said[2])
                assert average is None or int(average[1]) == round(1000 * sum(steps) / len(steps)), (name, note)
                assert average is None or int(average[1]) > int(average[2]), note
                assert counted or average, note
        assert any(f"{name} took" in note for name in named) or "went between its steps" in note, note
        assert "1-minute load went from" in note or "load was not measured" in note, note
    assert "1 run is ahead of it in the engine's queue right now" in during and seconds(during) > seconds(before)
    assert f"predicted at up to about {duration(seconds(before))}" in during or "predicted at up to about" in during
    (OUT / "run-wait.json").write_text(json.dumps({"before": before, "during": during, "took_s": took}, indent=1))


@pytest.mark.model
def test_a_live_race_advances_both_lanes_and_ends_with_a_result(chromium, model_server):
    """During a live run both methods advance on one clock (both move before either finishes); when both finish
    each lane says done, the banner names who finished first and whether the texts are identical, the bars fill to
    the tokens written, the run is titled from its prompt; the race box goes when a gallery run opens."""
    prompt = "List three uses of a hash map, one line each."
    page = new_page(chromium)
    open_app(page, model_server + "?run=code-class", "s.state.mode === 'explorer'")
    page.click("#run-yourself")
    page.fill("#prompt textarea", prompt)
    box = page.locator("#max-new-tokens input[type=number]")
    box.fill("40")
    box.press("Enter")
    # before Run, the expected wait for the race as set (app/wait.py): nothing ahead, this race's lanes off the curve
    before = read_wait(page, box, 40)
    page.locator("#prompt").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "run-wait-sidebar.png"))
    page.click("#run")
    page.wait_for_function("() => window.ladeStage.state.live && document.querySelector('.race .lane')")
    # with the race running, a setting changed: the wait counts that race ahead in the engine's queue
    box.fill("41")
    box.press("Enter")
    page.wait_for_function("() => /1 run is ahead/.test(document.querySelector('#run-wait').innerText)")
    during = page.inner_text("#run-wait")
    both, deadline = None, time.monotonic() + 300
    while time.monotonic() < deadline:
        lanes = lanes_of(page)
        moving = lanes and all(v["tokens"] >= 3 for v in lanes.values()) and not any(v["done"] for v in lanes.values())
        if both is None and moving:
            both, running = lanes, page.inner_text(".race-title")
            page.screenshot(path=str(SHOTS / "live-race-running.png"))
        if lanes and all(v["done"] for v in lanes.values()):
            break
        page.wait_for_timeout(250)
    assert both and all(v["tokens"] < 40 for v in both.values()), both
    page.wait_for_function("() => /^Finished\\./.test(document.querySelector('.race-title').innerText)")
    lanes, banner = lanes_of(page), page.inner_text(".race-title")
    handle = state(page, "live")
    run = page.evaluate("h => window.ladeStage.runs.get(h).t", handle)
    assert run["parallel"]["tokens"] == run["baseline"]["tokens"] and "identical" in banner
    # the verdict, read again by the one noise rule's definition (tests/lesson_facts.py: the spreads on file, or
    # this race's own greedy drift where wider): each lane against greedy, then the first two against each other,
    # "about together" within the band
    time_of = lambda m: sum(map(step_seconds, m["steps"]))  # noqa: E731
    floor = run.get("machine", {}).get("noise", 0.0)
    band = max(floor if floor >= 1 else 1.0, drift([step_seconds(s) for s in run["baseline"]["steps"][1:]]) or 1.0)
    speedup = time_of(run["baseline"]) / time_of(run["parallel"])
    verdict = "faster than" if speedup > band else "slower than" if speedup < 1 / band else "about as fast as"
    assert f"Lookahead ran at {speedup:.2f}x greedy's speed ({verdict} greedy)" in banner, banner
    (first, t1), (second, t2) = sorted(
        [("Lookahead", time_of(run["parallel"])), ("Greedy", time_of(run["baseline"]))], key=lambda x: x[1]
    )
    if t2 <= band * t1:
        assert f"{first} and {second.lower()} finished about together" in banner and "are noise" in banner
    else:
        assert f"{first} finished first" in banner, banner
    written = max(len(run["parallel"]["tokens"]), len(run["baseline"]["tokens"]))
    for lane in lanes.values():
        assert lane["done"] and lane["max"] == written and lane["now"] == lane["tokens"]
        assert abs(lane["width"] - 100 * lane["tokens"] / written) < 0.11
    assert prompt.split()[0] in page.inner_text(".run-title") and "live" not in page.inner_text(".run-title").lower()
    page.screenshot(path=str(SHOTS / "live-race-finished.png"))
    note = page.inner_text(".race-note") if page.locator(".race-note").count() else ""
    assert_expected_wait(before, during, running, run, note)
    # a state axe had not walked: after a live race, the sidebar open (white on indigo 500 was found here)
    from test_a11y_browser import run_axe

    assert run_axe(page, "after-live-race-sidebar-open") == []
    page.select_option("#gallery-menu", "code-fib-W7N4G7")
    page.wait_for_function("() => window.ladeStage.state.current === 'code-fib-W7N4G7'")
    assert page.locator(".race-box .race").count() == 0
    assert page.errors == []
    page.close()


def test_the_app_serves_the_browser_engines_files_and_offers_the_race(chromium, model_server):
    """The app serves the browser engine's files at engine/ (only those: a path outside them is a 404), the manifest
    naming the hashes of every file the race's worker reads besides the GGUF (the graphs, the tokenizer, the runtime's
    binaries) and the runtime's builds, and its page offers "Race it in your browser" (the race itself: the soak tier,
    and the site's race in make test)."""
    import urllib.error
    import urllib.request

    with urllib.request.urlopen(model_server + "engine/manifest.json") as res:
        manifest = json.loads(res.read())
    runtimes = {r["binary"] for r in manifest["runtimes"].values()}
    assert manifest["chunks"] and manifest["weights"]["file"] and runtimes
    assert set(manifest["files"]) == {"forward.onnx", "keep.onnx", "tokenizer.json", *runtimes}
    for bad in ("engine/../app.py", "engine/ort/../../README.md", "engine/nothing.bin"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(model_server + bad)
        assert refused.value.code == 404, bad
    page = new_page(chromium)
    open_app(page, model_server + "?race=1", "s.landed && document.querySelector('#browser-race')")
    assert page.is_visible("#browser-race") and page.get_attribute("#race-browser", "aria-expanded") == "true"
    assert page.errors == []
    page.close()


@pytest.mark.soak
def test_the_app_races_in_the_visitors_browser_from_its_own_files(chromium, model_server):
    """The app's page races greedy against lookahead in the visitor's browser, from the app's own origin, beside the
    server's race: both lanes write the same tokens (greedy-exact), judged by the noise rule."""
    page = new_page(chromium)
    origins = set()
    page.on("request", lambda r: origins.add(r.url.split("/")[2]))
    open_app(page, model_server + "?run=code-class", "s.state.mode === 'explorer'")
    page.click("#race-browser")
    page.fill("#browser-race-prompt", FRESH_PROMPT)
    page.fill("#browser-race-tokens", "8")
    page.click("#browser-race-go")
    page.wait_for_function(
        "() => /^Done|could not|Stopped/.test(document.querySelector('#browser-race-status').textContent)",
        timeout=300_000,
    )
    status = page.inner_text("#browser-race-status")
    assert status.startswith("Done on your browser's WebAssembly"), status
    run = page.evaluate("() => window.ladeStage.run().t")
    assert run["parallel"]["tokens"] == run["baseline"]["tokens"] and len(run["baseline"]["tokens"]) == 8
    said = page.inner_text("#browser-race-sentences")
    threads = min(4, page.evaluate("() => navigator.hardwareConcurrency"))  # the app's page is isolated: all of them
    machine = f"browser: WebAssembly, {threads} thread{'' if threads == 1 else 's'}"
    assert "greedy's speed" in status and f"measured on your device: {machine}" in said, said
    assert origins == {model_server.split("/")[2]}, origins
    page.screenshot(path=str(SHOTS / "app-race-in-the-browser.png"))
    assert page.errors == []
    page.close()


@pytest.mark.model
def test_the_lesson_on_a_run_recorded_now(chromium, server, tmp_path):
    """A chapter opened on another run still says true things about it and opens where its rules say: record a
    run now with the command line (the model runs there), open it from a file, open the lesson on it, and walk
    every chapter."""
    path = tmp_path / "moon.json"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "lade_core",
            "trace",
            "--prompt",
            FRESH_PROMPT,
            "--max-new-tokens",
            "48",
            "--title",
            "moon phases",
            "--out",
            str(path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    recorded = parse_run(path.read_bytes())
    page = new_page(chromium)
    open_app(page, server + "?run=code-class", "s.state.mode === 'explorer'")
    page.click("#run-yourself")
    upload(page, path)
    page.wait_for_function("() => window.ladeStage.state.current.startsWith('u-')")
    mine = state(page, "current")
    page.click("#teach-this")
    chapters = page.evaluate(CHAPTER_LIST)

    def runs(name):
        return recorded if name == mine else gallery_run(name)

    for chapter in range(1, CHAPTERS + 1):
        name, _ = walk_chapter(page, chapter, runs, page_lab(page), chapters)
        role = chapters[chapter - 1]["role"]
        assert (name == mine) == (role == "lookahead"), (chapter, name)  # the Jacobi and race chapters keep theirs
        if chapter < CHAPTERS:
            page.click("#lesson-next")
    assert page.errors == []
    page.close()


def test_the_batch_dial_changes_the_prediction_and_says_why(chromium, server):
    """In the speed lab, a 7B model on an A100: at batch 1 the page predicts what `predict_run` predicts for the
    run on screen; moving the batch dial to 64 changes the prediction to `predict_run`'s at batch 64 and the page
    says why (the tokens fed per step in all, the forward's bound, where lookahead stops paying)."""
    from lade_core.measure.lab import predict_run

    page = new_page(chromium)
    open_app(page, server + "?run=code-class", "s.state.mode === 'explorer'")
    page.click("#mode-lab")
    page.wait_for_selector("#lab-prediction")
    page.select_option("#lab-device", "a100-80gb")
    page.select_option("#lab-size", "7B")
    page.wait_for_function("() => /A100/.test(document.querySelector('#lab-prediction').textContent)")
    run = gallery_run(state(page, "current"))
    value = lambda: float(page.get_attribute("#lab-prediction b[data-value]", "data-value"))  # noqa: E731
    one = predict_run(run, "a100-80gb", "7B")["predicted_speedup"]
    assert value() == pytest.approx(one, rel=1e-4)
    before = page.inner_text(".lab-text")
    page.select_option("#lab-batch", "64")
    page.wait_for_function("() => /serving 64 sequences/.test(document.querySelector('#lab-prediction').textContent)")
    at_64 = predict_run(run, "a100-80gb", "7B", batch=64)
    assert value() == pytest.approx(at_64["predicted_speedup"], rel=1e-4) and value() < one
    text = page.inner_text(".lab-text")
    assert text != before
    fed = sum(s.n_input for s in run.parallel.steps[1:]) / (len(run.parallel.steps) - 1)
    assert f"({round(64 * fed):,} in all)" in text
    assert f"the forward is {at_64['breakdown']['bound']}-bound" in text
    assert "stops paying at batch" in text or "keeps paying up to batch" in text
    assert page.errors == []
    page.close()


TERMS = """() => [...document.querySelectorAll('#lesson-text button.term')].map(b => ({ term: b.textContent,
    tip: document.getElementById(b.getAttribute('aria-describedby')).textContent }))"""


def test_each_term_opens_its_one_definition_on_hover_focus_and_tap(chromium, server):
    """The glossary: in every chapter each defined term is a button on its first use only, its tip is the one text
    the glossary holds for it (the same in every chapter), and the tip shows on hover, on keyboard focus and on a
    tap (click), and leaves on Escape."""
    page = open_lesson(chromium, server)
    glossary = page.evaluate("() => Lade.notes.GLOSSARY")
    lowered = {k.lower(): v for k, v in glossary.items()}
    seen_tips: dict = {}
    for chapter in range(1, CHAPTERS + 1):
        page.evaluate("n => window.ladeStage.chapter(n)", chapter)
        at_chapter(page, chapter)
        terms = page.evaluate(TERMS)
        words = [t["term"].lower() for t in terms]
        assert len(words) == len(set(words)), (chapter, words)  # a term is a button on its first use only
        for t in terms:
            key = next((k for k, v in lowered.items() if v == t["tip"]), None)
            assert key, (chapter, t)
            assert seen_tips.setdefault(key, t["tip"]) == t["tip"]
        if chapter in (1, 2):
            assert terms, f"chapter {chapter} defines its terms"
    page.evaluate("() => window.ladeStage.chapter(1)")
    at_chapter(page, 1)
    button = page.locator("#lesson-text button.term").first
    tip = page.locator(f"#{button.get_attribute('aria-describedby')}")
    assert tip.is_hidden()
    button.hover()
    assert tip.is_visible()
    page.mouse.move(0, 0)
    assert tip.is_hidden()
    button.focus()
    assert tip.is_visible()
    page.keyboard.press("Escape")
    page.evaluate("() => document.activeElement.blur()")
    button.click()
    page.mouse.move(0, 0)
    assert tip.is_visible(), "a tap keeps the definition open"
    assert {"argmax", "kv cache", "mt-bench", "least recently added"} <= set(seen_tips), sorted(seen_tips)
    assert page.errors == []
    page.close()


@pytest.mark.parametrize("name", gallery.names())
def test_the_identical_badge_shows_only_when_the_run_on_screen_is(chromium, server, name):
    """The explorer's badge says "identical to greedy" with the token count and dtype only when the run's texts
    are token for token the same; a sampled run gets no badge (neither lane is greedy)."""
    run = gallery_run(name)
    page = new_page(chromium)
    open_app(page, f"{server}?run={name}", "s.state.mode === 'explorer' && s.run()")
    badge = page.locator("#la-output .badge")
    if not run.sampling.greedy:
        assert badge.count() == 0
    elif run.parallel.tokens == run.baseline.tokens:
        assert badge.inner_text() == (
            f"✓ Identical to greedy decoding: all {len(run.parallel.tokens)} tokens ({run.dtype})."
        )
    else:
        first = next(i for i, (a, b) in enumerate(zip(run.parallel.tokens, run.baseline.tokens)) if a != b)
        assert f"from token #{first} on" in badge.inner_text()
    page.close()


CHART_BOXES = """() => [...document.querySelectorAll('.chart-box')].filter(b => b.offsetParent !== null).map(b => {
    const r = (sel) => { const e = b.querySelector(sel); if (!e) return null; const x = e.getBoundingClientRect();
        return { top: x.top, bottom: x.bottom, left: x.left, right: x.right }; };
    return { title: r('.chart-title'), legend: r('.chart-legend'), plot: r('svg.chart'),
             font: getComputedStyle(b.querySelector('.chart-title') || b).fontFamily };
})"""


@pytest.mark.parametrize("width", [1280, 390])
def test_the_labs_charts_keep_title_legend_and_plot_apart(chromium, server, width):
    """Every chart of the speed lab (drawn by the stage's own renderer, in the page's font): its title, its legend and
    its plot never overlap, at desktop and phone width; and nothing in the explorer or the lab runs off the window
    unseen (at 390 px the gallery menu did, by 31 px)."""
    page = new_page(chromium, width, 900)
    open_app(page, server + "?run=code-class", "s.state.mode === 'explorer'")
    assert run_off(page) == []
    page.click("#mode-lab")
    page.wait_for_selector("#lab-prediction")
    assert run_off(page) == []
    boxes = page.evaluate(CHART_BOXES)
    assert len(boxes) >= 3, boxes
    page_font = page.evaluate("() => getComputedStyle(document.querySelector('.lade-stage')).fontFamily")
    apart = lambda a, b: a is None or b is None or a["bottom"] <= b["top"] + 0.5 or b["bottom"] <= a["top"] + 0.5  # noqa: E731
    for box in boxes:
        assert box["title"] and apart(box["title"], box["legend"]) and apart(box["title"], box["plot"]), box
        assert apart(box["legend"], box["plot"]), box
        assert box["font"] == page_font
    page.close()
