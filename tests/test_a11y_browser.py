"""Usable by every student (WCAG 2.1 AA), checked in Chromium on the app without its model and on the HTML export:
axe-core finds no violation (rules tagged wcag2a, wcag2aa, wcag21a, wcag21aa) in any state a reader meets; the whole
lesson can be walked with the keyboard alone, with focus where the reader needs it after each action; the stage's
keys never take a key from a focused control; every view's text alternative states the trace's numbers; the live
region says what the step shown accepted. Per-state counts and axe's "needs review" rules go to out/a11y.json;
screenshots in forced-colours mode and in grayscale to out/screenshots/.

axe-core is the npm package pinned in package.json (`npm ci`, which `make` runs), read from node_modules.
"""

import json
import re
import time

import pytest
from conftest_app import CHAPTERS as CHAPTER_COUNT
from conftest_app import OUT, SHOTS, new_page, open_app, settled, state
from lesson_facts import OPTIONS, new_guesses, right, shown_step

from app import gallery, wait
from app.render.export import render_html
from app.render.views import VIEW_GROUPS
from lade_core.paths import ROOT

pytest.importorskip("playwright.sync_api")
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
CHAPTERS = range(1, CHAPTER_COUNT + 1)
LESSON = gallery.by_role("lookahead")
RESULTS: dict = {}

# The states a reader meets, in groups of one page each: the group's page opens at its address, then each state is
# reached by the stage's own action (Next to a chapter, a gallery run opened), as a reader reaches it (the axe
# results match those of each state's own address, state for state); an embed is a page of its own, each at its
# address: (the page's address or None, [(state, the stage's action or an address)]).
GROUPS = {
    "lesson": (
        "?lesson=1",
        [(f"lesson-{n}", f"s => s.chapter({n}, 'none')") for n in CHAPTERS]
        # "Link or embed" open, its embed chosen by measurement and said so
        + [("lesson-3-share", "s => s.chapter(3, 'none').then(() => s.set({ share: true }))")],
    ),
    "lesson-embed": (
        "?lesson=1&embed=1",
        [(f"lesson-embed-{n}", f"s => s.chapter({n}, 'none', {{ embed: {{ lesson: true }} }})") for n in CHAPTERS],
    ),
    "explorer": (
        f"?run={gallery.names()[0]}",
        [(f"explorer-{name}", f"s => s.open({json.dumps(name)}, null, {{}}, true)") for name in gallery.names()],
    ),
    "embed": (
        None,
        [(f"embed-{group}", f"?run=code-class&view={group}&embed=1") for group in VIEW_GROUPS]
        + [("embed-mask-view", "?run=code-class&view=mask-view&embed=1")],  # a slide's mask, zoomed in
    ),
}


def axe_source() -> str:
    if not AXE.exists():
        pytest.fail(f"{AXE.relative_to(ROOT)} is missing: install the pinned dev tools with `npm ci` (or `make`)")
    return AXE.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def server(page_server):
    yield page_server[0]
    (OUT / "a11y.json").write_text(json.dumps({"tags": TAGS, "states": RESULTS}, indent=1), encoding="utf-8")


def drawn(page) -> None:
    """Two animation frames and a beat: the stage has drawn and fitted what it shows."""
    page.evaluate(
        "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 150))))"
    )


def run_axe(page, name: str) -> list:
    if not page.evaluate("() => !!window.axe"):
        page.add_script_tag(content=axe_source())
    result = page.evaluate(
        """tags => axe.run(document, { runOnly: { type: 'tag', values: tags } }).then(r => ({
        violations: r.violations.map(v => ({ id: v.id, nodes: v.nodes.length,
            where: v.nodes.slice(0, 3).map(n => n.target.join(' ') + ': ' + (n.failureSummary || '').slice(0, 160)) })),
        incomplete: r.incomplete.map(v => ({ id: v.id, nodes: v.nodes.length })) }))""",
        TAGS,
    )
    RESULTS[name] = {
        "violations": sum(v["nodes"] for v in result["violations"]),
        "violated_rules": {v["id"]: v["nodes"] for v in result["violations"]},
        "needs_review": {v["id"]: v["nodes"] for v in result["incomplete"]},
    }
    return result["violations"]


@pytest.mark.parametrize("group", GROUPS)
def test_no_axe_violations(chromium, server, group):
    """Every chapter as a page and as an embed, the explorer on every gallery run at its opening step and every
    embed group: no WCAG 2.1 A or AA violation axe can find, in any of them."""
    query, states = GROUPS[group]
    page = new_page(chromium, 1280, 800)
    if query:
        open_app(page, server + query, "s.run()")
    found = {}
    for name, action in states:
        if action.startswith("?"):
            open_app(page, server + action, "s.run()")
        else:
            page.evaluate(f"() => ({action})(window.ladeStage)")
            page.wait_for_function("() => !!window.ladeStage.run()")
        drawn(page)
        found[name] = run_axe(page, name)
    assert not any(found.values()), {name: v for name, v in found.items() if v}
    assert not page.errors, page.errors
    page.close()


def test_no_axe_violations_in_the_lab(chromium, server):
    page = new_page(chromium, 1280, 800)
    open_app(page, server + "?run=code-class", "s.run()")
    page.click("#mode-lab")
    page.wait_for_function("() => window.ladeStage.state.mode === 'lab'")
    # the run's lab figures are asked of its address when the lab opens, once, and drawn when they come
    page.wait_for_function("() => document.querySelector('.lab-page .lab-controls')")
    asked = [r for r in page.server_requests if r.endswith("/lab.json")]
    assert len(asked) == 1 and "runs/code-class" in asked[0], page.server_requests
    page.screenshot(path=str(SHOTS / "lab.png"), full_page=True)
    drawn(page)
    violations = run_axe(page, "lab")
    assert violations == [], violations
    page.close()


def test_no_axe_violations_with_the_sidebar_open(chromium, server):
    """With the sidebar open (its Run and Auto buttons, its settings), axe found white on Gradio's indigo 500
    (4.46:1) on the primary buttons: none now. Run sits right under the prompt."""
    page = new_page(chromium, 1280, 800)
    open_app(page, server + "?run=code-class", "s.run()")
    page.click("#run-yourself")
    page.wait_for_function("() => document.querySelector('#sidebar.open, .sidebar.open')")
    drawn(page)
    page.screenshot(path=str(SHOTS / "sidebar-open.png"))
    assert run_axe(page, "sidebar-open") == []
    # the selected choices and the Run button axe flagged after a race: not white on indigo 500 any more
    indigo = page.evaluate(
        "() => [...document.querySelectorAll('#sidebar *')].filter(e => getComputedStyle(e).backgroundColor"
        " === 'rgb(99, 102, 241)').map(e => e.tagName + ' ' + (e.innerText || '').slice(0, 30))"
    )
    assert indigo == [], indigo
    # Run sits with the prompt (it was 1,457 px down the sidebar, under twelve settings), with what a race costs
    prompt, run = page.locator("#prompt").bounding_box(), page.locator("#run").bounding_box()
    assert 0 < run["y"] - (prompt["y"] + prompt["height"]) < 120, (prompt, run)
    assert "take turns" in page.inner_text("#run-wait")
    # one type for the parameter names in the sidebar and the formulas on the stage (Gradio's Montserrat drew W and N
    # where a reader saw "Ш" and "Π")
    fonts = page.evaluate(
        "() => ['#sidebar label', '.lade-stage'].map(q => getComputedStyle(document.querySelector(q)).fontFamily)"
    )
    assert fonts[0] == fonts[1] and "Montserrat" not in fonts[0], fonts
    # the wait is asked again while the sidebar is open (the queue moves while a visitor reads), and says so
    assert f"Asked again every {wait.REFRESH_S} s" in page.inner_text("#run-wait")
    settled(page)
    asked, since = len(page.server_requests), time.monotonic()
    # meanwhile, the sidebar in the dark theme: Gradio's own dark colours, checked the same way
    page.evaluate("() => window.ladeStage.set({ theme: { scheme: 'dark', contrast: false } })")
    drawn(page)
    page.screenshot(path=str(SHOTS / "sidebar-open-dark.png"))
    assert run_axe(page, "sidebar-open-dark") == []
    # the sidebar's file links, which axe passed over, read at 4.5:1 on Gradio's dark blocks (indigo 500 was 3.97:1)
    assert contrast(page, "#download-trace") >= 4.5
    page.wait_for_timeout(max(0, 1000 * (wait.REFRESH_S + 1.5 - (time.monotonic() - since))))
    assert len(page.server_requests) > asked, page.server_requests[asked:]
    page.close()


def test_a_setting_typed_out_of_range_is_said_and_set_to_one_it_takes(chromium, server):
    """W=99 typed into the slider's box had the server refuse each keystroke's event (422) and the arithmetic beside
    it read a bare "Error"; Run then used 32 without a word. Now the box's note says what the field takes while it
    holds 99, leaving the box sets it to 32 and says so, and the server is asked only with values it takes."""
    page = new_page(chromium, 1280, 800)
    refused = []
    page.on("response", lambda r: refused.append((r.status, r.url)) if r.status >= 400 else None)
    open_app(page, server + "?run=code-class", "s.run()")
    page.click("#run-yourself")
    page.wait_for_function("() => document.querySelector('#sidebar.open, .sidebar.open')")
    settled(page)
    width = page.locator("#window-w input[type=number]")
    width.fill("99")
    page.wait_for_function(
        "() => /takes a whole number from 1 to 32\\.$/.test(document.querySelector('#window-w"
        " .lade-field-note').textContent)"
    )
    width.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('#window-w .lade-field-note').textContent.endsWith('99 was set to 32.')"
    )
    assert width.input_value() == "32"
    page.wait_for_function("() => document.querySelector('#tokens-per-forward').innerText.includes('(32+')")
    # below the least, left with Tab; a whole-number field given a fraction
    ngram = page.locator("#ngram-n input[type=number]")
    ngram.fill("1")
    ngram.press("Tab")
    page.wait_for_function(
        "() => document.querySelector('#ngram-n .lade-field-note').textContent.endsWith('1 was set to 2.')"
    )
    guess = page.locator("#guess-g input[type=number]")
    guess.fill("3.5")
    guess.press("Enter")
    page.wait_for_function("() => document.querySelector('#guess-g').querySelector('input[type=number]').value === '4'")
    settled(page)
    text = page.inner_text("#tokens-per-forward")
    assert "Error" not in text and "(32+4)" in text and "(2-1)" in text, text
    assert refused == [] and page.errors == [], (refused, page.errors)
    page.screenshot(path=str(SHOTS / "sidebar-field-note.png"))
    assert run_axe(page, "sidebar-field-note") == []
    # a value in range clears the note
    width.fill("7")
    page.wait_for_function("() => document.querySelector('#window-w .lade-field-note').textContent === ''")
    page.close()


CONTRAST = """q => {
    const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 4).map(Number);
    const el = document.querySelector(q);
    let back = el;
    while (back && rgb(getComputedStyle(back).backgroundColor)[3] === 0) back = back.parentElement;
    return [rgb(getComputedStyle(el).color), rgb(getComputedStyle(back || document.body).backgroundColor)];
}"""


def contrast(page, selector: str) -> float:
    """WCAG's contrast ratio of an element's text on the first opaque background behind it."""

    def luminance(rgb):
        c = [v / 255 for v in rgb[:3]]
        c = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]

    fore, back = (luminance(c) for c in page.evaluate(CONTRAST, selector))
    return (max(fore, back) + 0.05) / (min(fore, back) + 0.05)


LOOK = """() => [document.documentElement.dataset.ladeScheme, document.documentElement.dataset.ladeContrast,
    document.body.classList.contains('dark'),
    getComputedStyle(document.querySelector('.lade-stage')).backgroundColor]"""


def test_dark_and_high_contrast_cover_the_frame_and_the_stage(chromium, server):
    """With the system in dark mode Gradio's frame turned black around the white stage. Now the frame (Gradio's own
    dark theme) and the stage (lade.css's light-dark palette) go dark together; the theme menu picks light or dark,
    normal or high contrast, into the address (Gradio's `__theme`, `contrast=1`), which a reload keeps; the window,
    the mask and the charts draw in the theme's colours, and axe finds nothing in any of these states. Printing is
    light whatever the screen shows."""
    page = new_page(chromium, 1280, 800, color_scheme="dark")
    open_app(page, server + "?lesson=3", "s.run()")
    drawn(page)
    assert page.evaluate(LOOK) == ["dark", "normal", True, "rgb(11, 17, 32)"]
    assert page.evaluate("() => getComputedStyle(document.body).backgroundColor") != "rgb(255, 255, 255)"
    page.screenshot(path=str(SHOTS / "app-dark-lesson-3.png"))
    assert run_axe(page, "dark-lesson-3") == []
    # a theme chosen on one chapter stays on Back to a chapter visited before it (the address named no theme then)
    page.click("#lesson-next")
    page.wait_for_function("() => window.ladeStage.state.chapter === 4")
    page.select_option("#theme", "light-more")
    page.go_back()
    page.wait_for_function("() => window.ladeStage.state.chapter === 3")
    assert page.evaluate(LOOK)[:2] == ["light", "more"] and "__theme=light&contrast=1" in page.url, page.url
    for choice, look in [
        ("dark-more", ["dark", "more", True, "rgb(0, 0, 0)"]),
        ("light-more", ["light", "more", False, "rgb(255, 255, 255)"]),
        ("light", ["light", "normal", False, "rgb(255, 255, 255)"]),
    ]:
        page.select_option("#theme", choice)
        drawn(page)
        assert page.evaluate(LOOK) == look, choice
        page.screenshot(path=str(SHOTS / f"app-theme-{choice}-lesson-3.png"))
        assert run_axe(page, f"theme-{choice}-lesson-3") == []
    assert "__theme=light" in page.url and "contrast" not in page.url, page.url
    page.select_option("#theme", "dark-more")
    drawn(page)
    assert "__theme=dark" in page.url and "contrast=1" in page.url, page.url
    page.reload()
    page.wait_for_function("() => window.ladeStage && window.ladeStage.run()")
    drawn(page)
    assert page.evaluate(LOOK)[:3] == ["dark", "more", True]
    assert page.input_value("#theme") == "dark-more"
    # the explorer and the lab in the dark too
    page.evaluate("() => window.ladeStage.set({ theme: { scheme: 'dark', contrast: false } })")
    for mode in ("explorer", "lab"):
        page.click(f"#mode-{mode}")
        drawn(page)
        # a chart's mark, drawn by the JS, takes the palette's dark value (lade.css), not a fixed colour
        stroke = "() => getComputedStyle(document.querySelector('svg.chart path[stroke^=var]')).stroke"
        assert page.evaluate(stroke) in ("rgb(122, 167, 255)", "rgb(163, 179, 199)"), mode
        if mode == "explorer":  # the candidates' key: white on its amber hatch in both themes (it went near-black)
            assert page.evaluate("() => getComputedStyle(document.querySelector('.key.m-ver')).color") == (
                "rgb(255, 255, 255)"
            )
        page.screenshot(path=str(SHOTS / f"app-dark-{mode}.png"))
        assert run_axe(page, f"dark-{mode}") == []
    page.emulate_media(media="print")
    assert page.evaluate("() => getComputedStyle(document.querySelector('.lade-stage')).backgroundColor") == (
        "rgb(255, 255, 255)"
    )
    page.close()


def test_a_mistyped_address_gets_a_page(chromium, server):
    """A mistyped path answered raw JSON ({"detail": "Not Found"}) with no title or language. A browser now gets a
    404 page with a title, a language, a heading and a way back, and no axe violation; a program asking for JSON
    still gets JSON."""
    import urllib.error
    import urllib.request

    page = new_page(chromium, 1280, 800)
    response = page.goto(server + "no-such-chapter?x=<b>bold</b>")
    assert response.status == 404
    assert page.title().startswith("Not found") and page.get_attribute("html", "lang") == "en"
    assert page.inner_text("h1") and page.locator("a[href]").count() >= 1
    assert "/no-such-chapter" in page.inner_text("main") and page.locator("main b").count() == 0
    assert run_axe(page, "not-found") == []
    page.click("main a")
    page.wait_for_function("() => window.ladeStage && window.ladeStage.run()")
    page.close()
    try:
        urllib.request.urlopen(urllib.request.Request(server + "no-such-chapter", headers={"Accept": "*/*"}))
    except urllib.error.HTTPError as err:
        assert err.code == 404 and json.loads(err.read()) == {"detail": "Not Found"}
    else:
        raise AssertionError("a missing path answered 200")


def test_no_axe_violations_in_the_html_export(chromium, tmp_path):
    path = tmp_path / "replay.html"
    path.write_text(render_html(gallery.load(LESSON), LESSON), encoding="utf-8")
    page = new_page(chromium, 1280, 800)
    page.goto(path.as_uri())
    page.wait_for_selector("#counter table")
    drawn(page)
    violations = run_axe(page, "export")
    assert violations == [], violations
    page.close()


# -- the keyboard ----------------------------------------------------------------------------------------------
FOCUSED = """() => { const e = document.activeElement; if (!e || e === document.body) return null;
    return { id: e.id, tag: e.tagName, option: e.dataset ? e.dataset.option : undefined,
             first: e.matches('#lesson-predict .options > button.option:first-child'),
             inSidebar: !!e.closest('#sidebar .sidebar-content'), text: (e.textContent || '').trim().slice(0, 30) };
             }"""


def focused(page) -> dict | None:
    return page.evaluate(FOCUSED)


def tab_to(page, test, key="Tab", most=40) -> int:
    """Press `key` until the focused element passes `test`; how many presses it took (fails after `most`)."""
    for n in range(1, most + 1):
        page.keyboard.press(key)
        now = focused(page)
        if now and test(now):
            return n
    pytest.fail(f"{key} never reached the element in {most} presses (last: {focused(page)})")


def is_id(name):
    return lambda el: el["id"] == name


def first_option(el) -> bool:
    """The question's first option as shown (a scale may run down: its first is not always option 0)."""
    return el["tag"] == "BUTTON" and el["first"]


def chapter_shown(page) -> int:
    return int(page.get_attribute("#lesson-text", "data-chapter"))


def test_the_whole_lesson_with_the_keyboard_alone(chromium, server):
    """From page load Tab reaches Next, Back and the first answer within 12 presses; after Next or Back focus is
    on the new chapter's heading; every question is answered from the keyboard (Enter or Space) and focus lands on
    the answer; Shift+Tab walks back to Next. No mouse."""
    page = new_page(chromium, 1280, 800)
    open_app(page, server, "document.querySelector('#lesson-text .fact')")
    reached = {}
    for n in range(1, 13):  # skip link, the mode tabs, Copy link, Present, the chapters, Back, Next, the words
        page.keyboard.press("Tab")
        el = focused(page)
        for name, test in (("next", is_id("lesson-next")), ("back", is_id("lesson-prev")), ("answer", first_option)):
            if el and name not in reached and test(el):
                reached[name] = n
    assert set(reached) == {"next", "back", "answer"}, reached
    for chapter in CHAPTERS:
        assert chapter_shown(page) == chapter
        if page.inner_text("#lesson-title") in OPTIONS:
            tab_to(page, first_option, most=30)  # round the page: its Copy link and "Link or embed" too
            page.keyboard.press("Enter" if chapter % 2 else " ")
            page.wait_for_selector("#lesson-answer")
            assert focused(page)["id"] == "lesson-answer", (chapter, focused(page))
            assert "The trace says" in page.inner_text("#lesson-answer")
            assert page.locator("#lesson-predict button.option").first.inner_text()[:1] in "✓✗"  # not colour alone
        if chapter == CHAPTERS[-1]:
            break
        tab_to(page, is_id("lesson-next"), key="Shift+Tab", most=20)
        page.keyboard.press("Enter")
        page.wait_for_function("n => document.querySelector('#lesson-text').dataset.chapter == n", arg=chapter + 1)
        assert focused(page)["id"] == "lesson-title", (chapter + 1, focused(page))
    assert page.get_attribute("#lesson-next", "aria-disabled") == "true"
    tab_to(page, is_id("lesson-prev"), key="Shift+Tab", most=20)
    page.keyboard.press("Enter")
    page.wait_for_function("n => document.querySelector('#lesson-text').dataset.chapter == n", arg=CHAPTER_COUNT - 1)
    assert focused(page)["id"] == "lesson-title"
    assert page.errors == []
    page.close()


def test_keys_belong_to_the_focused_control(chromium, server):
    """Arrows on a focused slider move that slider only (the step slider by one step, a sidebar slider without
    moving the step); Space on a focused button presses it once and does not start Play; with focus on no control
    the arrows step the page."""
    page = new_page(chromium, 1280, 800)
    open_app(page, server + "?run=code-class&step=10", "s.state.k === 10")
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press("ArrowRight")
    assert state(page, "k") == 11
    page.focus("#step-slider")
    page.keyboard.press("ArrowRight")
    assert state(page, "k") == 12 and page.input_value("#step-slider") == "12"
    page.keyboard.press("ArrowLeft")
    assert state(page, "k") == 11
    page.focus("#step-next")
    page.keyboard.press(" ")
    drawn(page)
    assert state(page, "k") == 12 and state(page, "playing") is False
    page.keyboard.press("Enter")
    assert state(page, "k") == 13 and state(page, "playing") is False
    # the sidebar: opened from the keyboard, focus goes inside; its W slider takes the arrows
    page.focus("#run-yourself")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.activeElement && document.activeElement.closest('#sidebar .sidebar-content')"
    )
    slider = page.locator("#window-w input[type=range]")
    before, k = slider.input_value(), state(page, "k")
    tab_to(
        page,
        lambda el: el["inSidebar"]
        and el["tag"] == "INPUT"
        and page.evaluate(
            "() => document.activeElement.type === 'range' && !!document.activeElement.closest('#window-w')"
        ),
        most=30,
    )
    page.keyboard.press("ArrowRight")
    assert int(slider.input_value()) == int(before) + 1 and state(page, "k") == k
    page.close()


def test_tab_lists_take_the_arrows(chromium, server):
    """The chapters and the modes are tab lists: one Tab stop each (the selected tab), arrows move the selection
    and focus with it; the arrows on a tab never step the run."""
    page = new_page(chromium, 1280, 800)
    open_app(page, server + "?lesson=2", "document.querySelector('#lesson-text')")
    assert page.locator(".chapters [role=tab][tabindex='0']").count() == 1
    page.focus("#chapter-tab-2")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => document.querySelector('#lesson-text').dataset.chapter == '3'")
    assert focused(page)["id"] == "chapter-tab-3" and page.get_attribute("#chapter-tab-3", "aria-selected") == "true"
    page.keyboard.press("Home")
    page.wait_for_function("() => document.querySelector('#lesson-text').dataset.chapter == '1'")
    assert focused(page)["id"] == "chapter-tab-1"
    assert state(page, "k") == int(page.get_attribute("#lesson-text", "data-start"))  # its opening step, not moved
    page.focus("#mode-lesson")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => window.ladeStage.state.mode === 'explorer'")
    assert focused(page)["id"] == "mode-explorer"
    assert page.locator(".modes [role=tab][tabindex='0']").count() == 1
    page.close()


def test_the_closed_sidebar_is_out_of_the_tab_order(chromium, server):
    """Gradio's closed sidebar keeps its controls in the page; they must not take focus while it is closed."""
    page = new_page(chromium, 1280, 800)
    open_app(page, server + "?run=code-class", "s.run()")
    page.wait_for_selector("#sidebar .sidebar-content[inert]", state="attached")
    inside = []
    for _ in range(60):
        page.keyboard.press("Tab")
        el = focused(page)
        if el and el["inSidebar"]:
            inside.append(el)
    assert inside == []
    page.close()


# -- what screen readers read ------------------------------------------------------------------------------------
NAMES = """() => {
  const caption = (view) => (document.querySelector(`#${view} table caption`) || {}).textContent || '';
  const label = (view) => { const svg = document.querySelector(`#${view} svg[role=img]`);
    return svg ? svg.getAttribute('aria-label') || '' : ''; };
  return {
    window: caption('window-view'), verify: caption('verify-view'), mask: label('mask-view'),
    progress: label('progress-plot'), pool: label('pool-plot'), trajectory: caption('trajectory-view'),
    counter: caption('counter'),
    charts: [...document.querySelectorAll('.lade-stage svg[role=img]')].map(s => s.getAttribute('aria-label') || ''),
    tables: [...document.querySelectorAll('.lade-stage .view table')].map(t => !!t.querySelector('caption')),
  };
}"""


def numbers(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", text)]


def test_every_views_text_alternative_states_the_trace(chromium, server):
    """The window's, the verification's and the mask's text alternatives and the charts' labels state the trace's
    numbers at the step shown; every table has a caption and every chart a label."""
    run = gallery.load(LESSON)
    page = new_page(chromium, 1280, 800)
    open_app(page, server + "?run=code-class&step=1", "s.state.k === 1")
    last = max(len(run.parallel.steps), len(run.baseline.steps)) - 1
    for k in (1, 5, 28, 60):
        page.evaluate("k => window.ladeStage.go(k)", k)
        page.wait_for_function("k => window.ladeStage.root.dataset.step == k", arg=k)
        got, step = page.evaluate(NAMES), shown_step(run, "parallel", k)
        assert all(got["tables"]) and all(got["charts"]), got
        L, W, new_right = len(step.levels_before), step.window, sum(right(run, new_guesses(step)))
        assert got["window"].startswith(f"Step {step.index}: the window holds {L} level"), got["window"]
        assert f"of {W} guesses" in got["window"], got["window"]
        verb = "is" if new_right == 1 else "are"
        assert f"; {new_right} of the {W} new guesses {verb} right." in got["window"], got["window"]
        outcome = (
            f"Candidate {step.winner + 1} matched {step.match_lengths[step.winner]} token"
            if step.winner >= 0
            else "No candidate matched"
        )
        if step.candidates:
            said = got["verify"]
            assert said.startswith(f"Step {step.index} checked {len(step.candidates)} candidate"), said
            assert outcome in said and f"the step emitted {len(step.accepted)} token" in said, said
        else:
            assert "No candidates" in page.inner_text("#verify-view")
        layout = step.layout
        q = layout.size
        assert got["mask"].startswith(f"The {q} × {q} attention mask: x, {layout.levels} window level"), got["mask"]
        assert f"of {layout.window} tokens and {layout.nodes} verification token" in got["mask"], got["mask"]
        lanes = [
            f"lookahead {len(run.parallel.tokens)} tokens in {len(run.parallel.steps)} steps",
            f"greedy {len(run.baseline.tokens)} tokens in {len(run.baseline.steps)} steps",
        ]
        assert all(lane in got["progress"] for lane in lanes), got["progress"]
        assert numbers(got["pool"]) == [run.parallel.steps[-1].pool_size], got["pool"]
        first = max(1, k - 9)
        assert numbers(got["trajectory"])[:2] == [first, k], got["trajectory"]
        # the trajectories to a screen reader: one sentence per step (the grid of mostly empty cells is hidden)
        said = page.locator("#trajectory-view ul.sr-only li").all_text_contents()
        want = [s for s in run.parallel.steps[first : k + 1] if s.new_level]
        assert [t.split(" guessed")[0] for t in said] == [f"Step {s.index}" for s in want], said
        assert page.get_attribute("#trajectory-view table.traj", "aria-hidden") == "true"
    assert last > 60
    page.close()


def test_the_live_region_says_what_the_step_accepted(chromium, server):
    """One polite live region: after a step it says the step shown, what the lookahead step accepted and the
    tokens written so far; after Play stops, one summary that begins "Paused at"."""
    run = gallery.load(LESSON)
    page = new_page(chromium, 1280, 800)
    open_app(page, server + "?run=code-class&step=20", "s.state.k === 20")
    assert page.get_attribute("#lade-live", "aria-live") == "polite" and page.locator("[aria-live]").count() >= 1
    labels = page.eval_on_selector_all(".tk[role=img]", "els => els.map(e => e.getAttribute('aria-label'))")
    assert labels and not [t for t in labels if re.search("[␣↵⇥∅]", t)], labels  # "newline 4 spaces", not "open box"
    assert any(re.search(r"\b(space|newline)\b", t) for t in labels), labels
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => /^Step 21 of/.test(document.querySelector('#lade-live').textContent)")
    said, step = page.inner_text("#lade-live"), run.parallel.steps[21]
    last = max(len(run.parallel.steps), len(run.baseline.steps)) - 1
    tokens = sum(len(s.accepted) for s in run.parallel.steps[:22])
    assert said.startswith(f"Step 21 of {last}. Lookahead step 21 accepted {len(step.accepted)} token"), said
    assert said.endswith(f"{tokens} tokens written so far."), said
    page.evaluate("() => { const s = window.ladeStage; s.set({ speed: 30 }); s.go(s.run().lastStep() - 3); s.play(); }")
    page.wait_for_function("() => /^Paused at/.test(document.querySelector('#lade-live').textContent)", timeout=30_000)
    assert page.inner_text("#lade-live").startswith(f"Paused at {last} of {last}.")
    # chapter 1 shows greedy alone, and its live region speaks of greedy ("Lookahead step 12 accepted 1 token" there
    # named a lane the chapter does not show); a token of whitespace is said in words, not as symbol names
    page.evaluate("() => window.ladeStage.chapter(1, 'none')")
    page.wait_for_function("() => document.querySelector('#lesson-text').dataset.chapter == '1'")
    page.evaluate("() => window.ladeStage.go(window.ladeStage.state.k + 1)")
    page.wait_for_function("() => /Greedy step/.test(document.querySelector('#lade-live').textContent)")
    said = page.inner_text("#lade-live")
    assert "Lookahead" not in said and "↵" not in said and "␣" not in said, said
    page.close()


def test_screenshots_in_forced_colours_and_grayscale(chromium, server):
    """Pictures for a person to look at: a chapter and the explorer in Windows' forced-colours mode and in
    grayscale (meaning must survive without colour: every answer, verdict and cell keeps a glyph or words)."""
    for mode in ("forced", "gray"):
        page = new_page(chromium, 1280, 800)
        if mode == "forced":
            page.emulate_media(forced_colors="active")
        for label, query in (("lesson-3", "?lesson=3"), ("explorer", "?run=code-class&step=28")):
            open_app(page, server + query, "s.run()")
            if mode == "gray":
                page.add_style_tag(content="html { filter: grayscale(1) !important; }")
            if label.startswith("lesson"):
                page.locator("#lesson-predict button.option").last.click()
                page.wait_for_selector("#lesson-answer")
                texts = page.locator("#lesson-predict button.option").all_inner_texts()
                assert any(t.startswith("✓") for t in texts), texts
            else:
                assert page.locator("#window-view td.cell.right .icon").count() >= 1
                assert page.locator("#verify-view td.ver .icon").count() >= 1
            drawn(page)
            page.screenshot(path=str(SHOTS / f"a11y-{mode}-{label}.png"), full_page=label == "explorer")
        page.close()


def test_skip_link_slider_text_shortcuts_motion_and_reflow(chromium, server):
    """The first Tab lands on a visible skip link whose Enter puts focus on the content; the step slider says
    "step k of last" as it moves; the shortcut list is on screen; under prefers-reduced-motion nothing in the stage
    animates or scrolls smoothly while Play still steps; at 320 CSS px the page has no sideways scroll."""
    page = new_page(chromium, 1280, 800)
    open_app(page, server + "?run=code-class&step=3", "s.state.mode === 'explorer' && s.state.k === 3")
    is_skip = lambda el: page.evaluate("() => document.activeElement.classList.contains('skip')")  # noqa: E731
    assert tab_to(page, is_skip, most=2) <= 2, "the skip link is the first Tab after Gradio's sidebar button"
    assert page.locator(".lade-stage a.skip").is_visible(), "the skip link shows when it has focus"
    page.keyboard.press("Enter")
    assert focused(page)["id"] == "lade-main"
    last = page.evaluate("() => window.ladeStage.run().lastStep()")
    assert page.get_attribute("#step-slider", "aria-valuetext") == f"step 3 of {last}"
    page.locator("#step-slider").focus()
    page.keyboard.press("ArrowRight")
    assert page.get_attribute("#step-slider", "aria-valuetext") == f"step 4 of {last}"
    hint = page.locator(".lade-stage .keys")
    assert hint.is_visible() and all(k in hint.inner_text() for k in ("←", "→", "Home", "End", "Space"))
    page.emulate_media(reduced_motion="reduce")
    moving = page.evaluate("""() => [...document.querySelectorAll('.lade-stage *')].filter(e => {
        const s = getComputedStyle(e);
        return s.transitionDuration.split(',').some(d => parseFloat(d) > 0) || s.animationName !== 'none'
            || s.scrollBehavior === 'smooth'; }).map(e => e.className || e.tagName).slice(0, 5)""")
    assert moving == []
    page.evaluate("() => window.ladeStage.go(0)")
    page.click("#play")
    page.wait_for_function("() => window.ladeStage.state.k >= 3")
    page.click("#play")
    page.set_viewport_size({"width": 320, "height": 700})
    page.wait_for_timeout(300)
    for query in ("?run=code-class&step=3", "?lesson=3"):
        open_app(page, server + query, "s.run()")
        page.wait_for_timeout(300)
        assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 1, query
    page.screenshot(path=str(SHOTS / "reflow-320.png"), full_page=True)
    assert page.errors == []
    page.close()
