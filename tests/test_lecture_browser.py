"""In front of a class, second pass (issue 51), measured in Chromium on the app without its model and on the static
site: Back after a copied link stays in the lesson and the address is the state after every action; the arrows step
everywhere but in a row of tabs; the last chapter's Next looks disabled. Screenshots go to out/screenshots/.
"""

import pytest
from conftest_app import new_page, open_app

pytest.importorskip("playwright.sync_api")

# the address the page would write for its state, and the one it shows, read in one go (no wait between them)
ADDRESS = """() => [location.href, Lade.page.links.url(Lade.page.links.write(window.ladeStage.state), true)]"""


@pytest.fixture(scope="module")
def server(page_server):
    yield page_server[0]


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
