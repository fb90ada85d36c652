"""Every number the speed lab states, on every gallery run, agrees with Python's own reading of the run and the
register (tests/lab_facts.py: the definitions in roofline.py, stepcost.py and lab.py's docstrings, re-derived there,
not the code that makes the page's data): the page's facts (`.lab-text .fact`, each `data-fact` name with its text)
are exactly the reading's, none missing and none extra, a name repeated only with the same text, and no number in
the lab's prose stands outside a fact, a definition or a citation of its register.

Each run is opened once as a single-file page (no server, no model) and the lab shown at a handful of selections: a
GPU at batch 1, a larger batch, several simulated devices, the CPU's measured curve (alone and batched), and a model
that does not fit one device. The HTML export carries no lab data by default; here `render_html` is given the
lab's page data the Gradio page and the static site carry (`boot.lab_data()`).
"""

import pytest
from lab_facts import disagreements, lab_facts
from lesson_facts import assert_every_number_read
from test_renderer_browser import open_export

from app import gallery
from app.render.boot import lab_data
from app.render.export import render_html

NAMES = gallery.names()
SELECTIONS = [
    {"device": "h100", "size": "7B", "batch": 1, "devices": 1},
    {"device": "a100-80gb", "size": "7B", "batch": 16, "devices": 1},
    {"device": "h100", "size": "7B", "batch": 1, "devices": 4},
    {"device": "h200", "size": "135M", "batch": 64, "devices": 1},
    {"device": "cpu", "size": "135M", "batch": 1, "devices": 1},
    {"device": "cpu", "size": "135M", "batch": 4, "devices": 1},
    {"device": "h100", "size": "70B", "batch": 1, "devices": 1},
]
FACTS = """() => [...document.querySelectorAll('.lab-text .fact')].map(e => [e.dataset.fact, e.textContent])"""
CHOSEN = """() => ['#lab-device', '#lab-size', '#lab-batch', '#lab-devices']
  .map(s => document.querySelector(s).value)"""


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lab-exports")
    lab, paths = lab_data(), {}
    for name in NAMES:
        paths[name] = folder / f"{name}.html"
        paths[name].write_text(render_html(gallery.load(name), name, lab=lab), encoding="utf-8")
    return paths


def shown_facts(page) -> dict:
    """{name: text} of the lab's facts; a name shown twice must say the same both times."""
    shown: dict = {}
    for name, text in page.evaluate(FACTS):
        assert shown.setdefault(name, text) == text, (name, shown[name], text)
    return shown


@pytest.mark.browser
@pytest.mark.parametrize("name", NAMES)
def test_every_lab_fact_is_the_definitions(chromium, exports, name):
    run = gallery.load(name)
    page = open_export(chromium, exports[name])
    page.evaluate("window.ladeStage.mode('lab')")
    page.wait_for_selector("#lab-prediction")
    page_lab = page.evaluate("() => window.ladeStage.boot.lab")
    found = []
    for sel in SELECTIONS:
        page.evaluate("s => window.ladeStage.actions.lab(s)", sel)
        page.wait_for_function(
            "s => document.querySelector('#lab-device').value === s.device"
            " && document.querySelector('#lab-size').value === s.size",
            arg=sel,
        )
        chosen = page.evaluate(CHOSEN)
        want = lab_facts(run, sel, page_lab)
        shown = shown_facts(page)
        assert_every_number_read(page, ".lab-text")  # no number outside a fact, a definition or a citation
        # the page shows the selection the reading assumed (a batch it does not offer falls back to 1)
        assert chosen[2] == str(want.get("batch", 1)) and chosen[3] == str(want.get("devices", 1)), (sel, chosen)
        found += [(sel, *d) for d in disagreements(shown, want)]
    errors = page.errors
    page.close()
    assert errors == []
    assert found == [], "\n".join(f"{s}: {fact}: shown {a!r}, reading {b!r}" for s, fact, a, b in found)
