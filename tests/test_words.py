"""Sentences the page drew that contradicted the view beside them, or the code (issue 49), each read off the page's
own scripts run under node over a small stand-in for the DOM (tests/js/words.cjs): no browser, no model. Each test
names the sentence it once printed; the gallery's runs and the lab's page data are the inputs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from functools import cache, lru_cache

import pytest

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
SELECTIONS = [
    {"device": "cpu", "size": "135M", "batch": 1, "devices": 1},
    {"device": "cpu", "size": "135M", "batch": 2, "devices": 1},
    {"device": "cpu", "size": "135M", "batch": 4, "devices": 1},
    {"device": "h100", "size": "7B", "batch": 1, "devices": 1},
    {"device": "a100-80gb", "size": "7B", "batch": 16, "devices": 1},
    {"device": "h100", "size": "70B", "batch": 1, "devices": 1},
]


@lru_cache(maxsize=1)
def boot() -> dict:
    return boot_data("inline", lab=lab_data())


@cache
def run_payload(name: str) -> dict:
    """A gallery run's payload with its lab figures, as the page holds it once its lab or lesson asked for them."""
    return payload(gallery.load(name), lab=True)


def drawn(jobs: list[tuple[str | dict | None, str]], field: str = "text") -> list[str]:
    """The text each (run name or payload, expression) draws (`field` "prose": less the commands shown as code);
    `expr` sees Lade, run, boot and text(node)."""
    node = shutil.which("node")
    assert node, "node is needed (make install brings the npm dev tools)"
    made = lambda n: n if isinstance(n, dict) else run_payload(n) if n else None  # noqa: E731
    doc = {"boot": boot(), "jobs": [{"payload": made(n), "expr": e} for n, e in jobs]}
    env = {**os.environ, "LADE_SCRIPTS": ",".join(LOADED)}
    done = subprocess.run(
        [node, str(RUNNER)], input=json.dumps(doc), capture_output=True, text=True, timeout=600, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    errors = [(job, o["error"][:600]) for job, o in zip(jobs, out, strict=True) if "error" in o]
    assert not errors, errors
    return [o[field] for o in out]


def lab_view(sel: dict) -> str:
    return f"Lade.lab.view({{run, state: {{lab: {json.dumps(sel)}}}, boot, actions: {{}}}})"


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


@pytest.fixture(scope="module")
def lab_texts() -> dict:
    jobs = [(n, lab_view(sel)) for n in gallery.names() for sel in SELECTIONS]
    return dict(zip(jobs, drawn(jobs), strict=True))


def test_the_lab_names_the_cpu_each_figure_came_from(lab_texts):
    """The lab said "the measurement host's CPU" for every CPU figure, whichever machine measured it. A CPU
    prediction now names the machine of the curve it read (the run's own machine where it recorded a curve), by its
    processor and threads as recorded."""
    for (name, expr), text in lab_texts.items():
        assert "measurement host" not in text, (name, expr)
        if "'cpu'" in expr.replace('"', "'"):
            run = gallery.load(name)
            assert f"On a CPU ({run.machine.description}, {run.machine.threads} thread" in text, (name, expr)


def test_a_machine_that_is_not_described_is_said_to_be_not_recorded():
    """calibrate.labelled called a curve without a machine "a machine this file does not describe" (a file a
    reader never sees); now its description says the machine is not recorded and it has no name, and the page's
    words for it say so rather than invent one."""
    from lade_core.machine import machine_name
    from lade_core.measure.calibrate import labelled

    bare = labelled({"threads": 2, "measured_at": "2026-12-01"}, "shipped")
    assert bare["machine_name"] is None and bare["machine_description"].startswith(
        "its machine not recorded, 2 threads"
    )
    assert machine_name("2-core X", 1) == "2-core X at 1 thread" and machine_name(None, 4) is None
    words = drawn([(None, "Lade.curves.cpuWords(null)"), (None, "Lade.curves.cpuWords('2-core X at 1 thread')")])
    assert words == ["a CPU whose machine is not recorded", "the 2-core X at 1 thread"]


def test_the_honest_note_names_the_machine_that_recorded_the_run():
    """The honest note said "On the CPU a step of it took ..." and "on this project's CPU a forward costs about
    what one token costs up to k tokens": one of them the run's machine, the other the shipped curve's. Each now
    names its own machine."""
    from app.render.boot import plural

    names = gallery.names()
    curve = boot()["lab"]["cpu"]["single"]["machine_name"]
    for name, text in zip(names, drawn([(n, "Lade.notes.honestNote(run, boot)") for n in names]), strict=True):
        m = gallery.load(name).machine
        assert f"On the {m.description} at {m.threads} thread" in text, (name, text)
        # the flat part of the curve the run's own machine measured in the process that recorded it (the walk found
        # a live run at 2 threads told the shipped 1-thread curve's)
        one = m.curve[0].seconds
        flat = max([1] + [p.tokens for p in m.curve if round(p.seconds / one, 5) <= 1.1])
        said = "on the machine that recorded this run, its cost curve (measured in the same process) has a forward "
        assert said + f"costing about what one token costs up to {plural(flat, 'token')}" in text, (name, text)
    # a run that recorded no curve of its own is told the shipped one's, with its machine
    bare = json.loads(json.dumps(run_payload(names[0])))
    bare["derived"]["machine_curve"] = None
    text = drawn([(bare, "Lade.notes.honestNote(run, boot)")])[0]
    assert f"on the {curve} (the CPU curve shipped with the page)" in text, text
    # a browser's race names its threads in its description: said once
    browser = json.loads(json.dumps(run_payload(names[0])))
    browser["trace"]["machine"].update(description="browser: WebAssembly, 2 threads", threads=2)
    text = drawn([(browser, "Lade.notes.honestNote(run, boot)")])[0]
    assert "On the browser: WebAssembly, 2 threads, which recorded it" in text, text


def test_the_lab_states_ranges_and_what_runs_as_they_are(lab_texts):
    """The lab printed "the measured curve's quartiles alone not recorded", "stops paying at batch 2 (predicted;
    between 2 and 2)", "0.83x to 0.83x", two batch-chart rules both labelled "vLLM example", chart titles with raw
    ids ("h100", "a100-80gb"), and "No multi-GPU code runs in this project" beside `lade generate --devices K`."""
    ids = [d["id"] for d in boot()["lab"]["devices"]]
    for (name, expr), text in lab_texts.items():
        assert not re.search(r"alone not recorded", text), (name, expr)
        assert not re.search(r"between (\d+) and \1\b", text), (name, expr, re.search(r"between (\d+) and \1\b", text))
        assert not re.search(r"(\d+\.\d+x) to \1", text), (name, expr, re.search(r"(\d+\.\d+x) to \1", text))
        assert "No multi-GPU code" not in text and "runs Lookahead Parallelism for real" in text, (name, expr)
        assert text.count("vLLM example") == 0, (name, expr)
        for device in ids:
            assert not re.search(rf"(?<![\w/-]){re.escape(device)}(?![\w-])", text), (name, expr, device)
    labels = [s["chart_label"] for s in boot()["lab"]["thresholds"]["servers"] if s["off_from_batch"]]
    assert len(set(labels)) == len(labels) >= 3, labels
    some = next(t for (n, e), t in lab_texts.items() if "'cpu'" not in e.replace('"', "'"))
    assert all(label in some for label in labels), labels


def test_the_fit_note_says_which_context_it_assumed():
    """A model that does not fit one device was judged at the run's mean context (108 positions on the lesson's
    run) without saying so."""
    from lade_core.measure.lab import predict_run

    run = gallery.load("code-class-W7N4G7")
    note = predict_run(run, "h100", "70B")["note"]
    assert "at this run's context (108 positions, the mean position its steps saw)" in note, note


# -- names a reader cannot open --------------------------------------------------------------------------------
# A file, a code symbol or a document section: what the page's words must not send a reader to.
NAMED = re.compile(
    r"\bassets/|\b[\w-]+\.(?:json|jsonl|py|md)\b|BENCHMARKS|\bBOUNDS\b|\bASSUME\b|\bACCELERATORS\b|`\w+`"
)


def test_no_text_shown_to_a_reader_names_a_file_or_a_symbol(lab_texts):
    """The lab said "(mid values; `BOUNDS` gives the range of each)" and "Both come from one sweep
    (assets/sweep-prompt.json (64 new tokens))", the lesson "Measured on the project's measurement host (...;
    assets/bench/numerics-float32.json, ...)". Every chapter at its landing step and at its last, the notes and
    the lab at every selection are walked; none names a file, a symbol or a section of the project's documents."""
    found = [(n, e, m.group()) for (n, e), t in lab_texts.items() for m in NAMED.finditer(t)]
    ctx = "{run, state: {}, actions: {}, lab: boot.lab, boot, links: {explorer: () => ''}}"
    jobs = []
    for name in gallery.names():
        run = gallery.load(name)
        for k in (1, len(run.parallel.steps) // 2, len(run.parallel.steps) - 1):
            chapters = f"Lade.lesson.CHAPTERS.map(c => Lade.dom.h('div', {{}}, c.text(run, {k}, {ctx})))"
            jobs.append((name, f"Lade.dom.h('div', {{}}, {chapters})"))
        jobs += [(name, "Lade.notes.outputsNote(run)"), (name, "Lade.notes.honestNote(run, boot)")]
    jobs.append((None, "Object.values(Lade.notes.GLOSSARY).concat(Object.values(Lade.notes.SECTIONS)).join(' ')"))
    for entry in boot()["gallery"]:  # the gallery's captions (app/captions.py), as the menu shows them
        found += [(entry["name"], "caption", m.group()) for m in NAMED.finditer(f"{entry['title']} {entry['caption']}")]
    for (name, expr), text in zip(jobs, drawn(jobs, "prose"), strict=True):
        found += [
            (name, expr[:60], m.group(), text[max(0, m.start() - 80) : m.end() + 40]) for m in NAMED.finditer(text)
        ]
    assert not found, found[:10]


# -- the documents ---------------------------------------------------------------------------------------------
def doc(name: str) -> str:
    return " ".join((ROOT / name).read_text(encoding="utf-8").split())


def test_the_readme_says_what_the_page_shows():
    """README said the lab shows "the batch sizes real servers stop speculating at" (the chart shows example
    settings, none a default), "the measurement host's CPU", and that the lesson says lookahead loses in a browser
    (it says wide steps cost more than they bring on a CPU)."""
    readme = doc("README.md")
    for wrong in ("real servers stop speculating", "measurement host", "lookahead loses"):
        assert wrong not in readme, wrong
    assert "as examples with their sources, the batch from which servers' speculation settings" in readme


def test_benchmarks_break_even_table_and_its_reasons_are_the_labs():
    """BENCHMARKS §12 called greedy's forward memory-bound in every GPU cell; in the 135M row it is overhead-bound.
    Each cell of its break-even table, and the bound it names for each row, is the lab's for the lesson's run."""
    from lade_core.measure.labdata import lab_run_data

    text = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    section = text[text.index("## 12.") : text.index("## 13.")]
    run = gallery.load(gallery.by_role("lookahead"))
    predictions = lab_run_data(run)["predictions"]
    bounds = {}
    for size in ("7B", "13B", "70B", "135M"):
        row = re.search(rf"^\| {size} \|(.*)\|$", section, re.M)
        assert row, size
        for device, cell in zip(("a100-80gb", "h100", "h200"), row.group(1).split("|"), strict=True):
            even = predictions[device][size]["break_even_batch"]
            got = re.search(r"(\d+) \((\d+) to (\d+)\)", cell)
            assert got and [int(x) for x in got.groups()] == [even["predicted"], *even["range"]], (size, device)
            bounds.setdefault(size, set()).add(even["why"]["greedy_bound"])
    words = " ".join(section.split())
    assert bounds == {"7B": {"memory"}, "13B": {"memory"}, "70B": {"memory"}, "135M": {"overhead"}}, bounds
    assert "still memory-bound for the 7B, 13B and 70B rows, and overhead-bound" in words


def test_benchmarks_parallelism_figures_are_the_pages_and_the_withdrawn_ones_say_so():
    """BENCHMARKS §7 still quoted the simulated parallelism figures the page withdrew (1.93x on one device and on
    eight, 1.31x on two). The figures the page shows now are stated, each equal to the lab's, and the old paragraph
    is marked superseded with a pointer to §15."""
    from lade_core.measure.labdata import lab_page_data

    text = doc("BENCHMARKS.md")
    now = text[text.index("**Lookahead Parallelism, simulated, as the page shows it now**") :]
    now = now[: now.index("*Superseded*")]
    scen = lab_page_data()["parallelism"]
    for key in ("default", "wide"):
        s = scen[key]
        w, n = s["setting"]["window"], s["setting"]["ngram"]
        one, top = f"{s['predicted_speedup'][0]:.2f}x", f"{s['predicted_speedup'][-1]:.2f}x"
        said = re.search(rf"W={w} N={n}[^;]*?\(([\d.]+) tokens a step\), ([\d.]+x) on one device and ([\d.]+x)", now)
        assert said and said.groups() == (f"{s['compression']:.2f}", one, top), (key, now[:400])
    old = text[text.index("*Superseded*") :][:600]
    assert "1.93x" in old and "1.31x" in old and "§15" in old


def test_the_changelog_says_what_landed_since_it_said_still_to_come():
    """CHANGELOG said a dark theme "is still to come" and the browser race's caching, WebGPU, app button and embeds
    "are still to come"; all have landed. A "still to come" is kept as history, with what landed since beside it."""
    text = doc("CHANGELOG.md")
    found = [m.start() for m in re.finditer("still to come", text)]
    assert found
    for at in found:
        assert "(landed since:" in text[at : at + 40], text[at - 100 : at + 60]
