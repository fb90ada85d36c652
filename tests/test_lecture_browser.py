"""In front of a class, second pass (issue 51), measured in Chromium on the app without its model and on the static
site (its own export, without the browser engine's files): a deck of four embeds walked by a clicker that sends
PageDown and PageUp only, with nobody clicking into a frame; Back after a copied link stays in the lesson and the
address is the state after every action; the arrows step everywhere but in a row of tabs; the last chapter's Next
looks disabled. Screenshots go to out/screenshots/.
"""

import re
import subprocess
import sys

import pytest
from conftest_app import SHOTS, answers, free_port, new_page, open_app
from test_a11y_browser import run_axe

from app.render.site import export_site

pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.server, pytest.mark.browser]

# the address the page would write for its state, and the one it shows, read in one go (no wait between them)
ADDRESS = """() => [location.href, Lade.links.url(Lade.links.write(window.ladeStage.state), true)]"""


@pytest.fixture(scope="module")
def server(page_server):
    yield page_server[0]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The exported site (no browser engine) behind `python -m http.server` on a free port; yields its index's URL."""
    folder = tmp_path_factory.mktemp("lecture-site")
    export_site(folder)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "-d", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/"
    assert answers(url, proc, seconds=30), "the static server did not start"
    try:
        yield url + "index.html"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def address_is_state(page, what: str) -> None:
    shown, state = page.evaluate(ADDRESS)
    assert shown == state, (what, shown, state)


def wait_state(page, condition: str) -> None:
    page.wait_for_function(f"() => {{ const s = window.ladeStage.state; return !!({condition}); }}")


def test_back_after_a_copied_link_and_next_lands_on_the_linked_chapter(chromium, server):
    """Opening `?lesson=3&step=28`, Next, then Back left the site: the first chapter change replaced the history
    entry, because the address the page opened on already equalled the one it wrote. Now the first change after
    opening any address pushes, so Back lands on chapter 3 at step 28, and Forward on chapter 4."""
    page = new_page(chromium, 1280, 800)
    page.goto("about:blank")
    open_app(page, server + "?lesson=3&step=28", "s.state.chapter === 3 && s.state.k === 28")
    page.click("#lesson-next")
    wait_state(page, "s.chapter === 4")
    address_is_state(page, "after Next")
    page.go_back()
    page.wait_for_function("() => window.ladeStage && window.ladeStage.state.chapter === 3", timeout=15_000)
    assert page.evaluate("[ladeStage.state.chapter, ladeStage.state.k]") == [3, 28]
    assert "lesson=3&step=28" in page.url, page.url
    page.go_forward()
    wait_state(page, "s.chapter === 4")
    address_is_state(page, "after Forward")
    assert page.errors == []
    page.close()


def test_the_address_is_the_state_after_every_action(chromium, server):
    """A walk of chapters (pills, Next, Back), steps (keys, buttons), a reveal, a gallery run, the modes (tabs)
    and the lab's settings: after each, read in the same moment as the state, the address is the state's. A
    pointer's click on a mode tab leaves focus where ← → step (it switched to the speed lab), and in a row of tabs
    the arrows move between the tabs, as the page's key hint says."""
    page = new_page(chromium, 1280, 800)
    open_app(page, server + "?lesson=2", "s.state.chapter === 2")
    assert "in a row of tabs they move between the tabs" in page.inner_text(".stage-head .keys")
    k = page.evaluate("ladeStage.state.k")
    page.keyboard.press("ArrowRight")
    wait_state(page, f"s.k === {k + 1}")
    address_is_state(page, "a step by key")
    page.click("#chapter-tab-5")
    wait_state(page, "s.chapter === 5")
    address_is_state(page, "a chapter pill")
    k = page.evaluate("ladeStage.state.k")
    page.keyboard.press("ArrowRight")  # a pointer's click on a chapter pill leaves focus where the arrows step
    wait_state(page, f"s.chapter === 5 && s.k === {k + 1}")
    page.keyboard.press("ArrowLeft")
    wait_state(page, f"s.k === {k}")
    page.click("#lesson-predict button.option")
    wait_state(page, "s.answered")
    address_is_state(page, "a reveal")
    page.click("#lesson-next")
    wait_state(page, "s.chapter === 6")
    address_is_state(page, "Next")
    page.click("#lesson-prev")
    wait_state(page, "s.chapter === 5")
    address_is_state(page, "Back")
    page.click("#mode-explorer")
    wait_state(page, "s.mode === 'explorer'")
    address_is_state(page, "the explorer's tab")
    k = page.evaluate("ladeStage.state.k")
    page.keyboard.press("ArrowRight")  # stepped: it switched to the speed lab
    wait_state(page, f"s.k === {k + 1}")
    assert page.evaluate("ladeStage.state.mode") == "explorer"
    address_is_state(page, "a step after a click on a tab")
    page.click("#step-next")
    wait_state(page, f"s.k === {k + 2}")
    address_is_state(page, "Step ▶")
    name = page.evaluate("ladeStage.boot.gallery.find(g => g.name !== ladeStage.state.current).name")
    page.select_option("#gallery-menu", name)
    wait_state(page, f"s.current === {name!r}")
    address_is_state(page, "a gallery run")
    page.focus("#mode-explorer")  # in the row of tabs the arrows move between the tabs (the ARIA tabs pattern)
    page.keyboard.press("ArrowRight")
    wait_state(page, "s.mode === 'lab'")
    address_is_state(page, "the lab by the tab list's arrow")
    page.select_option("#lab-device", "a100-80gb")
    wait_state(page, "s.lab.device === 'a100-80gb'")
    address_is_state(page, "the lab's device")
    page.click("#mode-lesson")
    wait_state(page, "s.mode === 'lesson'")
    address_is_state(page, "the lesson's tab")
    page.go_back()
    wait_state(page, "s.mode === 'lab'")
    address_is_state(page, "Back to the lab")
    assert page.errors == []
    page.close()


def test_the_last_chapters_next_looks_disabled(chromium, server):
    """Chapter 9's Next said aria-disabled but was drawn as the active blue button. Now it is drawn as no button
    that does something: no fill, a dashed edge, its ink the muted one, not the active Next's."""
    page = new_page(chromium, 1280, 800)
    open_app(page, server + "?lesson=8", "s.state.chapter === 8")
    look = (
        "() => { const s = getComputedStyle(document.querySelector('#lesson-next'));"
        " return [s.backgroundColor, s.borderStyle, s.color]; }"
    )
    active = page.evaluate(look)
    page.click("#lesson-next")
    wait_state(page, "s.chapter === 9")
    page.wait_for_selector("#lesson-next[aria-disabled=true]")
    off = page.evaluate(look)
    ground = page.evaluate("() => getComputedStyle(document.querySelector('.lade-stage')).backgroundColor")
    assert off[0] == ground and off[1] == "dashed" and off[2] != active[2], (off, active, ground)
    assert page.errors == []
    page.close()


# -- a deck of embeds and a clicker -------------------------------------------------------------------------------
# A reveal.js-like host: one slide on screen, the others hidden (visibility and aria-hidden, as reveal.js does), its
# own PageDown / PageUp on the document, and reveal.js's postMessage API ({"method": "next"} as JSON).
DECK = """<!doctype html><html lang="en"><head><title>deck</title><style>
body {{ margin: 0 }} .slides {{ position: relative; width: 960px; height: 540px }}
section {{ position: absolute; inset: 0 }} section:not(.present) {{ visibility: hidden }}
</style></head><body><div class="reveal"><div class="slides">{slides}</div></div><script>
let at = 0; const slides = [...document.querySelectorAll('section')];
function show(i) {{ if (i < 0 || i >= slides.length) return; at = i;
  slides.forEach((s, n) => {{ s.classList.toggle('present', n === i); if (n === i) s.removeAttribute('aria-hidden');
    else s.setAttribute('aria-hidden', 'true'); }}); }}
show(0);
document.addEventListener('keydown', e => {{
  if (e.key === 'PageDown') show(at + 1); if (e.key === 'PageUp') show(at - 1); }});
addEventListener('message', e => {{ if (typeof e.data !== 'string' || e.data[0] !== '{{') return;
  const d = JSON.parse(e.data); if (d.method === 'next') show(at + 1); if (d.method === 'prev') show(at - 1); }});
window.deckAt = () => at;
</script></body></html>"""
# what each slide's frame shows, read inside it
SHOWS = "() => { const s = window.ladeStage.state; return [s.k, s.asked, !!s.answered]; }"
FOCUS = """() => { const e = document.activeElement; if (!e || e.tagName !== 'IFRAME') return 'host';
  return e.closest('section').classList.contains('present') ? 'shown frame' : 'hidden frame'; }"""


def snippet(page, what: str) -> str:
    """The code "Link or embed" writes for `what` at 960x540 (the chapter on screen, or one of its views)."""
    if not page.locator("#embed-code").is_visible():
        page.click(".share summary")
    page.wait_for_selector("#embed-code")
    page.select_option("#embed-size", "960x540")
    page.select_option("#embed-what", what)
    code = page.inner_text("#embed-code")
    assert "<script>" in code and 'width="960" height="540"' in code, code
    return code


def test_a_clicker_walks_a_deck_of_embeds_with_nobody_clicking_into_a_frame(chromium, site):
    """A lecturer's deck of four embeds (chapter 3, the mask from chapter 7, the window from chapter 3, the methods
    table from chapter 6) at 960x540, and a clicker that sends PageDown and PageUp only. Focus entered an embed only
    by a click, each press stepped once, "next" came after the run's last step (125 presses to leave the mask slide,
    about 100 for chapter 3), and focus stayed in the hidden frame after. Now each snippet carries the host's key
    forwarder: PageDown shows each slide's span from its first step to its last (a chapter's opening step to the step
    its answer reveals) and moves the deck on, at most 12 presses a slide; PageUp walks the deck back; focus never
    rests in a hidden frame; the snippet says how many presses its slide takes. A click into a frame is let go of
    when its slide hands back."""
    page = new_page(chromium, 1280, 800)
    codes = []
    for chapter, what in ((3, "chapter"), (7, "mask-view"), (3, "window-view"), (6, "relatives-view")):
        page.goto(site + f"?lesson={chapter}")
        page.wait_for_function(f"() => window.ladeStage && window.ladeStage.state.chapter === {chapter}")
        codes.append(snippet(page, what))
        if what == "window-view":  # the panel with a view's span of steps to choose
            assert run_axe(page, "link-or-embed-a-view") == []
        said = page.inner_text("#embed-keys")
        assert "presses of PageDown" in said or "press of PageDown" in said, said
    page.close()
    host = new_page(chromium, 1000, 600)
    host.set_content(DECK.format(slides="".join(f"<section>{c}</section>" for c in codes)))
    frames = [host.frames[i + 1] for i in range(4)]
    for f in frames:
        f.wait_for_function("() => window.ladeStage && window.ladeStage.run() && window.ladeStage.state.embed")
    host.wait_for_timeout(500)
    spans = [
        f.evaluate("() => { const p = Lade.slide.place(window.ladeStage); return p.list.map(b => b.k); }")
        for f in frames
    ]
    seen = [[f.evaluate(SHOWS)] for f in frames]
    presses = [0, 0, 0, 0]
    for _ in range(60):  # forward: to the last slide's last beat, and one press past it
        at = host.evaluate("window.deckAt()")
        host.keyboard.press("PageDown")
        presses[at] += 1
        host.wait_for_timeout(120)
        seen[host.evaluate("window.deckAt()")].append(frames[host.evaluate("window.deckAt()")].evaluate(SHOWS))
        assert host.evaluate(FOCUS) == "host", (at, presses)
        if at == 3 and frames[3].evaluate(SHOWS) == seen[3][-2] and presses[3] > 1:
            break
    host.screenshot(path=str(SHOTS / "deck-last-slide.png"))
    for i in range(4):
        steps = [k for k, _, _ in seen[i]]
        assert spans[i][0] in steps and spans[i][-1] in steps, (i, spans[i], seen[i])
        assert presses[i] <= 12, (i, presses)
    assert seen[0][-1][2], seen[0]  # the chapter's answer was revealed
    back = [0, 0, 0, 0]
    for _ in range(60):  # and back to the first slide's first beat
        at = host.evaluate("window.deckAt()")
        if at == 0 and frames[0].evaluate(SHOWS) == [spans[0][0], False, False]:
            break
        host.keyboard.press("PageUp")
        back[at] += 1
        host.wait_for_timeout(120)
        assert host.evaluate(FOCUS) == "host", (at, back)
    assert host.evaluate("window.deckAt()") == 0 and all(n <= 12 for n in back), back
    print("presses a slide, forward", presses, "back", back, "spans", spans)
    # someone clicks into the mask's frame: its slide's keys go to the frame, and when it hands back, focus leaves it
    while host.evaluate("window.deckAt()") < 1:
        host.keyboard.press("PageDown")
        host.wait_for_timeout(120)
    frames[1].click("h3.view-title")
    assert host.evaluate(FOCUS) == "shown frame"
    for _ in range(12):
        host.keyboard.press("PageDown")
        host.wait_for_timeout(120)
        if host.evaluate("window.deckAt()") == 2:
            break
    assert host.evaluate("window.deckAt()") == 2 and host.evaluate(FOCUS) == "host"
    assert host.errors == []
    host.close()


# -- a chapter as a slide: in a frame, and in Present ------------------------------------------------------------
# The size of each text node a reader reads inside `sel` as drawn (zoom included): marks drawn small on purpose (a
# chart's ticks, a cell's position subscript, the ✓/✗ icons and change dots), text for screen readers and a beat
# not on screen (`.beat-off`, a reveal's `.off`: hidden, keeping their room) left out.
SIZES = """sel => { const out = []; for (const box of document.querySelectorAll(sel)) {
  const walk = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) { const n = walk.currentNode, p = n.parentElement;
    if (!n.data.trim() || !p.getClientRects().length || p.closest(
        '.sr-only, [hidden], svg, sub, .icon, .dot, script, style, .ask .beat-off, .reveal > .off')) continue;
    out.push(Math.round(parseFloat(getComputedStyle(p).fontSize) * (p.currentCSSZoom || 1) * 10) / 10); } }
  return out.sort((a, b) => a - b); }"""
# what of the slide is not on the first screen or is cut: the page scrolls, an element ends past the window, a scroll
# box holds more than it shows, or the question or the main view is not wholly inside the window
CUT = """() => { const root = document.scrollingElement, W = innerWidth, H = innerHeight, out = [];
  if (root.scrollHeight > root.clientHeight + 1) out.push(`the page scrolls: ${root.scrollHeight} > ${H}`);
  if (root.scrollWidth > root.clientWidth + 1) out.push(`the page scrolls sideways: ${root.scrollWidth} > ${W}`);
  for (const el of document.querySelectorAll('.lade-stage .scroll'))
    if (el.getClientRects().length && el.scrollWidth > el.clientWidth + 1)
      out.push(`${el.getAttribute('aria-label')} is cut: ${el.scrollWidth} > ${el.clientWidth}`);
  for (const sel of ['.lesson-focus', '#lesson-predict:not(.beat-off)', '#lesson-title', '#lesson-text']) {
    const el = document.querySelector(sel); if (!el) continue; const r = el.getBoundingClientRect();
    if (r.top < -1 || r.left < -1 || r.bottom > H + 1 || r.right > W + 1)
      out.push(`${sel} is not whole on screen: ${[r.left, r.top, r.right, r.bottom].map(Math.round)}`); }
  return out; }"""
BEAT = "() => { const s = window.ladeStage.state; return [s.chapter, s.k, s.asked, !!s.answered]; }"


def beats_of(page) -> int:
    """How many beats the slide on screen has (one on a page that has no slides)."""
    return page.evaluate("() => Lade.slide ? Lade.slide.place(window.ladeStage).list.length : 1")


@pytest.mark.parametrize("width, height, body, view", [(1280, 720, 18, 14), (1920, 1080, 24, 18)])
def test_present_fits_the_projector_in_every_chapter(chromium, server, width, height, body, view):
    """Present at 1280x720 drew 16.3 px body text (24.4 at 1920x1080), cut chapters 2, 3, 6 and 7's main view
    sideways (chapter 6's table lost the columns its text cites) and put the question below the fold in 6 of 8
    chapters. Now each chapter in Present is a slide fitted to the screen: at every beat a clicker walks (PageDown
    through its question and answer to the next chapter), the words' text is at least 18 px (24 at 1920x1080), no
    text in the view under 14 px (18), the main view and the question whole on the first screen, nothing cut."""
    page = new_page(chromium, width, height)
    open_app(page, server + "?lesson=1&present=1", "s.state.present && document.querySelector('#lesson-text')")
    seen = set()
    for _ in range(40):
        page.wait_for_timeout(250)  # fitted a frame after it is drawn
        where = page.evaluate(BEAT)
        if where[0] not in seen:
            page.screenshot(path=str(SHOTS / f"present-{width}-chapter{where[0]}.png"))
            if width == 1280:
                assert run_axe(page, f"present-chapter{where[0]}") == [], where
        seen.add(where[0])
        words = page.evaluate(SIZES, "#lesson-title, #lesson-text, #lesson-predict")
        views = page.evaluate(SIZES, ".lesson-focus")
        assert words and words[0] >= body - 0.05, (where, words[:6])
        assert not views or views[0] >= view - 0.05, (where, views[:6])
        assert page.evaluate(CUT) == [], where
        if where[0] == 9:
            break
        page.keyboard.press("PageDown")
    assert seen == set(range(1, 10)), seen
    assert page.errors == []
    page.close()


def test_every_chapter_is_a_slide_at_18_px_and_the_panel_says_so(chromium, server):
    """`?lesson=3&embed=1` (its words, view and question) measured 11.1 px median (8.3 px smallest) at 960x540 where
    "Link or embed" promised 12.1, and only single views reached 18 px. Now every chapter's slide in a 960x540 frame,
    at each of its beats, has its median text at 18 px or more and none under 14 px, with nothing cut; and the panel
    promises, for the chapter in that frame, what the frame draws (within 0.5 px)."""
    page, host = new_page(chromium, 1280, 800), new_page(chromium, 1000, 600)
    for chapter in range(1, 10):
        open_app(page, server + f"?lesson={chapter}", f"s.state.chapter === {chapter}")
        if not page.locator("#embed-code").is_visible():
            page.click(".share summary")
        page.wait_for_selector("#embed-code")
        page.select_option("#embed-size", "960x540")
        page.select_option("#embed-what", "chapter")
        said = page.inner_text("#embed-fit")
        shrunk = re.search(r"shrinks its text to ([\d.]+) px", said)
        promised = float((shrunk or re.search(r"with its text at ([\d.]+) px", said)).group(1))
        src = re.search(r'src="([^"]+)"', page.inner_text("#embed-code")).group(1).replace("&amp;", "&")
        host.set_content(f'<iframe src="{src}" width="960" height="540" style="border:0" title="slide"></iframe>')
        frame = host.frames[1]
        frame.wait_for_function("() => window.ladeStage && window.ladeStage.run() && window.ladeStage.state.embed")
        for beat in range(beats_of(frame)):
            frame.wait_for_timeout(250)
            sizes = frame.evaluate(SIZES, ".lade-stage")
            median = sizes[len(sizes) // 2]
            where = (chapter, beat, frame.evaluate(BEAT))
            if beat == 0:
                assert abs(median - promised) <= 0.5, (where, said, median)
                host.screenshot(path=str(SHOTS / f"slide-chapter{chapter}-960x540.png"))
            assert median >= 18 - 0.05 and sizes[0] >= 14 - 0.05, (where, sizes[:6], median)
            assert frame.evaluate(CUT) == [], where
            assert run_axe(frame, f"slide-chapter{chapter}-beat{beat}") == [], where
            frame.evaluate("() => Lade.slide && Lade.slide.press(window.ladeStage, 1, false)")
    assert page.errors == [] and host.errors == []
    page.close()
    host.close()


# -- handouts ------------------------------------------------------------------------------------------------------
def printed(pdf: bytes) -> list[dict]:
    """Each page of a PDF: its text and the size of every piece of text on it, in points, as printed."""
    import io
    import math

    from pypdf import PdfReader

    pages = []
    for page in PdfReader(io.BytesIO(pdf)).pages:
        sizes = []

        def seen(text, cm, tm, _font, size, sizes=sizes):
            if text.strip():
                sizes.append((size * math.hypot(tm[2], tm[3]) * math.hypot(cm[2], cm[3]), text.strip()[:20]))

        text = page.extract_text(visitor_text=seen)
        pages.append({"text": text, "sizes": sorted(sizes), "tiles": tiles(page.get("/Resources"))})
    return pages


def tiles(resources) -> int:
    """How many tiling patterns (an SVG <pattern>'s fill, a hatched key's) a PDF page's resources hold, its drawn
    forms' included."""
    res = resources.get_object() if resources else {}
    patterns = res.get("/Pattern")
    n = sum(p.get_object().get("/PatternType") == 1 for p in patterns.get_object().values()) if patterns else 0
    forms = res.get("/XObject")
    for form in forms.get_object().values() if forms else ():
        if form.get_object().get("/Subtype") == "/Form":
            n += tiles(form.get_object().get("/Resources"))
    return n


# every fill that names a pattern finds it inside the handout (the part of the page that prints)
UNFILLED = """() => [...document.querySelectorAll('.handout [fill^="url(#"]')].filter(el => {
  const target = document.getElementById(el.getAttribute('fill').slice(5, -1));
  return !target || !target.closest('.handout'); }).length"""


def test_the_whole_lesson_prints_right(chromium, site):
    """ "Print the whole lesson" printed chapter 7's mask without its candidate cells (their fill named a pattern the
    printed document did not hold), the mask key's chips pale grey (no backgrounds printed), chapter 3's trajectories
    at 4.4 pt, and 9 chapters on 13 pages where the page promised one each. Read from the printed PDF now: no text
    under 7 pt on Letter or A4 (a dense view prints its zoomed variant), the mask's candidate cells filled from a
    pattern the handout holds, colours printed as on screen, and the page count the page states is the PDF's
    (Letter; A4 at most that)."""
    page = new_page(chromium, 1000, 800)
    open_app(page, site + "?lesson=4", "s.state.chapter === 4")
    page.evaluate("() => { window.print = () => { window.printed = (window.printed || 0) + 1; }; }")
    page.click("#print-lesson")
    page.wait_for_function("() => window.printed === 1")
    assert page.evaluate(UNFILLED) == 0
    page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
    page.emulate_media(media="print")
    assert page.evaluate("() => getComputedStyle(document.querySelector('.handout .key.m-x')).printColorAdjust") == (
        "exact"
    )
    letter = printed(page.pdf(path=str(SHOTS / "print-lesson-letter.pdf"), format="Letter"))
    page.emulate_media(media="screen")
    page.evaluate("() => window.ladeStage.handout()")  # printing ended the last one (afterprint)
    page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
    page.emulate_media(media="print")
    a4 = printed(page.pdf(path=str(SHOTS / "print-lesson-a4.pdf"), format="A4"))
    for paper, pages in (("Letter", letter), ("A4", a4)):
        least = min((p["sizes"][0], i) for i, p in enumerate(pages) if p["sizes"])
        assert least[0][0] >= 7 - 0.01, (paper, least, pages[least[1]]["text"][:80])
    mask = next(p for p in letter if "sees a candidate token" in p["text"])
    assert mask["tiles"] >= 2, mask["tiles"]  # the mask's hatch and its key's, each a tiling pattern
    said = page.inner_text(".notice")
    n = int(re.search(r"(\d+) pages? of Letter paper, at most \1 of A4", said).group(1))
    assert len(letter) == n and len(a4) <= n, (n, len(letter), len(a4))
    assert page.errors == []
    page.close()


def test_the_screen_is_as_it_was_after_printing(chromium, site):
    """After "Print the whole lesson", the screen's trajectories stayed shrunk until a reload: the browser asks the
    page to get ready to print more than once (Chromium's print to PDF does), and each ask replaced the list of what
    the last one shrank and opened, so printing undid only the last. Now, printed as Chromium prints, the screen is as
    it was: no view zoomed, the same <details> open, the trajectories' ten steps drawn."""
    page = new_page(chromium, 1280, 800)
    open_app(page, site + "?lesson=3", "s.state.chapter === 3")
    look = """() => [[...document.querySelectorAll('.lade-stage [style*="zoom"]')].map(e => e.tagName),
      document.querySelectorAll('.lade-stage details[open]').length,
      document.querySelectorAll('#trajectory-view tr.guess-row').length]"""
    before = page.evaluate(look)
    page.evaluate("() => { window.print = () => {}; }")
    page.click("#print-lesson")
    page.wait_for_selector(".handout", state="attached")
    page.evaluate("() => dispatchEvent(new Event('beforeprint'))")
    page.emulate_media(media="print")
    page.pdf()  # asks the page to get ready again, then says it printed (afterprint)
    page.emulate_media(media="screen")
    assert page.locator(".handout").count() == 0
    assert page.evaluate(look) == before, before
    assert page.errors == []
    page.close()


# -- phones --------------------------------------------------------------------------------------------------------
PHONE_VIEWS = """() => { const shown = [...document.querySelectorAll('.lesson-focus')].filter(v => v.offsetParent);
  return { top: shown.length ? shown[0].getBoundingClientRect().top + scrollY : null,
    boxes: [...document.querySelectorAll('.lesson-focus .scroll')].filter(b => b.offsetParent)
      .map(b => [b.getAttribute('aria-label'), b.clientWidth, b.scrollWidth]),
    ticks: [...document.querySelectorAll('.lesson-focus svg.chart text')]
      .filter(t => t.textContent.trim() && t.getClientRects().length).map(t =>
      parseFloat(getComputedStyle(t).fontSize) * Math.hypot(t.getCTM().a, t.getCTM().b)
        * (t.ownerSVGElement.currentCSSZoom || 1)),
    text: [...document.querySelectorAll('.lesson-focus *')].filter(e => [...e.childNodes].some(n =>
        n.nodeType === 3 && n.data.trim()) && e.getClientRects().length && !e.closest('.sr-only, [hidden]'))
      .map(e => parseFloat(getComputedStyle(e).fontSize) * (e instanceof SVGGraphicsElement
        ? Math.hypot(e.getCTM().a, e.getCTM().b) * (e.ownerSVGElement.currentCSSZoom || 1) : (e.currentCSSZoom || 1)))
      .sort((a, b) => a - b) }; }"""


def test_on_a_phone_every_chapter_is_laid_out_for_a_column(chromium, site):
    """At 390 px chapter 3's window showed column 0 of 7, chapter 6's methods table no number, the charts' ticks
    were 5.7 px and chapter 6's figure started about 1,244 px down. Now, in every chapter: the first view starts
    within the first screen (after the chapter's first paragraph), no scroll box shows less than half of what it
    holds (the window's levels and the methods table reflow; the mask and the trajectories are zoomed), every text
    in the views is at least 10.5 px and a chart's ticks at least 10 px; the window shows all its columns and the
    methods table every lane's tokens per step."""
    page = new_page(chromium, 390, 844)
    for chapter in range(1, 10):
        open_app(page, site + f"?lesson={chapter}", f"s.state.chapter === {chapter}")
        page.wait_for_timeout(300)
        got = page.evaluate(PHONE_VIEWS)
        page.screenshot(path=str(SHOTS / f"phone-chapter{chapter}.png"), full_page=True)
        if chapter == 9:  # "Play with it" puts no view in focus
            continue
        assert got["top"] is not None and got["top"] < 844, (chapter, got["top"])
        assert all(shown >= 0.5 * whole for _, shown, whole in got["boxes"]), (chapter, got["boxes"])
        assert got["text"] and got["text"][0] >= 10.5 - 0.05, (chapter, got["text"][:4])
        assert all(t >= 10 for t in got["ticks"]), (chapter, sorted(got["ticks"])[:3])
        if chapter in (3, 6, 7):  # the views laid out anew for a phone
            assert run_axe(page, f"phone-chapter{chapter}") == [], chapter
        if chapter == 3:
            window = next(b for b in got["boxes"] if b[0].startswith("window"))
            assert window[2] <= window[1] + 1, window  # every column in view
        if chapter == 6:
            values = page.evaluate(
                "() => [...document.querySelectorAll('#relatives-view td[data-label=\"tokens/step\"]')]"
                ".map(td => { const r = td.getBoundingClientRect(); return r.right <= innerWidth && r.width > 0; })"
            )
            assert values and all(values), values
    assert page.errors == []
    page.close()


# -- the smaller items ------------------------------------------------------------------------------------------
def test_the_step_shown_is_outlined_clear_of_its_neighbours(chromium, site):
    """Chapter 5's outlined tokens (the step shown) overlapped one another and cut their glyphs (the "f" of "def").
    Now each outline (2 px, 1 px off the token) lies clear of the next one's on its line."""
    page = new_page(chromium, 1280, 800)
    open_app(page, site + "?lesson=5", "s.state.chapter === 5")
    boxes = page.evaluate(
        "() => [...document.querySelectorAll('#la-output .tk.now')].map(t => { const r = t.getBoundingClientRect(),"
        " s = getComputedStyle(t), o = parseFloat(s.outlineWidth) + parseFloat(s.outlineOffset);"
        " return [r.left - o, r.right + o, Math.round(r.top)]; })"
    )
    assert len(boxes) >= 2, boxes
    for a, b in zip(boxes, boxes[1:], strict=False):
        if a[2] == b[2]:
            assert a[1] <= b[0] + 0.5, (a, b)
    assert page.errors == []
    page.close()


def test_chapter_3_answers_no_later_question_and_says_its_multi_token_step_plainly(chromium, site):
    """Chapter 3's trajectories (the ten steps the explorer shows, read aloud as "it kept #24 ,") showed what the
    step chapter 5 asks about kept, before chapter 5 asks it; and its paragraph on how far the window's guesses move
    after a step that accepts several tokens ran to one sentence of 60 words. Now chapter 3 shows its last three
    steps, none a later chapter asks about, a token read aloud in quotes, and that paragraph in sentences of at
    most 30 words."""
    page = new_page(chromium, 1280, 800)
    asked = []
    for chapter in range(4, 9):
        open_app(page, site + f"?lesson={chapter}", f"s.state.chapter === {chapter}")
        asked.append(
            page.evaluate("""() => { const s = window.ladeStage, ch = Lade.lesson.CHAPTERS[s.state.chapter - 1];
          return ch.predict ? ch.predict.answer(s.run(), s.state.k, s.lessonContext(s.run())).step : null; }""")
        )
    open_app(page, site + "?lesson=3", "s.state.chapter === 3")
    rows = page.evaluate(
        "() => [...document.querySelectorAll('#trajectory-view tr.kept-row th')].map(t => t.textContent)"
    )
    said = page.text_content("#trajectory-view ul.sr-only")
    assert len(rows) == 3, rows
    for step in [a for a in asked if a is not None]:
        assert f"step {step} kept" not in rows and f"Step {step} guessed" not in said, (step, rows)
    assert "kept #" in said and "“" in said, said[:200]
    paragraph = page.evaluate(
        "() => document.querySelector('#lesson-text [data-fact=multi_step]').closest('p').textContent"
    )
    sentences = [s for s in re.split(r"(?<=[.:;])\s+", paragraph) if s]
    assert max(len(s.split()) for s in sentences) <= 30, sentences
    assert page.errors == []
    page.close()


def test_chapter_4_says_why_its_lookup_found_nothing(chromium, site):
    """Chapter 4's feedback on a wrong answer said "The trace says: 0 candidates" and never why. Now it says the
    pool held no n-gram under x, and, as x = "class" has a twin in the prompt ("␣class"), that a key is one exact
    token, its leading space included."""
    page = new_page(chromium, 1280, 800)
    open_app(page, site + "?lesson=4", "s.state.chapter === 4")
    right = page.evaluate("""() => { const s = window.ladeStage, ch = Lade.lesson.CHAPTERS[3];
      return ch.predict.answer(s.run(), s.state.k, s.lessonContext(s.run())).option; }""")
    page.click(f"#lesson-predict button.option:not([data-option='{right}'])")
    said = page.inner_text("#lesson-answer")
    assert said.startswith("✗ Not this time. The trace says: 0 candidates.") and "held no n-gram under x = “" in said
    assert "a key is one exact token, its leading space included" in said and "“␣class”" in said, said
    assert page.errors == []
    page.close()


def test_acceptance_length_is_explained_where_it_stands(chromium, site):
    """ "acceptance length" stood beside "tokens/step" in chapter 6's methods table with no word on how they differ
    (the definitions were in a closed <details>). Now a line under the table says what each counts, in the metrics
    register's words."""
    page = new_page(chromium, 1280, 800)
    open_app(page, site + "?lesson=6", "s.state.chapter === 6")
    text = page.inner_text("#relatives-view")  # what is shown: a closed <details> is not
    terms = {t["id"]: t for t in page.evaluate("() => window.ladeStage.run().d.metric_terms")}
    for key in ("tokens_per_step", "mean_acceptance_length"):
        assert f"{terms[key]['label']}: {terms[key]['ours']}" in text, (key, text[:600])
    assert page.errors == []
    page.close()


def test_the_batch_charts_examples_are_labelled_above_the_plot(chromium, site):
    """The lab's batch chart stacked its three servers' example labels over its band and lines in small type. Now
    they stand in rows above the plot, apart from one another, at 12 px or more as drawn."""
    page = new_page(chromium, 1280, 900)
    open_app(page, site + "?run=code-class&mode=lab&device=h100&size=7B&batch=1&devices=1", "s.state.mode === 'lab'")
    page.wait_for_selector("#lab-prediction")
    got = page.evaluate("""() => { const svg = [...document.querySelectorAll('.lab-text svg.chart')]
        .find(s => /batch/.test(s.getAttribute('aria-label')));
      const plot = svg.querySelector('rect').getBoundingClientRect();
      return { plot: plot.top, labels: [...svg.querySelectorAll('text')].filter(t => /example/.test(t.textContent))
        .map(t => {
        const r = t.getBoundingClientRect();
        return [r.left, r.right, r.top, r.bottom, parseFloat(getComputedStyle(t).fontSize) * t.getCTM().a]; }) }; }""")
    labels = got["labels"]
    assert len(labels) >= 3, got
    assert all(b[3] <= got["plot"] + 1 and b[4] >= 12 - 0.05 for b in labels), got
    apart = lambda a, b: a[1] <= b[0] or b[1] <= a[0] or a[3] <= b[2] or b[3] <= a[2]  # noqa: E731
    assert all(apart(a, b) for i, a in enumerate(labels) for b in labels[i + 1 :]), labels
    assert page.errors == []
    page.close()
