"""The static site (`lade export-site DIR`) served by a plain static server (`python -m http.server`), offline: the
lesson's browser walk passes there as on the Gradio page, the same URLs open the same states, "Run it live" points at
the configured server, and the page asks nothing of any origin but its own (every other request is refused and
counted). No model, no Gradio: what a lecture hall or a blog post would be served from a static host. With the
engine's files beside it, "Race it in your browser" races a prompt made at test time in the page, and the run it
holds is the Python engine's (one prompt a few tokens long here, three of 48 tokens in the soak tier).
"""

import re
import subprocess
import sys

import pytest
from conftest_app import CHAPTERS, SHOTS, answers, free_port, run_off
from lesson_facts import assert_every_number_read
from test_a11y_browser import run_axe
from test_app_browser import CHAPTER_LIST, at_chapter, gallery_run, page_lab, walk_chapter
from test_browser_engine import TIMES, prompts_made_now

from app import gallery
from app import speed as rule
from app.render.site import export_site
from lade_core import RunTrace, schema
from lade_core.autoregressive import autoregressive_generate
from lade_core.config import LookaheadConfig
from lade_core.lookahead import lookahead_generate

pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.server, pytest.mark.browser]
LIVE_URL = "https://example.invalid/spaces/lade"
SERVED = {}  # the static server's request log, by the site's URL (what the browser asked of the host)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The exported folder behind `python -m http.server` on a free port; yields its URL."""
    folder = tmp_path_factory.mktemp("site")
    written = export_site(folder, live_url=LIVE_URL, engine=True)
    engine_files = sum(1 for p in (folder / "engine").rglob("*") if p.is_file())
    labs = sum(1 for _ in (folder / "runs").glob("*/lab.json"))  # each run's lab figures beside it
    assert labs == sum(len(gallery.load(n).parallel.steps) > 1 for n in gallery.names())
    # each run and its lab figures, index.html and the service worker
    assert written["files"] == len(gallery.names()) + labs + 2 + engine_files
    port = free_port()
    log = folder.parent / f"{folder.name}-requests.log"
    with open(log, "w") as said:  # http.server writes a line per request to stderr
        proc = subprocess.Popen(
            [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "-d", str(folder)],
            stdout=subprocess.DEVNULL,
            stderr=said,
        )
    url = f"http://127.0.0.1:{port}/"
    SERVED[url] = log
    assert answers(url, proc, seconds=30), "the static server did not start"
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def site_page(browser, site, width=1280, height=900, workers="block"):
    """A tab where any request to another origin is refused and recorded (`page.foreign`); the site's service
    worker blocked unless `workers` is "allow" (it reloads the page once, and Playwright's routing does not see the
    requests it makes)."""
    page = browser.new_page(viewport={"width": width, "height": height}, service_workers=workers)
    page.set_default_timeout(60_000)
    page.errors, page.foreign = [], []
    page.on("pageerror", lambda e: page.errors.append(str(e)))

    def gate(route):
        if route.request.url.startswith(site):
            route.continue_()
        else:
            page.foreign.append(route.request.url)
            route.abort()

    page.route("**/*", gate)
    return page


def opened(page, url: str, condition: str = "s.run()"):
    page.goto(url)
    page.wait_for_function(f"() => {{ const s = window.ladeStage; return !!s && !!({condition}); }}")


@pytest.mark.parametrize("width, height", [(1280, 900), (390, 844)])
def test_the_lesson_walks_on_a_static_server(chromium, site, width, height):
    """Every chapter, served as files: it opens where its rules say, its sentences match the trace it shows, each
    question is answered from the trace; no request leaves the site's origin."""
    page = site_page(chromium, site, width, height)
    opened(page, site + "index.html", "document.querySelector('#lesson-text .fact')")
    lab, chapters = page_lab(page), page.evaluate(CHAPTER_LIST)
    assert lab and len(chapters) == CHAPTERS
    for chapter in range(1, CHAPTERS + 1):
        walk_chapter(page, chapter, gallery_run, lab, chapters, shots=f"site-{width}")
        if chapter < CHAPTERS:
            page.click("#lesson-next")
    assert page.foreign == [] and page.errors == []
    page.close()


def test_the_sites_urls_open_the_same_states(chromium, site):
    """`index.html?lesson=3` is chapter 3, `?run=&step=&view=&embed=1` that view alone at that step, a bad link
    falls back with its notice, and "Run it live" links to the configured server in a new tab."""
    page = site_page(chromium, site)
    opened(page, site + "index.html?lesson=3", "document.querySelector('#lesson-text')")
    at_chapter(page, 3)
    assert page.locator(".lesson-focus").first.is_visible()
    opened(page, site + "index.html?run=code-class&step=12&view=mask-view&embed=1", "s.state.embed && s.state.k === 12")
    assert page.evaluate("() => window.ladeStage.state.current") == "code-class-W7N4G7"
    assert page.locator("#mask-view").is_visible()
    assert page.locator("#window-view").count() == 0 or page.locator("#window-view").first.is_hidden()
    page.screenshot(path=str(SHOTS / "site-embed-mask.png"))
    opened(page, site + "index.html?run=code-fib&step=5", "s.state.mode === 'explorer' && s.state.k === 5")
    live = page.locator("a#run-live, a#run-yourself").first
    assert live.get_attribute("href") == LIVE_URL and live.get_attribute("target") == "_blank"
    opened(page, site + "index.html?run=[evil](https://evil.example)", "s.run()")
    assert "No gallery run" in page.inner_text(".notice")
    assert page.foreign == [] and page.errors == []
    page.close()


# what an address restores: the mode, the chapter (in the lesson), the run, the step, the lab's selection (in the lab)
STATE = """() => { const s = window.ladeStage.state;
  return [s.mode, s.mode === 'lesson' ? s.chapter : null, s.current, s.k,
          s.mode === 'lab' ? s.lab.device : null, s.mode === 'lab' ? s.lab.batch : null]; }"""


def test_the_address_is_the_state(chromium, site):
    """The address bar stayed at `/` through chapters, modes and steps: reloading on chapter 5 returned to chapter 1,
    Back after two Nexts left the app, a copied address gave students chapter 1. Now a chapter, a mode or a run is
    a history entry and a step replaces it: reload, Back, Forward and the address opened in a fresh tab each land
    on the chapter, mode, run, step (and the lab's selection) the reader was at; a host's own keys stay; and the
    page's theme (`__theme=dark`, the key Gradio's frame reads too) stays with it, the site's page dark around the
    stage."""
    page = site_page(chromium, site)
    opened(page, site + "index.html?theme=dark&__theme=dark", "document.querySelector('#lesson-text')")
    at_chapter(page, 1)
    assert "lesson=1" in page.url and "theme=dark" in page.url, page.url
    dark = "() => [document.documentElement.dataset.ladeScheme, getComputedStyle(document.body).backgroundColor]"
    assert page.evaluate(dark) == ["dark", "rgb(11, 17, 32)"]
    length = page.evaluate("history.length")
    page.evaluate("window.ladeStage.actions.chapter(5)")
    at_chapter(page, 5)
    page.evaluate("window.ladeStage.go(window.ladeStage.state.k + 2)")
    chapter5 = page.evaluate(STATE)
    assert f"lesson=5&step={chapter5[3]}" in page.url and page.evaluate("history.length") == length + 1, page.url
    page.evaluate("window.ladeStage.mode('explorer')")
    page.wait_for_function("() => window.ladeStage.state.mode === 'explorer'")
    page.evaluate("window.ladeStage.go(3)")
    explorer = page.evaluate(STATE)
    assert f"run={explorer[2]}&step=3" in page.url, page.url
    page.evaluate("window.ladeStage.mode('lab')")
    page.wait_for_selector("#lab-prediction")
    page.evaluate("window.ladeStage.actions.lab({device: 'a100-80gb', size: '7B', batch: 16, devices: 1})")
    page.wait_for_function("() => document.querySelector('#lab-batch').value === '16'")
    lab = page.evaluate(STATE)
    assert "mode=lab" in page.url and "device=a100-80gb" in page.url and "batch=16" in page.url, page.url
    address = page.url
    page.reload()
    page.wait_for_selector("#lab-prediction")
    assert page.evaluate(STATE) == lab
    page.go_back()
    page.wait_for_function("() => window.ladeStage.state.mode === 'explorer'")
    assert page.evaluate(STATE) == explorer
    page.go_back()
    page.wait_for_function("() => window.ladeStage.state.chapter === 5 && window.ladeStage.state.mode === 'lesson'")
    at_chapter(page, 5)
    assert page.evaluate(STATE) == chapter5
    page.go_forward()
    page.wait_for_function("() => window.ladeStage.state.mode === 'explorer'")
    assert page.evaluate(STATE) == explorer
    page.click("#copy-link")  # the link the page offers is the address
    page.wait_for_function("() => /Link copied|Copy this link/.test(document.querySelector('.notice').textContent)")
    assert page.inner_text(".notice").split(": ", 1)[1] == page.url
    fresh = site_page(chromium, site)
    opened(fresh, address, "document.querySelector('#lab-prediction')")
    assert fresh.evaluate(STATE) == lab and "theme=dark" in fresh.url and "__theme=dark" in fresh.url
    assert fresh.evaluate(dark) == ["dark", "rgb(11, 17, 32)"]
    assert page.errors == [] and fresh.errors == [] and page.foreign == []
    page.close()
    fresh.close()


def test_no_gallery_run_says_undefined_or_nan(chromium, site):
    """The sampled run's bar and lab said "sampling seed undefined" (the page read `seed`, the trace says
    `sample_seed`): no gallery run's page, in the explorer at its first, middle and last step or in the lab, shows
    "undefined", "NaN" or "null" where a value belongs."""
    page = site_page(chromium, site)
    for name in gallery.names():
        opened(page, site + f"index.html?run={name}", f"s.run() && s.state.current === {name!r}")
        last = page.evaluate("window.ladeStage.run().lastStep()")
        seen = []
        for k in sorted({0, 1, last // 2, last}):
            page.evaluate("k => window.ladeStage.go(k)", k)
            page.wait_for_function("k => window.ladeStage.root.dataset.step == String(k)", arg=k)
            seen.append((f"{name} step {k}", page.inner_text("body")))
        page.evaluate("window.ladeStage.mode('lab')")
        page.wait_for_selector("#lab-prediction")
        seen.append((f"{name} lab", page.inner_text("body")))
        for where, text in seen:
            for word in ("undefined", "NaN", "null"):
                found = re.search(rf"\b{word}\b", text)
                assert not found, (where, text[max(0, found.start() - 200) : found.start() + 100])
    assert page.foreign == [] and page.errors == []
    page.close()


@pytest.mark.parametrize("view", ["constructor", "__proto__", "valueOf", "hasOwnProperty", "toString"])
def test_a_view_named_after_an_object_property_falls_back_with_a_notice(chromium, site, view):
    """`?view=constructor&embed=1` found Object.prototype.constructor as a view group and threw a TypeError,
    leaving the embed blank: view and group names are looked up in the page's own maps only, and a name that is not
    one falls back to every view with the notice the server gives."""
    page = site_page(chromium, site, 960, 540)
    opened(page, site + f"index.html?run=code-class&step=3&view={view}&embed=1", "s.state.embed && s.state.k === 3")
    page.wait_for_selector("#ar-output", timeout=15_000)
    assert f"There is no view “{view}”; showing every view." in page.inner_text(".notice")
    assert page.locator(".embed-views .view").count() >= 1 and page.locator("#ar-output").is_visible()
    assert page.errors == [] and page.foreign == []
    page.close()


def test_the_lab_says_what_fits_and_why_lookahead_stops_paying(chromium, site):
    """The lab put a 70B model (138 GB in bf16) on one 80 GB GPU without a word, said lookahead stops paying
    "because the forward is already compute-bound without them" where greedy's forward is memory-bound, and called
    servers' example settings "where real servers stop speculating", "above batch" where they stop from it. Now: a
    model that does not fit says so (and offers no Lookahead Parallelism), the reason is read off the roofline, and
    each example says from which batch it drafts nothing. At every selection, no number in the lab's prose stands
    outside a named fact (read against tests/lab_facts.py), a definition or a citation of its register."""
    page = site_page(chromium, site)
    opened(page, site + "index.html?run=code-class", "s.run()")
    page.evaluate("window.ladeStage.mode('lab')")
    page.wait_for_selector("#lab-prediction")
    page.evaluate("window.ladeStage.actions.lab({device: 'h100', size: '70B', batch: 1, devices: 1})")
    page.wait_for_function("() => document.querySelector('#lab-size').value === '70B'")
    text = page.inner_text(".lab-text")
    assert_every_number_read(page, ".lab-text")
    assert (
        "does not fit one NVIDIA H100 SXM (80 GB)" in text
        and "Lookahead Parallelism (a whole model on every device) cannot run it" in text
    )
    assert page.locator("#lab-devices option").all_inner_texts() == ["1"]
    assert "70B (does not fit one)" in page.locator("#lab-size option").all_inner_texts()
    page.evaluate("window.ladeStage.actions.lab({device: 'h100', size: '7B', batch: 1, devices: 1})")
    page.wait_for_function("() => document.querySelector('#lab-size').value === '7B'")
    assert_every_number_read(page, ".lab-text")
    for selection in ("{device: 'a100-80gb', size: '7B', batch: 16, devices: 1}", "{device: 'cpu'}"):
        page.evaluate(f"window.ladeStage.actions.lab({selection})")
        page.wait_for_timeout(200)
        assert_every_number_read(page, ".lab-text")
    page.evaluate("window.ladeStage.actions.lab({device: 'h100', size: '7B', batch: 1, devices: 4})")
    page.wait_for_function("() => document.querySelector('#lab-devices').value === '4'")
    assert_every_number_read(page, ".lab-text")
    page.evaluate("window.ladeStage.actions.lab({device: 'h100', size: '7B', batch: 1, devices: 1})")
    page.wait_for_function("() => document.querySelector('#lab-devices').value === '1'")
    even = page.inner_text("#lab-break-even")
    assert "is still memory-bound" in even and "past the crossover and compute-bound" in even, even
    assert "compute-bound without them" not in page.inner_text(".lab-text")
    # the servers' example batches on the batch chart: no two labels overlap, none runs past the chart
    labels = page.evaluate(
        "() => { const svg = [...document.querySelectorAll('.lab-text svg.chart')].find(s => /batch/.test("
        "s.getAttribute('aria-label'))); const box = svg.getBoundingClientRect();"
        " return [[box.left, box.right], [...svg.querySelectorAll('text')].filter(t => /example/.test(t.textContent))"
        ".map(t => { const r = t.getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom]; })]; }"
    )
    (lo, hi), boxes = labels
    assert len(boxes) >= 3 and all(lo - 1 <= b[0] and b[1] <= hi + 1 for b in boxes), labels
    apart = lambda a, b: a[1] <= b[0] or b[1] <= a[0] or a[3] <= b[2] or b[3] <= a[2]  # noqa: E731
    assert all(apart(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :]), boxes
    servers = page.inner_text("#lab-thresholds")
    for batch in (4, 129, 8):
        assert f"drafts nothing from batch {batch} on" in servers, servers
    assert "above batch" not in servers and "removed in vLLM v0.10.0" in servers
    parallel = page.inner_text(".lab-text")
    assert "W=64 N=5 is compute-bound on one NVIDIA A100 80GB SXM with a 7B model" in parallel, parallel
    # both scenarios from one sweep (a 64-token sweep's compression was set beside a 128-token bench's), and why the
    # simulation stays far under the paper's multi-GPU figure; the paper table says whose figure and that G = W
    scenarios = page.evaluate("window.ladeStage.boot.lab.parallelism")
    assert f"Both come from one sweep ({scenarios['wide']['source']})" in parallel, parallel
    assert "never passes the compression it starts from" in parallel and "measured with CodeLlama models" in parallel
    caption = page.inner_text(".lab-table caption")
    assert "blog Figure 7" in caption and "G = W follows the blog's" in caption, caption
    assert page.errors == [] and page.foreign == []
    page.close()


def test_a_quantity_shown_in_two_places_has_one_value(chromium, site):
    """One quantity, two places, one value: the lesson run's tokens per step, step cost and speed-up as chapter 8
    states them and as the explorer's honest note and counter state them; greedy's step time in chapter 8 and in the
    race's methods table for the race (each from its own run, so only within a run); the verdict's band in chapter 8
    and in the derived verdict the explorer judges the same run by (a band is a run's own since trace version 5, so
    chapter 6's races state theirs)."""
    page = site_page(chromium, site)
    opened(page, site + "index.html?lesson=8", "document.querySelector('#lesson-text .fact')")
    page.wait_for_function("() => document.querySelector('#lesson-text').dataset.chapter == '8'")
    facts = page.eval_on_selector_all(
        "#lesson-text .fact", "els => Object.fromEntries(els.map(e => [e.dataset.fact, e.textContent]))"
    )
    page.evaluate("window.ladeStage.mode('explorer')")
    page.evaluate("window.ladeStage.go(window.ladeStage.run().lastStep())")
    page.wait_for_selector("#honest-note .honest")
    note = page.eval_on_selector("#honest-note .honest", "e => ({...e.dataset})")
    assert (note["compression"], note["ratio"], note["speedup"]) == (
        facts["compression"],
        facts["step_cost"],
        facts["speedup"],
    )
    counter = page.inner_text("#counter")
    assert facts["compression"] in counter, counter  # the counter's tokens/step at the last step
    band = page.evaluate("(() => { const s = window.ladeStage.run().d.speed; return s ? s.band.ratio : null; })()")
    if "noise_band" in facts:
        assert facts["noise_band"] == f"{round(100 * (band - 1))}%", (facts["noise_band"], band)
    assert page.errors == [] and page.foreign == []
    page.close()


HOST = """<!doctype html><html lang="en"><title>slides</title><body>
<iframe id="slide" title="embed" width="960" height="540" src="{src}"></iframe>
<script>window.got = []; addEventListener('message', e => window.got.push(e.data));</script></body></html>"""


def test_a_clicker_steps_an_embed_and_hands_back_to_the_slides(chromium, site):
    """PageUp and PageDown (what clickers send) did nothing, and arrows stopped once a button inside had focus. Now,
    with focus on any control inside an embed, PageDown walks its slide's span (`from` to `to`) and past its last
    step tells the host to move on (reveal.js's postMessage {"method": "next"}), PageUp steps back (and "prev" before
    the first step), an arrow on a focused button still steps, within the span, and Escape lets go of focus; a
    chapter embed's clicks reveal its question's answer, and the next moves the deck on."""
    page = site_page(chromium, site, 1100, 700)
    run = gallery.load(gallery.by_role("lookahead"))
    last = max(len(run.parallel.steps), len(run.baseline.steps)) - 1  # the clock's last step: the slower lane's
    src = site + f"index.html?run={gallery.by_role('lookahead')}&view=mask-view&embed=1&from={last - 1}&to={last}"
    page.set_content(HOST.format(src=src))  # a host of its own (about:blank), the embed from the site
    frame = page.frame_locator("#slide")
    inner = page.frames[1]
    inner.wait_for_function("() => window.ladeStage && window.ladeStage.run() && window.ladeStage.state.embed")
    k = lambda: inner.evaluate("window.ladeStage.state.k")  # noqa: E731
    assert k() == last - 1
    button = frame.locator("button:visible").first
    button.focus()
    page.keyboard.press("PageDown")
    inner.wait_for_function("n => window.ladeStage.state.k === n", arg=last)
    page.keyboard.press("PageDown")
    page.wait_for_function("() => window.got.some(m => typeof m === 'string')")
    told = [__import__("json").loads(m)["method"] for m in page.evaluate("window.got") if isinstance(m, str)]
    assert told == ["next"], told
    button.focus()
    page.keyboard.press("PageUp")
    inner.wait_for_function("n => window.ladeStage.state.k === n", arg=last - 1)
    page.keyboard.press("ArrowRight")  # focus is still on the button
    inner.wait_for_function("n => window.ladeStage.state.k === n", arg=last)
    page.keyboard.press("ArrowRight")  # the arrows stay within the slide's span
    page.wait_for_timeout(200)
    assert k() == last
    page.keyboard.press("Escape")
    assert inner.evaluate("document.activeElement === document.body")
    page.set_content(HOST.format(src=site + "index.html?lesson=2&embed=1"))
    inner = page.frames[1]
    inner.wait_for_function("() => window.ladeStage && document.querySelector('#lesson-predict button.option')")
    before = inner.evaluate("window.ladeStage.state.k")
    page.frame_locator("#slide").locator("#lesson-title").click()
    for _ in range(2):  # its question (where it is a second reveal), then the trace's answer
        if inner.evaluate("!window.ladeStage.state.answered"):
            page.keyboard.press("PageDown")
            page.wait_for_timeout(150)
    inner.wait_for_selector("#lesson-answer")
    after = inner.evaluate("window.ladeStage.state.k")
    assert page.evaluate("window.got.filter(m => typeof m === 'string').length") == 0
    page.keyboard.press("PageDown")  # then the deck's next slide
    page.wait_for_function("() => window.got.some(m => typeof m === 'string')")
    assert before <= after and page.errors == [] and page.foreign == []
    page.close()


def test_link_or_embed_from_every_chapter_with_copy_buttons(chromium, site):
    """The iframe code lived only at the bottom of the explorer, always `view=chain` (which shows column 0 of a 635
    px window in a 960x540 frame), with no copy buttons; the lesson had none. Now every chapter and the explorer
    offer "Link or embed": the page's address and an embed chosen by what (the chapter with its question, or any
    view or group) and frame size, each with a Copy button, the code following the choice."""
    page = site_page(chromium, site)
    opened(page, site + "index.html?lesson=3", "document.querySelector('#lesson-text')")
    at_chapter(page, 3)
    page.click("summary:has-text('Link or embed this chapter')")
    page.wait_for_selector("#embed-code")
    assert page.inner_text("#page-link") == page.url
    # the chapter is offered first, chosen where it fits the frame (else the panel says why not: test_embeds_browser)
    page.select_option("#embed-what", "chapter")
    code = page.inner_text("#embed-code")
    assert "lesson=3&amp;embed=1" in code or "lesson=3&embed=1" in code, code
    assert 'width="960" height="540"' in code
    page.select_option("#embed-size", "720x405")
    assert 'width="720" height="405"' in page.inner_text("#embed-code")
    assert page.locator(".share .copy").count() == 2
    page.locator(".share .copy").nth(1).click()
    page.wait_for_function("() => document.querySelectorAll('.share .copy')[1].textContent !== 'Copy'")
    page.evaluate("window.ladeStage.mode('explorer')")
    page.wait_for_selector("summary:has-text('Link or embed this view')")
    if not page.locator("#embed-code").is_visible():
        page.click("summary:has-text('Link or embed this view')")
    page.wait_for_selector("#embed-code")
    page.select_option("#embed-what", "mask-view")
    code = page.inner_text("#embed-code")
    assert "view=mask-view" in code and "embed=1" in code and "chain" not in code, code
    assert page.errors == [] and page.foreign == []
    page.close()


PRINTED = """() => {
  const shown = (e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0
    && getComputedStyle(e).visibility !== 'hidden'; };
  return {
    controls: [...document.querySelectorAll('button:not(.term), select, input, .playbar')].filter(shown)
      .map(e => e.tagName + '#' + e.id + ' ' + (e.textContent || '').trim().slice(0, 20)),
    clipped: [...document.querySelectorAll('.lade-stage .scroll, .lade-stage .view')].filter(shown)
      .filter(e => e.scrollWidth > e.clientWidth + 2)
      .map(e => (e.id || e.className) + ' ' + e.scrollWidth + '>' + e.clientWidth),
    closed: document.querySelectorAll('#lesson-text details:not([open])').length,
    views: [...document.querySelectorAll('.lesson-focus')].filter(shown).length,
  };
}"""


@pytest.mark.parametrize("chapter", [3, 7])
def test_a_chapter_prints_as_a_handout(chromium, site, chapter):
    """A chapter printed as the screen: buttons, menus and clipped views over two pages. Printed now: its words
    (closed <details> opened), its views as drawn at this step and whole, and no control; a PDF of it is written
    to out/screenshots/ to look at."""
    page = site_page(chromium, site, 1000, 800)
    opened(page, site + f"index.html?lesson={chapter}", "document.querySelector('#lesson-text')")
    at_chapter(page, chapter)
    page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
    page.emulate_media(media="print")
    page.wait_for_timeout(300)
    got = page.evaluate(PRINTED)
    assert got["controls"] == [] and got["clipped"] == [] and got["closed"] == 0 and got["views"] >= 1, got
    page.pdf(path=str(SHOTS / f"print-chapter{chapter}.pdf"), print_background=True)
    page.emulate_media(media="screen")
    page.evaluate("() => window.dispatchEvent(new Event('afterprint'))")
    assert page.evaluate("document.querySelectorAll('#lesson-text details[open]').length") == 0
    assert page.errors == [] and page.foreign == []
    page.close()


HANDOUT = """() => [...document.querySelectorAll('.handout .handout-chapter')].map(c => ({
  title: (c.querySelector('h2') || {}).textContent,
  views: [...c.querySelectorAll('.view')].filter(v => v.querySelector('svg, table, .tok-text')).length,
  words: (c.querySelector('.fact') ? 1 : 0) + c.querySelectorAll('p').length,
  question: !!c.querySelector('.predict'), answer: !!c.querySelector('.answer') }))"""


def test_the_whole_lesson_prints_as_one_handout(chromium, site):
    """Only one chapter at a time could be printed. "Print the whole lesson" prints every chapter, each on a page of
    its own, opened where the lesson opens it: its words, its question without the answer, and its views as drawn
    at that step, whole, with no control; afterwards the page prints what is on screen again. A PDF goes to
    out/screenshots/print-lesson.pdf to look at."""
    page = site_page(chromium, site, 1000, 800)
    opened(page, site + "index.html?lesson=4", "document.querySelector('#lesson-text')")
    at_chapter(page, 4)
    assert page.is_visible("#print-lesson")
    titles = page.evaluate("() => Lade.lesson.CHAPTERS.map(c => c.title)")
    focus = page.evaluate("() => Lade.lesson.CHAPTERS.map(c => c.focus.length)")
    assert page.evaluate("() => window.ladeStage.handout()") == len(titles)
    page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
    page.emulate_media(media="print")
    page.wait_for_timeout(300)
    chapters = page.evaluate(HANDOUT)
    assert [c["title"] for c in chapters] == titles, chapters
    for c, wanted in zip(chapters, focus, strict=True):
        assert c["views"] == wanted and c["words"] >= 2 and not c["answer"], c
    assert sum(c["question"] for c in chapters) == 8, chapters
    got = page.evaluate(PRINTED)
    assert got["controls"] == [] and got["clipped"] == [], got
    # the stage on screen is not printed with it (the chapter on screen was chapter 4)
    assert page.evaluate("() => document.querySelector('#lesson-text').getClientRects().length") == 0
    pdf = page.pdf(path=str(SHOTS / "print-lesson.pdf"), print_background=True)
    assert len(re.findall(rb"/Type\s*/Page[^s]", pdf)) >= len(titles)
    page.emulate_media(media="screen")
    page.evaluate("() => window.dispatchEvent(new Event('afterprint'))")
    assert page.locator(".handout").count() == 0 and page.is_visible("#lesson-text")
    assert page.errors == [] and page.foreign == []
    page.close()


def test_on_a_phone_tips_stay_on_screen_and_targets_are_big_enough(chromium, site):
    """At 390 px a glossary tip ran off screen and stayed open, and the chapter pills were 28x21 px. Now every tip
    opened by a tap lies inside the window and closes on a tap elsewhere, every chapter pill is at least 24 px each
    way, and a box that scrolls sideways says so while it holds more than it shows."""
    page = site_page(chromium, site, 390, 844)
    opened(page, site + "index.html?lesson=6", "document.querySelector('#lesson-text .term')")
    at_chapter(page, 6)
    pills = page.eval_on_selector_all(".chapters .pill", "els => els.map(e => e.getBoundingClientRect().height)")
    assert pills and min(pills) >= 24, pills
    terms = page.locator("#lesson-text button.term")
    assert terms.count() >= 2
    for i in range(terms.count()):
        terms.nth(i).scroll_into_view_if_needed()
        terms.nth(i).click()
        page.wait_for_timeout(50)
        box = page.evaluate(
            "i => { const r = document.querySelectorAll('#lesson-text .term-tip')[i].getBoundingClientRect();"
            " return [r.left, r.right, innerWidth]; }",
            i,
        )
        assert box[0] >= 0 and box[1] <= box[2], (i, box)
        page.mouse.click(5, 5)  # a tap elsewhere
        assert page.locator("#lesson-text .term.open").count() == 0
    # a view that holds more than a phone shows says so in words (chapter 3's window showed column 0 of 7 with no
    # sign; its trajectories still hold more); one that fits shows no cue (chapter 6's methods table reflows now)
    for chapter in (3, 6):
        page.evaluate("n => window.ladeStage.chapter(n, 'none')", chapter)
        at_chapter(page, chapter)
        page.wait_for_timeout(200)
        boxes = page.evaluate(
            "() => [...document.querySelectorAll('.lade-stage .scroll')].filter(b => b.offsetParent !== null)"
            ".map(b => [b.scrollWidth > b.clientWidth + 2, !b.querySelector(':scope > .scroll-hint').hidden])"
        )
        assert boxes and (chapter != 3 or any(more for more, _ in boxes)), (chapter, boxes)
        assert all(more == cue for more, cue in boxes), (chapter, boxes)
    assert page.errors == [] and page.foreign == []
    page.close()


def test_on_your_run_only_where_it_is_and_a_slide_states_its_step(chromium, site):
    """ "On your run: ..." showed under chapters that read another run (chapter 2's Jacobi run, chapter 6's race)
    after "Open the lesson on this run". It shows only where the chapter reads the reader's run. And a chapter
    embed condenses the chapter to the paragraph about the step on screen (chapter 3's slide showed the relabelling
    aside instead)."""
    page = site_page(chromium, site)
    opened(page, site + "index.html?run=code-fib&step=5", "s.state.mode === 'explorer'")
    page.evaluate("window.ladeStage.actions.teach()")
    at_chapter(page, 1)
    assert "On your run" in page.inner_text(".lesson-nav")
    for chapter, own in ((2, False), (3, True), (6, False)):
        page.evaluate("n => window.ladeStage.chapter(n, 'none')", chapter)
        at_chapter(page, chapter)
        assert ("On your run" in page.inner_text(".lesson-nav")) == own, chapter
    opened(page, site + "index.html?lesson=3&embed=1", "s.state.embed")
    kept = page.locator(".embed-words #lesson-text p")
    assert kept.count() == 1
    assert kept.locator('.fact[data-fact="step"]').inner_text() == str(page.evaluate("window.ladeStage.state.k"))
    assert page.errors == [] and page.foreign == []
    page.close()


SIZES = """sel => { const out = []; for (const el of document.querySelectorAll(sel)) {
  const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) { const p = walk.currentNode.parentElement;
    if (!walk.currentNode.data.trim() || !p.offsetParent || p.closest('.sr-only, .term-tip')) continue;
    out.push(parseFloat(getComputedStyle(p).fontSize) * (p.currentCSSZoom || 1)); } }
  out.sort((a, b) => a - b); return out; }"""


def test_presenter_mode_is_readable_from_the_back_row(chromium, site):
    """Slides were unreadable from the back row (median text 12.5 px). The Present button (or `?present=1`, kept in
    the address from chapter to chapter) shows the stage at about 24 px body text on a 1920x1080 projector: the
    chapter's words, its title and its views' captions; pressed again, the page is as it was."""
    page = site_page(chromium, site, 1920, 1080)
    opened(page, site + "index.html?lesson=3&present=1", "document.querySelector('#lesson-text')")
    at_chapter(page, 3)
    # the slide is fitted in the frame after the draw (a ResizeObserver, an animation frame): measured once it is (a
    # busy machine had measured the 14 px of the draw before its fit)
    page.wait_for_function("() => document.querySelector('.embed-box[data-zoom]')")
    page.wait_for_function(f"() => ({SIZES})('#lesson-text').length > 0")
    page.wait_for_function(f"() => {{ const w = ({SIZES})('#lesson-text'); return w[w.length >> 1] >= 24; }}")
    assert page.evaluate(SIZES, "#lesson-title")[0] >= 24
    captions = page.evaluate(SIZES, ".lesson-focus .muted")
    assert captions and captions[len(captions) // 2] >= 18, captions
    assert page.get_attribute("#present", "aria-pressed") == "true"
    page.evaluate("window.ladeStage.actions.chapter(4)")
    at_chapter(page, 4)
    assert "present=1" in page.url, page.url
    page.screenshot(path=str(SHOTS / "present-1920-chapter4.png"))
    page.click("#present")
    page.wait_for_function("() => !document.body.classList.contains('lade-present')")
    words = page.evaluate(SIZES, "#lesson-text")
    assert words[len(words) // 2] < 20 and "present=1" not in page.url, (words, page.url)
    assert page.errors == [] and page.foreign == []
    page.close()


# -- Race it in your browser (the engine's files beside the site) ------------------------------------------------
# the page's thread draws; these run in the race's worker and are never loaded on the page (issue 50)
WORKER_ONLY = ["ort", "Lade.forward", "Lade.engine", "Lade.weights", "Lade.tokenizer", "Lade.derive", "Lade.auto"]
WATCH = """() => { window.__long = []; window.__seen = [];
  new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(e.duration); })
    .observe({ type: 'longtask' });
  window.__watch = setInterval(() => { const r = window.ladeStage.run();
    if (r && r.handle.startsWith('browser-')) window.__seen.push([r.t.parallel.stop_reason, r.t.parallel.steps.length
      + r.t.baseline.steps.length]); }, 50); }"""
ENDED = (
    "() => /^(Done|Stopped)|could not|This browser/.test(document.querySelector('#browser-race-status').textContent)"
)


def race_in_page(page, prompt: str, w: int | None, n: int | None, g: int | None, tokens: int) -> dict:
    """Type the race's settings into the panel (W, N, G None: Auto chooses them on this device), race, wait for
    the end; the trace the page holds."""
    if page.is_hidden("#browser-race"):
        page.click("#race-browser")
    page.fill("#browser-race-prompt", prompt)
    page.set_checked("#browser-race-auto", w is None)
    for field, value in (("w", w), ("n", n), ("g", g), ("tokens", tokens)):
        if value is not None:
            page.fill(f"#browser-race-{field}", str(value))
    page.click("#browser-race-go")
    page.wait_for_function(ENDED, timeout=600_000)
    status = page.inner_text("#browser-race-status")
    assert status.startswith("Done"), status
    return page.evaluate("() => JSON.parse(JSON.stringify(window.ladeStage.run().t))")


def assert_the_python_engines(lm, trace: dict, prompt: str, config: LookaheadConfig, tokens: int) -> None:
    ids = lm.encode_prompt(prompt)
    assert trace["prompt_ids"] == ids
    for got, python in (
        (trace["baseline"], autoregressive_generate(lm, ids, tokens)),
        (trace["parallel"], lookahead_generate(lm, ids, config, tokens)),
    ):
        n = len(got["steps"])  # a lane Stop cut short: its steps so far
        assert got["tokens"] == list(python.tokens)[: len(got["tokens"])]
        assert got["stop_reason"] == python.stop_reason or got["stop_reason"] == "cancelled"
        skip = TIMES | {"kernels"}  # measured; and the Python engine's CPU layout, which the browser has none of
        for a, b in zip(got["steps"], python.steps[:n], strict=True):
            assert {k: v for k, v in a.items() if k not in skip} == {
                k: v for k, v in schema.to_data(b).items() if k not in skip
            }


def plural(n: int, one: str) -> str:
    return f"{n} {one}{'' if n == 1 else 's'}"


def band_words(run) -> str:
    """The band in the page's words (lade-notes.js `bandWords`), the spread that set it first."""
    own, floor = rule.own_spread(run), rule.device_floor(run)
    pct = lambda p: f"{round(100 * (p['ratio'] - 1))}%"  # noqa: E731
    words = {
        id(own): lambda: f"this run's own greedy steps differed by {pct(own)} between its first and second half",
        id(floor): lambda: f"a greedy step on this run's device varied by {pct(floor)} within one measurement made "
        "before the race",
    }
    wider = own if own and (not floor or own["ratio"] > floor["ratio"]) else floor
    other = floor if wider is own else own
    judged = rule.band(run)
    return (
        words[id(wider)]()
        + (f" ({words[id(other)]()})" if other else "")
        + (f", so differences within {round(100 * (judged['ratio'] - 1))}% are noise")
    )


def expected_sentences(trace: dict) -> list[str]:
    """How a race ended, each sentence computed here from its trace by the one noise rule (app/speed.py): each lane
    finished (its tokens and why) or stopped by Stop after k tokens; one sentence with the verdict and its band and
    whether the texts are identical, over the tokens both lanes wrote (a lane cut short is never called different;
    a lane that finished where the other wrote on is); the device every time was measured on."""
    run = schema.build(RunTrace, trace)
    out = []
    for name, m in (("Lookahead", run.parallel), ("Greedy", run.baseline)):
        steps = f"{plural(len(m.steps), 'step')}, the prompt's included"
        why = {
            "eos": "it wrote the end of its answer",
            "length": f"it wrote the {run.max_new_tokens} new tokens asked for",
        }
        out.append(
            f"{name} finished: {plural(len(m.tokens), 'token')} in {steps} ({why[m.stop_reason]})."
            if m.stop_reason in why
            else f"{name} was stopped by Stop after {plural(len(m.tokens), 'token')} ({steps})."
        )
    a, b = run.parallel.tokens, run.baseline.tokens
    whole = all(m.stop_reason in ("eos", "length") for m in (run.parallel, run.baseline))
    n = max(len(a), len(b)) if whole else min(len(a), len(b))
    part = next((i for i in range(n) if i >= len(a) or i >= len(b) or a[i] != b[i]), -1)
    if whole:
        same = "the texts are identical, token for token" if part < 0 else f"the texts differ from token #{part} on"
        judged = rule.speed(run, {"parallel": run.parallel}, [])
        lane = judged["lanes"]["parallel"]
        out.append(
            f"Lookahead ran at {lane['speedup']:.2f}x greedy's speed, {lane['verdict']}: {band_words(run)}; {same}."
        )
    else:
        both = f"over the {plural(n, 'token')} both lanes wrote, the texts"
        shorter = run.parallel if len(a) < len(b) else run.baseline if len(b) < len(a) else None
        ended_there = part < 0 and shorter is not None and shorter.stop_reason in ("eos", "length")
        same = (
            "the lanes had no token in common to compare"
            if n == 0
            else f"the texts differ from token #{n} on"  # the shorter lane finished there, the other wrote on
            if ended_there
            else f"{both} are identical"
            if part < 0
            else f"{both} differ from token #{part} on"
        )
        out.append(f"The race was stopped, so its lanes' times are no speed-up and it gets no verdict; {same}.")
    m = run.machine
    out.append(f"Every time was measured on your device: {m.description}, {plural(m.cores, 'core')} reported.")
    return out


def sentences_on_screen(page) -> list[str]:
    return page.eval_on_selector_all("#browser-race-sentences li", "els => els.map((e) => e.textContent)")


def test_a_prompt_made_now_races_in_the_page_as_in_python(chromium, site, lm, tmp_path):
    """The race in the visitor's browser, finished (issue 50), on a prompt made at test time with every request
    elsewhere refused. (1) Loading, the session and decoding run in a worker: none of the engine's scripts is on the
    page (on the landed code all were, and the page froze for the whole race: one task of 7.8 s in 24 tokens), and
    no task on the page's thread comes near a second. (2) The page measured this device, proposed W, N, G from its
    own curve by Auto's rule (Python's `best` on the curve the trace records proposes the same) and raced it: the
    tokens and step records are the Python engine's. (3) Steps were drawn while the race ran. (4) It ends with a
    summary checked sentence by sentence against its trace by the one noise rule. (5) Kept in the browser, its
    address reopens it after a reload; downloaded, its trace file opens in Python. (6) Stop ends a second race
    within a step and it says how it ended; a reload says it dropped that race. (7) A race after the reload
    asks the host for none of the model's files again (the GGUF, the graphs, the tokenizer, the runtime's binary)."""
    from app.render.engine_files import race_sweeps
    from lade_core.measure.autoconfig import best
    from lade_core.tracefile import parse_run

    page = site_page(chromium, site)
    page.goto(site + "?run=code-class-W7N4G7")
    page.wait_for_function("() => !!window.ladeStage")
    page.evaluate(WATCH)
    prompt = prompts_made_now(1)[0]
    trace = race_in_page(page, prompt, None, None, None, 12)
    # (1) the page only drew
    assert page.evaluate(f"() => [{', '.join(f'!!window.{n}' for n in WORKER_ONLY)}]") == [False] * len(WORKER_ONLY)
    longest = max(page.evaluate("() => window.__long") or [0])
    print(f"the longest task on the page's thread during a race: {longest:.0f} ms")
    assert longest < 1000, longest
    # (2) sized for this device by its own curve, raced as Python races it
    machine = trace["machine"]
    assert machine["description"] == "browser: WebAssembly, 1 thread" and machine["threads"] == 1
    assert machine["curve"][0]["tokens"] == 1 and machine["noise"] >= 1 and machine["cores"] >= 1
    curve = {"points": machine["curve"], "greedy_s": machine["curve"][0]["seconds"]}
    chosen = best(race_sweeps(trace["config"]["pool"]), curve)
    config = trace["config"]
    assert (config["window"], config["ngram"], config["guess"]) == (chosen["window"], chosen["ngram"], chosen["guess"])
    proposal = page.inner_text("#browser-race-proposal")
    assert f"Auto proposes W={chosen['window']}, N={chosen['ngram']}, G={chosen['guess']}" in proposal, proposal
    assert f"{chosen['predicted_speedup_median']:.2f}x greedy's speed" in proposal
    assert ("No setting is predicted to beat greedy" in proposal) == (chosen["predicted_speedup_median"] < 1)
    assert_the_python_engines(lm, trace, prompt, LookaheadConfig.from_dict(config), 12)
    # (3) drawn as it ran
    seen = page.evaluate("() => window.__seen")
    assert any(reason == "running" and steps >= 2 for reason, steps in seen), seen[:10]
    # (4) how it ended, sentence by sentence
    assert sentences_on_screen(page) == expected_sentences(trace)
    page.screenshot(path=str(SHOTS / "site-race-in-the-browser.png"), full_page=True)
    assert run_axe(page, "browser-race-done") == []
    page.set_viewport_size({"width": 390, "height": 844})  # a phone: the panel, its chart and how it ended
    page.locator("#browser-race").screenshot(path=str(SHOTS / "site-race-in-the-browser-390.png"))
    assert run_off(page) == []
    page.set_viewport_size({"width": 1280, "height": 900})
    # (5) kept, and downloaded
    page.click("#browser-race-keep")
    page.wait_for_function(
        "() => /Kept in this browser/.test(document.querySelector('#browser-race-kept').textContent)"
    )
    kept = page.evaluate("() => window.ladeStage.state.current")
    assert f"run={kept}" in page.url
    assert run_axe(page, "browser-race-kept") == []
    with page.expect_download() as download:
        page.click("#browser-race-download")
    path = tmp_path / "race.json"
    download.value.save_as(path)
    assert parse_run(path.read_bytes()).parallel.tokens == tuple(trace["parallel"]["tokens"])
    # its lab says why it has no figures (they are computed on the server), and asks no address for them
    page.evaluate("() => window.ladeStage.mode('lab')")
    page.wait_for_function("() => /A race run in this browser has no lab figures/.test(document.body.innerText)")
    assert "browser-" not in "".join(line for line in SERVED[site].read_text().splitlines() if "lab.json" in line)
    page.evaluate("() => window.ladeStage.mode('explorer')")
    # (6) a second race, stopped once it is drawn running
    page.set_checked("#browser-race-auto", False)
    for field, value in (("w", 5), ("n", 4), ("g", 5), ("tokens", 64)):
        page.fill(f"#browser-race-{field}", str(value))
    page.click("#browser-race-go")
    page.wait_for_function(
        "k => { const r = window.ladeStage.run(); return r && r.handle.startsWith('browser-') && r.handle !== k"
        " && r.t.parallel.stop_reason === 'running' && r.t.baseline.steps.length >= 2; }",
        arg=kept,
        timeout=300_000,
    )
    t0 = page.evaluate("() => performance.now()")
    page.click("#browser-race-stop")
    page.wait_for_function(ENDED, timeout=120_000)
    took = (page.evaluate("() => performance.now()") - t0) / 1000
    stopped = page.evaluate("() => JSON.parse(JSON.stringify(window.ladeStage.run().t))")
    assert page.inner_text("#browser-race-status").startswith("Stopped"), page.inner_text("#browser-race-status")
    assert {stopped["parallel"]["stop_reason"], stopped["baseline"]["stop_reason"]} <= {"cancelled", "eos", "length"}
    slowest = max(s["forward_s"] + s["overhead_s"] for m in ("parallel", "baseline") for s in stopped[m]["steps"])
    assert took <= 2 * slowest + 1.5, (took, slowest)  # the step under way, then the end: within one step
    assert sentences_on_screen(page) == expected_sentences(stopped)
    assert run_axe(page, "browser-race-stopped") == []
    assert_the_python_engines(lm, stopped, prompt, LookaheadConfig(window=5, ngram=4, guess=5), 64)
    page.reload()
    page.wait_for_function(f"() => !!window.ladeStage && window.ladeStage.state.current === '{kept}'")
    notice = page.inner_text(".notice")
    assert notice.startswith("Reloading dropped the race run in this browser at") and "W=5, N=4, G=5" in notice
    assert page.evaluate("() => window.ladeStage.run().t.parallel.tokens") == trace["parallel"]["tokens"]
    assert run_axe(page, "browser-race-reopened") == []
    # (7) after the reload, a race reads every file the manifest hashes and the GGUF from the browser's storage: the
    # host is asked for none of them (on the landed code the runtime's binary and the tokenizer, 16 MB, came again)
    before = SERVED[site].stat().st_size
    race_in_page(page, prompt, 2, 2, 2, 4)
    asked = SERVED[site].read_text()[before:]
    stored = re.findall(
        r'"GET /engine/(model\.gguf\.\d+|forward\.onnx|keep\.onnx|tokenizer\.json|ort/[^ ]+\.wasm) ', asked
    )
    cold = SERVED[site].read_text()[:before]  # the log sees the worker's requests: the first race downloaded them
    assert re.search(r'"GET /engine/model\.gguf\.000', cold) and stored == [], (stored, asked[-2000:])
    assert page.errors == [] and page.foreign == [], (page.errors, page.foreign)
    page.close()


def test_the_site_isolates_itself_and_a_framed_page_says_why_it_races_on_one_thread(chromium, site):
    """A static host sends no cross-origin-isolation headers, so on the landed code every race there ran on one
    thread. The site's service worker adds them: the first visit reloads once (the address kept) and is isolated,
    the next page of the site at once, and the panel says how many threads the race may use of the cores the
    browser reports. Framed by a host that is not isolated (a slide deck), the page cannot be, and the panel says
    why it races on one thread."""
    visitor = chromium.new_context(viewport={"width": 1280, "height": 900}, service_workers="allow")
    page, host = visitor.new_page(), visitor.new_page()  # one visitor: the service worker serves both
    for tab in (page, host):
        tab.errors = []
        tab.on("pageerror", lambda e, tab=tab: tab.errors.append(str(e)))
    page.goto(site + "index.html?race=1")
    page.wait_for_function("() => self.crossOriginIsolated && !!document.querySelector('#browser-race-threads')")
    assert "race=1" in page.url
    cores = page.evaluate("() => navigator.hardwareConcurrency")
    assert page.inner_text("#browser-race-threads") == (
        f"This page is cross-origin isolated, so the race may use {plural(min(4, cores), 'thread')} of the "
        f"{plural(cores, 'core')} your browser reports."
    )
    page.goto(site + "index.html?lesson=2")
    assert page.evaluate("() => self.crossOriginIsolated")  # controlled from the start: no second reload
    host.set_content(f'<iframe src="{site}index.html?race=1" width="960" height="540" title="race"></iframe>')
    frame = host.frame_locator("iframe")
    frame.locator("#browser-race-threads").wait_for()
    assert (
        frame.locator("#browser-race-threads")
        .inner_text()
        .startswith("One thread: this page is shown inside another page that is not cross-origin isolated")
    )
    assert not host.frames[1].evaluate("() => self.crossOriginIsolated")
    assert page.errors == host.errors == []
    visitor.close()


def test_race_1_in_the_address_opens_the_race_in_a_page_and_in_an_embed(chromium, site):
    """`?race=1` opens "Race it in your browser" (a lecturer's link to it), and in an embed on a slide too, without
    taking focus from the page around it; nothing is downloaded until the visitor races."""
    page = site_page(chromium, site)
    opened(page, site + "index.html?race=1", "s.landed && document.querySelector('#browser-race')")
    assert page.is_visible("#browser-race") and page.get_attribute("#race-browser", "aria-expanded") == "true"
    assert "race=1" in page.url
    host = site_page(chromium, site, 1000, 600)
    embed = site + "index.html?run=code-class&view=outputs&embed=1&race=1"
    host.set_content(f'<iframe src="{embed}" width="960" height="540" title="race"></iframe>')  # a slide's host
    frame = host.frame_locator("iframe")
    frame.locator("#browser-race-prompt").wait_for()
    assert frame.locator("#browser-race").is_visible()
    assert host.evaluate("() => document.activeElement.tagName") == "BODY"  # focus stays with the slide
    assert not host.frames[1].evaluate("() => !!window.ort")  # nothing loaded yet
    host.screenshot(path=str(SHOTS / "race-embed-960x540.png"))
    assert page.errors == host.errors == [] and page.foreign == host.foreign == []
    page.close()
    host.close()


def test_bad_settings_are_refused_with_their_range(chromium, site):
    page = site_page(chromium, site)
    page.goto(site)
    page.click("#race-browser")
    page.fill("#browser-race-prompt", "hello")
    page.set_checked("#browser-race-auto", False)  # the visitor's own W, N, G instead of Auto's
    page.fill("#browser-race-n", "1")
    page.click("#browser-race-go")
    assert page.inner_text("#browser-race-status") == "N must be a whole number from 2 to 8."
    assert page.foreign == [] and not page.evaluate("() => !!window.ort")  # nothing loaded
    page.close()


@pytest.mark.soak
def test_three_prompts_made_now_race_in_the_page_as_in_python(chromium, site, lm):
    page = site_page(chromium, site)
    page.goto(site)
    for prompt in prompts_made_now(3):
        trace = race_in_page(page, prompt, 5, 4, 5, 48)
        assert_the_python_engines(lm, trace, prompt, LookaheadConfig(window=5, ngram=4, guess=5), 48)
    assert page.errors == [] and page.foreign == []
    page.close()
