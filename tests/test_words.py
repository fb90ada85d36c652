"""Sentences the page drew that contradicted the view beside them, or the code (issue 49), each read off the page's
own scripts run under node over a small stand-in for the DOM (tests/js/words.cjs): no browser, no model. Each test
names the sentence it once printed; the gallery's runs and the lab's page data are the inputs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from functools import cache, lru_cache

from app import gallery
from app.render.assets import SCRIPTS
from app.render.boot import boot_data, lab_data
from app.render.payload import payload
from lade_core.config import METHOD_NAMES
from lade_core.paths import ROOT

RUNNER = ROOT / "tests" / "js" / "words.cjs"
# the renderer's scripts up to the lesson (the page's order); the stage and the page around it need a real browser
LOADED = [
    s
    for s in SCRIPTS
    if s
    not in {
        "lade-race-keep.js",
        "lade-race-words.js",
        "lade-browser-race.js",
        "lade-slide.js",
        "lade-layout.js",
        "lade-pictures.js",
        "lade-stage.js",
        "lade-handoff.js",
    }
]


@lru_cache(maxsize=1)
def boot() -> dict:
    return boot_data("inline", lab=lab_data())


@cache
def run_payload(name: str) -> dict:
    return payload(gallery.load(name))


def drawn(jobs: list[tuple[str | None, str]], field: str = "text") -> list[str]:
    """The text each (run name, expression) draws (`field` "prose": less the commands shown as code); `expr` sees
    Lade, run, boot and text(node)."""
    node = shutil.which("node")
    assert node, "node is needed (make install brings the npm dev tools)"
    doc = {"boot": boot(), "jobs": [{"payload": run_payload(n) if n else None, "expr": e} for n, e in jobs]}
    env = {**os.environ, "LADE_SCRIPTS": ",".join(LOADED)}
    done = subprocess.run(
        [node, str(RUNNER)], input=json.dumps(doc), capture_output=True, text=True, timeout=600, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    errors = [(job, o["error"][:600]) for job, o in zip(jobs, out, strict=True) if "error" in o]
    assert not errors, errors
    return [o[field] for o in out]


def test_the_jacobi_chapter_calls_the_models_outputs_new_guesses_not_better_ones():
    """Chapter 2 said "The model's output after each guess token is a better guess" beside a step whose new guesses
    were 0 of 7 right (from 1). The Jacobi update makes them the next step's guesses, which that step checks; the
    chapter now says that, on every step of the Jacobi run."""
    name = gallery.by_role("jacobi")
    run = gallery.load(name)
    chapter = "Lade.lesson.CHAPTERS.find(c => c.role === 'jacobi')"
    ctx = "{run, state: {}, actions: {}, lab: boot.lab, boot, links: {explorer: () => ''}}"
    texts = drawn([(name, f"{chapter}.text(run, {k}, {ctx})") for k in range(1, len(run.parallel.steps), 5)])
    for text in texts:
        assert "better guess" not in text, text[:400]
        assert "become the next step's guesses: new guesses, which that step checks" in text, text[:400]


def test_what_am_i_looking_at_names_the_runs_own_lanes():
    """The Jacobi run's note said "Both methods" and "lookahead decoding writes 1 to N per step" with no lookahead
    lane; the four-lane race's said "Both methods" while its prompt-lookup and early-exit texts were nowhere on
    screen. The note is now chosen by the run's lanes, named from the one table of method names."""
    names = gallery.names()
    texts = drawn([(n, "Lade.notes.outputsNote(run)") for n in names])
    for name, text in zip(names, texts, strict=True):
        run = gallery.load(name)
        kinds = {lane.method for lane in run.lanes}
        assert "Both methods" not in text, (name, text)
        assert ("lookahead decoding writes 1 to n" in text.lower()) is (run.method == "lookahead"), (name, text)
        if run.method == "jacobi":
            assert "Jacobi decoding writes one token per step plus the guesses" in text, text
        for kind in kinds:
            assert METHOD_NAMES[kind] in text, (name, kind, text)
        assert ("their texts are not drawn here" in text) is bool(run.lanes), (name, text)
        assert ("This run samples" in text) is (run.sampling.temperature > 0), (name, text)


def test_the_methods_table_names_its_baseline_by_the_runs_sampling():
    """The sampling run's table said "vs greedy": its baseline lane samples. The column names the baseline lane
    by the run's own setting."""
    sampled = [n for n in gallery.names() if gallery.load(n).sampling.temperature > 0]
    greedy = [n for n in gallery.names() if gallery.load(n).sampling.temperature == 0][:1]
    assert sampled and greedy
    view = "Lade.views.render['relatives-view']({run, k: run.lastStep(), compact: false})"
    for name, text in zip(sampled + greedy, drawn([(n, view) for n in sampled + greedy]), strict=True):
        want = "vs sampling" if name in sampled else "vs greedy"
        assert want in text and ("vs greedy" in text) is (name not in sampled), (name, text[:300])


def test_the_metric_notes_say_what_they_count():
    """The notes did not say that tokens per step counts the prefill (lade_core.metrics: `run.compression`, new
    tokens over all steps), or that lookahead's per-position acceptance counts the best of its candidates."""
    glossary = drawn([(None, "Lade.notes.GLOSSARY.compression")])[0]
    assert "prefill counted as a step" in glossary
    name = gallery.by_role("lookahead")
    text = drawn([(name, "Lade.views.render['relatives-view']({run, k: run.lastStep(), compact: false})")])[0]
    assert "each step counting the best of its up to G candidates" in text, text


def test_the_zoomed_mask_names_candidate_one_only_on_a_step_with_a_candidate():
    """The zoomed mask said "candidate 1" on steps that verified no candidate."""
    name = "code-class-W7N4G7"
    run = gallery.load(name)
    ks = list(range(1, len(run.parallel.steps)))
    view = "Lade.views.render['mask-view']({{run, k: {k}, compact: true}})"
    texts = drawn([(name, view.format(k=k)) for k in ks])
    seen = set()
    for k, text in zip(ks, texts, strict=True):
        has = bool(run.parallel.steps[k].candidates)
        if "Zoomed in" in text:
            seen.add(has)
            assert ("candidate 1" in text) is has, (k, text[:300])
    assert seen == {True, False}, seen
