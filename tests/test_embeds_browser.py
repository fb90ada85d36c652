"""The lesson as a lesson and the embeds as slides, measured in Chromium on the app without its model: each
chapter's focused view is on screen with its words (at 1280x800 both start in the first viewport and the view
shows there; at 390x844 the view starts within a screen and a half), and every embed kind (each view and group
of a gallery run, each chapter) fits a 720x405 and a 960x540 iframe with nothing scrolling inside the frame and at
least one view wholly visible; the "Link or embed" snippet, chosen by measurement for each frame the panel offers, fits
that frame at a slide's type (18 px at 960x540). Screenshots of every chapter at both widths and every embed at
720x405 go to out/screenshots/ (look at them when a layout test fails).
"""

import re

import pytest
from conftest_app import CHAPTERS as CHAPTER_COUNT
from conftest_app import SHOTS, new_page, open_app

from app.render.views import VIEW_GROUPS, VIEW_IDS

pytest.importorskip("playwright.sync_api")
CHAPTERS = range(1, CHAPTER_COUNT + 1)
EMBED_RUN = "code-class"
SLIDES = [(720, 405), (960, 540), (1280, 720)]  # the frames "Link or embed" offers (lade-page.js EMBED_SIZES)
EMBEDS = [f"?run={EMBED_RUN}&view={v}&embed=1" for v in (*VIEW_IDS, *VIEW_GROUPS)] + [
    f"?lesson={n}&embed=1" for n in CHAPTERS
]
# make test: every group and chapter, and the dense single views (the mask, the window, the trajectories); the other
# single views, each inside a group already, in the soak tier
DENSE = ("mask-view", "window-view", "trajectory-view")
FITS = [
    q
    if "lesson=" in q or any(f"view={v}&" in q for v in (*DENSE, *VIEW_GROUPS))
    else pytest.param(q, marks=pytest.mark.soak)
    for q in EMBEDS
]


@pytest.fixture(scope="module")
def server(page_server):
    yield page_server[0]


def focus_of(page, chapter: int) -> list:
    """The views the chapter puts in focus, as the lesson declares them."""
    return page.evaluate("n => Lade.lesson.CHAPTERS[n - 1].focus", chapter)


BOXES = """() => {
    const box = (el) => { const r = el.getBoundingClientRect(); return { top: r.top + scrollY, bottom: r.bottom +
    scrollY,
        left: r.left, right: r.right, width: r.width, height: r.height }; };
    const views = [...document.querySelectorAll('.lesson-focus')].filter(v => v.offsetParent !== null).map(box);
    return { text: box(document.querySelector('#lesson-text')), views, scrollY };
}"""


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_chapters_view_is_beside_its_words_at_1280(chromium, server, chapter):
    """At 1280x800 the chapter's text and a focused view both start inside the first viewport and the view shows
    there (a picture a screen below its words is not beside them)."""
    page = new_page(chromium, 1280, 800)
    open_app(page, f"{server}?lesson={chapter}", "document.querySelector('#lesson-text')")
    page.wait_for_function("n => document.querySelector('#lesson-text').dataset.chapter == n", arg=chapter)
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=str(SHOTS / f"layout-chapter{chapter}-1280.png"))
    got = page.evaluate(BOXES)
    assert got["text"]["top"] < 800, got["text"]
    if not focus_of(page, chapter):  # "Play with it" puts no view in focus
        assert got["views"] == []
    else:
        inside = [
            v
            for v in got["views"]
            if v["top"] < 800
            and v["bottom"] > 0
            and v["right"] > 0
            and v["left"] < 1280
            and v["width"] > 0
            and v["height"] > 0
        ]
        assert inside, (chapter, got)
    assert page.errors == []
    page.close()


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_chapters_view_follows_its_words_at_390(chromium, server, chapter):
    """At 390x844 (a phone) the first focused view starts within 1.5 screen heights of the top, right after the
    chapter's text, not under the explorer's machinery."""
    page = new_page(chromium, 390, 844)
    open_app(page, f"{server}?lesson={chapter}", "document.querySelector('#lesson-text')")
    page.wait_for_function("n => document.querySelector('#lesson-text').dataset.chapter == n", arg=chapter)
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=str(SHOTS / f"layout-chapter{chapter}-390.png"), full_page=True)
    got = page.evaluate(BOXES)
    if focus_of(page, chapter):
        assert got["views"], (chapter, got)
        assert got["views"][0]["top"] < 1.5 * 844, (chapter, got["views"][0], got["text"])
        assert got["views"][0]["top"] >= got["text"]["top"], "the view comes after the words"
    assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 1
    page.close()


FRAME_FIT = """() => {
    const root = document.scrollingElement || document.documentElement, W = innerWidth, H = innerHeight;
    const views = [...document.querySelectorAll('.view')].filter(v => v.offsetParent !== null).map(v => {
        const r = v.getBoundingClientRect();
        return { id: v.id, top: r.top, left: r.left, bottom: r.bottom, right: r.right, width: r.width,
                 height: r.height };
    });
    return { scrollHeight: root.scrollHeight, clientHeight: root.clientHeight, scrollWidth: root.scrollWidth,
             clientWidth: root.clientWidth, W, H, views,
             whole: views.filter(r => r.width > 0 && r.height > 0 && r.top >= -1 && r.left >= -1 && r.bottom <= H + 1
                                  && r.right <= W + 1).map(r => r.id) };
}"""


def resize(host, child, width: int, height: int) -> None:
    """Resize the host's iframe to width x height and wait until the embed inside has laid itself out again."""
    host.evaluate(
        "([w, h]) => { const f = document.querySelector('iframe'); f.width = w; f.height = h; }", [width, height]
    )
    child.wait_for_function("([w, h]) => innerWidth === w && innerHeight === h", arg=[width, height])
    child.evaluate(
        "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 100))))"
    )


@pytest.mark.parametrize("query", FITS)
def test_every_embed_fits_a_slide(chromium, server, query):
    """An embed in an iframe of a 16:9 slide, each size in SLIDES (the frame resized in place, as a slide deck
    does): nothing scrolls inside the frame (either way) and at least one view is wholly visible (a chapter that puts
    no view in focus excepted)."""
    width, height = SLIDES[0]
    big = max(w for w, _ in SLIDES), max(h for _, h in SLIDES)
    page = new_page(chromium, big[0] + 40, big[1] + 40)
    page.set_content(
        f'<body style="margin:0"><iframe src="{server}{query}" width="{width}" height="{height}" '
        f'style="border:0" title="embed"></iframe></body>'
    )
    frame = page.frame_locator("iframe")
    frame.locator(".lade-stage").wait_for()
    child = page.frames[1]
    child.wait_for_function("() => window.ladeStage && window.ladeStage.run() && window.ladeStage.state.embed")
    no_focus = query.startswith("?lesson=") and not child.evaluate(
        "n => Lade.lesson.CHAPTERS[n - 1].focus.length", int(query.split("=")[1].split("&")[0])
    )
    for width, height in SLIDES:
        resize(page, child, width, height)
        got = child.evaluate(FRAME_FIT)
        if width == 720:
            name = query.strip("?").replace("&embed=1", "").replace("=", "-").replace("&", "_")
            page.locator("iframe").screenshot(path=str(SHOTS / f"embed-{name}-{width}x{height}.png"))
        where = (query, width, height)
        assert got["scrollHeight"] <= got["clientHeight"] + 1, (where, got["scrollHeight"], got["clientHeight"])
        assert got["scrollWidth"] <= got["clientWidth"] + 1, (where, got["scrollWidth"], got["clientWidth"])
        if not no_focus:
            assert got["whole"], (where, got["views"])
    page.close()


# The size of each text node a slide's reader reads (words, captions, table cells, tokens, controls), in CSS pixels
# as drawn (zoom included): marks and labels drawn smaller on purpose (a chart's ticks, a cell's position subscript,
# the ✓/✗ icons and change dots) and text off screen (the skip link until focused) are left out.
TEXT_PX = """() => { const out = []; const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) { const n = walk.currentNode, p = n.parentElement;
    const r = p.getBoundingClientRect();
    if (!n.data.trim() || !r.width || r.right < 0 || r.left > innerWidth || r.bottom < 0 || r.top > innerHeight
        || p.closest('.sr-only, [hidden], svg, sub, .icon, .dot, script, style')) continue;
    const px = parseFloat(getComputedStyle(p).fontSize) * (p.currentCSSZoom || 1);
    out.push([Math.round(px * 10) / 10, n.data.trim().slice(0, 24)]); }
  return out.sort((a, b) => a[0] - b[0]); }"""
INNER_SCROLL = """() => [...document.querySelectorAll('.scroll')].filter(el => el.getClientRects().length &&
  el.scrollWidth > el.clientWidth + 1).map(el => el.getAttribute('aria-label'))"""


@pytest.mark.parametrize(
    "where",
    ["?lesson=3", pytest.param("?run=code-class&step=20", marks=pytest.mark.soak)],  # make test: a chapter
)
def test_the_snippet_fits_the_frame_it_was_chosen_for(chromium, server, where):
    """ "Link or embed" chose `view=chain` whatever the frame (column 0 of the window and half of verification at
    960x540), and embeds only shrank (median text 12.5 px on a 960x540 slide). Now, for each frame the panel offers,
    the snippet is the first choice measured to fit that frame at a slide's type, and the panel says so; loaded in an
    iframe of that size (one load, the frame resized in place as a slide deck does), it fits with nothing scrolling
    inside (the page or a sideways scroll box), and at 960x540 every word, caption, cell and token is at least
    18 px."""
    page = new_page(chromium, 1280, 800)
    open_app(page, server + where)
    page.click(".share summary")
    snippets = {}
    for width, height in SLIDES:
        page.select_option("#embed-size", f"{width}x{height}")
        said = page.inner_text("#embed-fit")
        assert said.startswith("Chosen to fit: ") and f"a {width} × {height} frame" in said, said
        assert f"its text at {height / 30:g} px" in said, said
        code = page.inner_text("#embed-code")
        assert f'width="{width}" height="{height}"' in code, code
        snippets[width, height] = re.search(r'src="([^"]+)"', code).group(1)
    assert len(set(snippets.values())) == 1, snippets  # every 16:9 frame sets the same type, so the same choice fits
    if where.startswith("?lesson=") and "view=" in snippets[SLIDES[0]]:  # the chapter comes first: why not it
        assert "chapter 3, with its question does not (its text would shrink to " in said, said
    # a choice the visitor makes that does not fit is kept, and the panel names what does
    page.select_option("#embed-what", "chain")
    said = page.inner_text("#embed-fit")
    assert re.match(
        r"one step: window, pool and verification does not fit a 1280 × 720 frame with its text at 24 px: it shrinks",
        said,
    ), said
    assert "These fit: " in said and "the 2D window" in said.split("These fit: ")[1], said
    # each choice is named for a person, never by its element id (the walk found "ar-output, la-output, ...")
    labels = page.eval_on_selector_all("#embed-what option, .pictures option", "els => els.map((e) => e.textContent)")
    assert labels and not [x for x in labels if re.fullmatch(r"[a-z]+(-[a-z]+)+", x)], labels
    assert "view=chain" in page.inner_text("#embed-code")
    # where nothing fits, the panel says so (the measurement answered "no" for every choice)
    none = page.evaluate("""() => { const s = window.ladeStage, run = s.run();
      const body = Lade.page.share({ run, state: s.state, boot: s.boot, actions: s.actions, standalone: false,
        measure: () => ({ px: 9, want: 18, readable: false }) });
      const box = document.createElement('div'); box.append(...body);
      return box.querySelector('#embed-fit').textContent; }""")
    assert none.startswith("Nothing here fits a 960 × 540 frame with its text at 18 px;"), none
    if "step=20" in where:  # measured once stepping pauses (it took 0.3-0.45 s a step), then for the step shown
        page.evaluate("() => window.ladeStage.go(21)")
        page.wait_for_function("() => document.querySelector('#embed-code').textContent.includes('step=21')")
    src = snippets[SLIDES[0]]
    assert "view=chain" not in src and "embed=1" in src
    host = new_page(chromium, 1320, 760)
    host.set_content(f'<body style="margin:0"><iframe src="{src}" width="720" height="405" style="border:0" title="e">')
    host.frame_locator("iframe").locator(".lade-stage").wait_for()
    child = host.frames[1]
    child.wait_for_function("() => window.ladeStage && window.ladeStage.run() && window.ladeStage.state.embed")
    for width, height in SLIDES:
        resize(host, child, width, height)
        got = child.evaluate(FRAME_FIT)
        where_ = (src, width, height)
        assert got["scrollHeight"] <= got["clientHeight"] + 1 and got["scrollWidth"] <= got["clientWidth"] + 1, (
            where_,
            got,
        )
        assert got["whole"], (where_, got["views"])
        assert child.evaluate(INNER_SCROLL) == [], where_
        if (width, height) == (960, 540):
            sizes = child.evaluate(TEXT_PX)
            assert sizes and sizes[0][0] >= 18 - 0.05, (where_, sizes[:8])
            name = where.strip("?").replace("=", "-").replace("&", "_")
            host.locator("iframe").screenshot(path=str(SHOTS / f"snippet-{name}-{width}x{height}.png"))
    assert page.errors == [] and host.errors == []
    page.close()
    host.close()
