"""The lesson as a lesson and the embeds as slides, measured in Chromium on the app without its model: each
chapter's focused view is on screen with its words (at 1280x800 both start in the first viewport and the view
shows there; at 390x844 the view starts within a screen and a half), and every embed kind (each view and group
of a gallery run, each chapter) fits a 720x405 and a 960x540 iframe with nothing scrolling inside the frame and at
least one view wholly visible. Screenshots of every chapter at both widths and every embed at 720x405 go to
out/screenshots/ (look at them when a layout test fails).
"""

import pytest
from conftest_app import CHAPTERS as CHAPTER_COUNT
from conftest_app import SHOTS, new_page, open_app

from app.render.views import VIEW_GROUPS, VIEW_IDS

pytest.importorskip("playwright.sync_api")
CHAPTERS = range(1, CHAPTER_COUNT + 1)
EMBED_RUN = "code-class"
SLIDES = [(720, 405), (960, 540)]
EMBEDS = [f"?run={EMBED_RUN}&view={v}&embed=1" for v in (*VIEW_IDS, *VIEW_GROUPS)] + [
    f"?lesson={n}&embed=1" for n in CHAPTERS
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


@pytest.mark.parametrize("query", EMBEDS)
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
        page.evaluate(
            "([w, h]) => { const f = document.querySelector('iframe'); f.width = w; f.height = h; }", [width, height]
        )
        child.wait_for_function("([w, h]) => innerWidth === w && innerHeight === h", arg=[width, height])
        child.evaluate(
            "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 100))))"
        )
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
