"""The browser's renderer, on the standalone HTML export (no server, no model): every view shows the trace's data at
a chosen step, stepping by key, button and slider works and asks nothing of any network, the export opens offline
and stays small, and a run cut short inside a candidate is told as such. The views are checked against the trace
with Python's own reading of it (`expected_*`), so a view whose logic drifts from the trace fails here.
"""

import dataclasses
import time

import pytest

from app.render.export import render_html
from conftest_app import SHOTS, chromium_browser
from lade_core import parse_run
from lade_core.paths import RUNS
from lade_core.load import check_run

pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.browser

RUN_NAMES = ("code-class-W7N4G7", "code-class-t0.7-W7N4G7", "code-class-jacobi-W7", "code-csv-W31N5G31")
VIEWS = ("ar-output", "la-output", "counter", "progress-plot", "window-view", "trajectory-view", "pool-view",
         "pool-plot", "verify-view", "mask-view")


def load(name):
    return parse_run((RUNS / f"{name}.json").read_bytes())


@pytest.fixture(scope="module")
def chromium():
    with chromium_browser() as browser:
        yield browser


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    folder = tmp_path_factory.mktemp("exports")
    paths = {}
    for name in RUN_NAMES:
        paths[name] = folder / f"{name}.html"
        paths[name].write_text(render_html(load(name), name), encoding="utf-8")
    return paths


def open_export(chromium, path, width=1280):
    """A tab on an export, counting every request that is not the file itself."""
    page = chromium.new_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(20_000)
    page.requests = []
    page.errors = []
    page.on("request", lambda r: page.requests.append(r.url) if not r.url.startswith("file://") else None)
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_selector("#counter table")
    return page


def go(page, k):
    page.evaluate("k => window.ladeStage.go(k)", k)
    page.wait_for_function("k => document.querySelector('.lade-stage').parentElement.dataset.step == String(k)", arg=k)


def expected_counter(run, k):
    out = {}
    for lane in ("parallel", "baseline"):
        steps = getattr(run, lane).steps[: min(k, len(getattr(run, lane).steps) - 1) + 1]
        out[lane] = (len(steps), sum(len(s.accepted) for s in steps))
    return out


def shown_counter(page):
    rows = page.locator("#counter tr").all_inner_texts()
    out = {}
    for lane, row in zip(("parallel", "baseline"), rows):
        cells = dict(part.split("=") for part in row.split() if "=" in part and not part.startswith("time"))
        out[lane] = (int(cells["steps"]), int(cells["tokens"]))
    return out


@pytest.mark.parametrize("name", RUN_NAMES)
def test_export_opens_offline_small_with_every_view(chromium, exports, name):
    """Issue 13: the export embeds the page's renderer, shows every view, the explanations and the honest note,
    makes no request and weighs at most 1.5 MB."""
    size = exports[name].stat().st_size
    assert size <= 1.5 * 2**20, size
    page = open_export(chromium, exports[name])
    for view in (*VIEWS, "step-slider", "play", "step-next", "step-prev"):
        assert page.locator(f"#{view}").count() == 1, view
    assert "honest note on speed" in page.inner_text("#honest-note")
    assert page.locator(".explain").count() >= 4
    page.keyboard.press("End")
    page.keyboard.press("Home")
    assert page.requests == [] and page.errors == []
    page.close()


@pytest.mark.parametrize("name", RUN_NAMES)
def test_views_show_the_trace_at_chosen_steps(chromium, exports, name):
    run = load(name)
    page = open_export(chromium, exports[name])
    last = max(len(run.parallel.steps), len(run.baseline.steps)) - 1
    for k in sorted({1, 5, len(run.parallel.steps) // 2, len(run.parallel.steps) - 1, last}):
        go(page, k)
        assert shown_counter(page) == expected_counter(run, k), k
        step = run.parallel.steps[min(k, len(run.parallel.steps) - 1)]
        # the window: one cell per guess, the new level included
        cells = page.locator("#window-view td.cell")
        assert cells.count() == (len(step.levels_before) + 1) * step.window if step.levels_before else cells.count() == 0
        # the verification branch: one row pair per candidate, the accepted tokens as chips
        assert page.locator("#verify-view tr.winner").count() == (2 if step.winner >= 0 else 0)
        assert page.locator("#verify-view .accepted .chip").count() == len(step.accepted) or step.kind == "prefill"
        # the outputs: exactly the tokens emitted so far
        for lane, view in (("parallel", "la-output"), ("baseline", "ar-output")):
            want = expected_counter(run, k)[lane][1]
            assert page.locator(f"#{view} .tok-text .tk:not([hidden])").count() == want
        # the mask: one drawn cell per visible pair, coloured by the key's branch
        if step.kind != "prefill":
            layout = step.layout
            drawn = page.evaluate("""() => Object.fromEntries(['m-x', 'm-win', 'm-ver', 'm-off'].map(c =>
                [c, (document.querySelector('#mask-view path.' + c).getAttribute('d').match(/M/g) || []).length]))""")
            mask = layout.mask()
            assert drawn["m-x"] == mask[:, 0].sum() and drawn["m-off"] == (~mask).sum()
            assert drawn["m-win"] + drawn["m-ver"] + drawn["m-x"] == mask.sum()
        if run.method == "lookahead" and step.kind != "prefill":
            text = page.inner_text("#pool-view")
            assert f"{step.pool_size} n-gram" in text and f"found {len(step.candidates)} candidate" in text
    assert page.errors == []
    page.close()


def test_sampled_steps_show_every_draw(chromium, exports):
    run = load("code-class-t0.7-W7N4G7")
    page = open_export(chromium, exports["code-class-t0.7-W7N4G7"])
    sampled = [s for s in run.parallel.steps if s.draws][:5]
    assert sampled
    for step in sampled:
        go(page, step.index)
        rows = page.locator("#verify-view table.draws tr").all_inner_texts()[1:]
        assert len(rows) == len(step.draws)
        for row, draw in zip(rows, step.draws):
            assert f"{100 * draw.prob:.2f}%" in row and f"{draw.uniform:.3f}" in row
            assert ("accepted" in row) == draw.accepted
    page.close()


def test_keys_buttons_and_slider_step_the_page(chromium, exports):
    """Issue 13: ← → Home End and Space on the whole page, the buttons and the slider; Play runs at the chosen
    speed (at least 20 steps/s where rendering keeps up) and stops at the end."""
    run = load("code-class-W7N4G7")
    page = open_export(chromium, exports["code-class-W7N4G7"])
    last = max(len(run.parallel.steps), len(run.baseline.steps)) - 1
    step = lambda: int(page.evaluate("window.ladeStage.k"))  # noqa: E731
    page.keyboard.press("ArrowRight"), page.keyboard.press("ArrowRight")
    assert step() == 2
    page.keyboard.press("ArrowLeft")
    assert step() == 1
    page.keyboard.press("End")
    assert step() == last
    page.keyboard.press("Home")
    assert step() == 0
    page.click("#step-next")
    assert step() == 1
    page.click("#step-prev")
    assert step() == 0
    page.locator("#step-slider").fill("17")
    assert step() == 17
    page.select_option(".playbar select.speed", "30")
    page.keyboard.press("Home")
    page.keyboard.press(" ")
    t0 = time.perf_counter()
    page.wait_for_function(f"() => window.ladeStage.k >= {min(last, 60)}")
    rate = min(last, 60) / (time.perf_counter() - t0)
    assert rate >= 15, rate  # 30 asked; a loaded CI machine still keeps most of it
    page.wait_for_function("() => !window.ladeStage.playing", timeout=30_000)
    assert step() == last and page.requests == []
    page.close()


def test_a_run_cut_short_inside_a_candidate_says_so(chromium, tmp_path):
    """Issue 13 bug: when the budget ends inside an accepted candidate, the step emitted fewer tokens than matched;
    the verification view must not claim a bonus token that was never emitted."""
    run = load("code-class-W7N4G7")
    k = next(s.index for s in run.parallel.steps if s.winner >= 0 and s.match_lengths[s.winner] >= 2)
    steps = list(run.parallel.steps[: k + 1])
    steps[k] = dataclasses.replace(steps[k], accepted=steps[k].accepted[:1])
    tokens = tuple(t for s in steps for t in s.accepted)
    cut = dataclasses.replace(run.parallel, steps=tuple(steps), tokens=tokens, stop_reason="length")
    base = dataclasses.replace(run.baseline, steps=run.baseline.steps[: len(tokens)], tokens=run.baseline.tokens[: len(tokens)],
                               stop_reason="length")
    short = dataclasses.replace(run, parallel=cut, baseline=base, max_new_tokens=len(tokens))
    check_run(short)
    path = tmp_path / "cut.html"
    path.write_text(render_html(short, "cut"), encoding="utf-8")
    page = open_export(chromium, path)
    go(page, k)
    text = page.inner_text("#verify-view .accepted")
    assert "1 token: 1 from the winning candidate)" in text and "no bonus token follows" in text
    assert page.locator("#verify-view td.pred.bonus").count() == 0
    page.close()


def test_window_marks_changes_for_the_same_position_only(chromium, exports):
    """Issue 13 bug: "changed" compares guesses for the same absolute position, step to step."""
    run = load("code-class-W7N4G7")
    page = open_export(chromium, exports["code-class-W7N4G7"])
    for step in run.parallel.steps[2:12]:
        go(page, step.index)
        prev = run.parallel.steps[step.index - 1]
        before = {prev.position + 1 + l + j: t for l, lv in enumerate(prev.levels_before) for j, t in enumerate(lv)}
        before.update({prev.position + len(prev.levels_before) + 1 + j: t for j, t in enumerate(prev.new_level)})
        cells = [(step.position + 1 + l + j, t) for l, lv in enumerate(step.levels_before) for j, t in enumerate(lv)]
        cells += [(step.position + len(step.levels_before) + 1 + j, t) for j, t in enumerate(step.new_level)]
        want = sum(1 for pos, t in cells if pos in before and before[pos] != t)  # per cell: the last guess before
        assert page.locator("#window-view td.cell .dot").count() == want, step.index
    page.close()


def test_screenshots_of_every_view_at_desktop_and_phone_width(chromium, exports):
    SHOTS.mkdir(parents=True, exist_ok=True)
    run = load("code-class-W7N4G7")
    k = next(s.index for s in run.parallel.steps if s.winner >= 0 and s.match_lengths[s.winner] >= 2)
    for width in (1280, 390):
        page = open_export(chromium, exports["code-class-W7N4G7"], width)
        go(page, k)
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 1, f"the page scrolls sideways at {width} px"
        for view in VIEWS:
            page.locator(f"#{view}").screenshot(path=str(SHOTS / f"export-{width}-{view}.png"))
        page.screenshot(path=str(SHOTS / f"export-{width}-full.png"), full_page=True)
        page.close()


def test_an_opened_run_is_acknowledged_and_the_ack_changes_nothing(chromium, exports):
    """Issue 17, memory per session: Gradio keeps the stage's last value (a whole run's payload) per session, so once
    the page has drawn an opened run it triggers 'applied' and the server swaps the value for an ack, which the page
    ignores. A live-race update or a notice is not acknowledged (nothing large to drop, and a stream still runs)."""
    page = open_export(chromium, exports["code-class-W7N4G7"])
    got = page.evaluate("""() => {
        const calls = [], host = document.createElement('div');
        document.body.appendChild(host);
        const stage = new Lade.Stage(host, { trigger: (name, data) => calls.push([name, data]) });
        const name = window.ladeStage.current, run = window.ladeStage.runs.get(name);
        const payload = { trace: run.t, derived: run.d };
        stage.apply(JSON.stringify({ op: 'notice', seq: 1, notice: 'hello' }));
        stage.apply(JSON.stringify({ op: 'open', seq: 2, runs: { [name]: payload }, current: name, step: 3, mode: 'explorer' }));
        const renders = stage.renders;
        stage.apply(JSON.stringify({ op: 'ack', seq: 3, of: 2 }));
        return { calls, seq: stage.seq, k: stage.k, released: stage.released, rendersAfterAck: stage.renders - renders };
    }""")
    assert got["calls"] == [["applied", {"seq": 2}]]
    assert got["seq"] == 2 and got["k"] == 3 and got["released"] == 2 and got["rendersAfterAck"] == 0
    page.close()
