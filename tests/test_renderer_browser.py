"""The browser's renderer, on the standalone HTML export (no server, no model): every view shows the trace's data at
a chosen step, stepping by key, button and slider works and asks nothing of any network, Play advances by its speed
(counted on a fake clock, not timed), the export opens offline and stays small, a run cut short inside a candidate
is told as such, and the stage follows the server's few-byte messages (open by handle, notices, a live race). The
views are checked against the trace with Python's own reading of it (`expected_*`), so a view whose logic drifts
from the trace fails here.
"""

import dataclasses
from decimal import ROUND_HALF_UP, Decimal

import pytest
from conftest_app import SHOTS

from app import gallery
from app.render.export import render_html
from app.render.views import VIEW_IDS
from lade_core import parse_run
from lade_core.paths import RUNS
from lade_core.tracefile import check_run

pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.browser

RUN_NAMES = ("code-class-W7N4G7", "code-class-t0.7-W7N4G7", "code-class-jacobi-W7", "code-csv-W31N5G31")
VIEWS = VIEW_IDS
LANES = ("parallel", "baseline")


def load(name):
    return parse_run((RUNS / f"{name}.json").read_bytes())


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    folder = tmp_path_factory.mktemp("exports")
    paths = {}
    for name in RUN_NAMES:
        paths[name] = folder / f"{name}.html"
        paths[name].write_text(render_html(load(name), name), encoding="utf-8")
    return paths


def open_export(chromium, path, width=1280, fake_clock=False):
    """A tab on an export, counting every request that is not the file itself (a fake clock if asked)."""
    page = chromium.new_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(20_000)
    page.requests = []
    page.errors = []
    page.on("request", lambda r: page.requests.append(r.url) if not r.url.startswith("file://") else None)
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    if fake_clock:
        page.clock.install()
    page.goto(path.as_uri())
    page.wait_for_selector("#counter table")
    if fake_clock:  # from here on the page's time moves only when the test moves it
        page.clock.pause_at(page.evaluate("Date.now()") + 1000)
    return page


def go(page, k):
    page.evaluate("k => window.ladeStage.go(k)", k)
    page.wait_for_function("k => window.ladeStage.root.dataset.step == String(k)", arg=k)


def k_of(page) -> int:
    return int(page.evaluate("window.ladeStage.state.k"))


def expected_counter(run, k):
    out = {}
    for lane in LANES:
        steps = getattr(run, lane).steps[: min(k, len(getattr(run, lane).steps) - 1) + 1]
        out[lane] = (len(steps), sum(len(s.accepted) for s in steps))
    return out


def shown_counter(page):
    """(steps, tokens) per lane from the counter's table: a header row [method, steps, tokens, ...], then a row per
    lane."""
    header = page.locator("#counter table tr").first.locator("th").all_inner_texts()
    assert header == ["method", "steps", "tokens", "tokens/step", "seconds", "tokens/s"], header
    out = {}
    for lane in LANES:
        cells = page.locator(f"#counter tr.lane-{lane} td").all_inner_texts()
        out[lane] = (int(cells[0]), int(cells[1]))
    return out


@pytest.mark.parametrize("name", RUN_NAMES)
def test_export_opens_offline_small_with_every_view(chromium, exports, name):
    """The export embeds the page's renderer, shows every view (each under its heading), the explanations and the
    honest note, makes no request and weighs at most 1.5 MB."""
    size = exports[name].stat().st_size
    assert size <= 1.5 * 2**20, size
    page = open_export(chromium, exports[name])
    for view in (*VIEWS, "step-slider", "play", "step-next", "step-prev"):
        assert page.locator(f"#{view}").count() == 1, view
    for view in VIEWS:
        assert page.locator(f"#{view} h3.view-title").count() >= 1, view
    note, run = page.inner_text("#honest-note"), load(name)
    seconds = lambda m: sum(s.seconds for s in m.steps)  # noqa: E731
    mean = lambda m: sum(s.seconds for s in m.steps[1:]) / max(len(m.steps) - 1, 1)  # noqa: E731
    plain = "greedy" if run.sampling.greedy else "plain sampling"
    assert f"wrote {run.parallel.compression:.2f} tokens per step against 1 for {plain}" in note, note
    assert f"took {mean(run.parallel) / mean(run.baseline):.2f}x as long" in note, note
    fed = [s.n_input for s in run.parallel.steps[1:]]  # what the steps fed, copied candidates included
    most = f"{max(fed)} token{'s' * (max(fed) != 1)}"
    mean_fed = Decimal(sum(fed) / len(fed)).quantize(Decimal("0.1"), ROUND_HALF_UP)  # as JS's toFixed rounds
    assert f"fed the model up to {most} ({mean_fed} on average)" in note, note
    assert f"wall-clock ratio is {seconds(run.baseline) / seconds(run.parallel):.2f}x" in note, note
    assert "“up to 1.8x on MT-bench” on one GPU" in note and "not a single-device figure" in note  # the register's
    assert page.locator(".explain").count() >= 4
    page.keyboard.press("End")
    page.keyboard.press("Home")
    assert page.requests == [] and page.errors == []
    page.close()


def test_an_export_opens_where_the_page_was_under_the_runs_title(chromium, tmp_path):
    """The export boots from a JSON document in its head and opens at the step the page showed, under the gallery
    run's title and caption (not its internal name, not at step 0)."""
    from app import gallery

    name = "code-fib-W7N4G7"
    path = tmp_path / "at-step.html"
    text = render_html(load(name), name, 7)
    assert '<script type="application/json" id="lade-boot">' in text
    path.write_text(text, encoding="utf-8")
    page = open_export(chromium, path)
    page.wait_for_function("() => window.ladeStage.state.k === 7")
    entry = next(e for e in gallery.listing() if e["name"] == name)
    title = page.inner_text(".run-title")
    assert title.startswith(entry["title"]) and entry["caption"][:40] in title, title
    assert name not in title
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
        assert step.kind != "prefill", "these steps are chosen to be decoding steps"
        # the window: one cell per guess, the new level included
        cells = page.locator("#window-view td.cell")
        assert (
            cells.count() == (len(step.levels_before) + 1) * step.window if step.levels_before else cells.count() == 0
        )
        # the verification branch: one row pair for the winner, the accepted tokens as chips
        assert page.locator("#verify-view tr.winner").count() == (2 if step.winner >= 0 else 0)
        assert page.locator("#verify-view .accepted .chip").count() == len(step.accepted)
        # the outputs: exactly the tokens emitted so far
        for lane, view in (("parallel", "la-output"), ("baseline", "ar-output")):
            want = expected_counter(run, k)[lane][1]
            assert page.locator(f"#{view} .tok-text .tk:not([hidden])").count() == want
        # the mask: one drawn cell per visible pair, coloured by the key's branch
        layout = step.layout
        drawn = page.evaluate("""() => Object.fromEntries(['m-x', 'm-win', 'm-ver', 'm-off'].map(c =>
            [c, (document.querySelector('#mask-view path.' + c).getAttribute('d').match(/M/g) || []).length]))""")
        mask = layout.mask()
        assert drawn["m-x"] == mask[:, 0].sum() and drawn["m-off"] == (~mask).sum()
        assert drawn["m-win"] + drawn["m-ver"] + drawn["m-x"] == mask.sum()
        if run.method == "lookahead":
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
    """← → Home End on the whole page, the buttons and the slider each move the clock step, and none asks any
    network."""
    run = load("code-class-W7N4G7")
    page = open_export(chromium, exports["code-class-W7N4G7"])
    last = max(len(run.parallel.steps), len(run.baseline.steps)) - 1
    page.evaluate("document.activeElement.blur()")  # focus on no control: the keys belong to the stage
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    start = k_of(page)
    page.keyboard.press("ArrowLeft")
    assert k_of(page) == start - 1
    page.keyboard.press("End")
    assert k_of(page) == last
    page.keyboard.press("Home")
    assert k_of(page) == 0
    page.click("#step-next")
    assert k_of(page) == 1
    page.click("#step-prev")
    assert k_of(page) == 0
    page.locator("#step-slider").fill("17")
    assert k_of(page) == 17 and page.get_attribute("#step-slider", "aria-valuetext") == f"step 17 of {last}"
    assert page.requests == []
    page.close()


def test_play_advances_by_its_speed_and_stops_at_the_end(chromium, exports):
    """Play at 30 steps/s moves 30 steps per second of the page's clock (a fake one here, so the count does not
    depend on this machine's load), draws at most once per step moved, and stops at the last step with one
    summary for screen readers; at 6 steps/s a second moves 6."""
    run = load("code-class-W7N4G7")
    last = max(len(run.parallel.steps), len(run.baseline.steps)) - 1
    page = open_export(chromium, exports["code-class-W7N4G7"], fake_clock=True)
    go(page, 0)
    page.select_option(".playbar select.speed", "30")
    renders = page.evaluate("window.ladeStage.renders")
    page.click("#play")
    page.clock.run_for(1000)
    moved, drawn = k_of(page), page.evaluate("window.ladeStage.renders") - renders
    assert 29 <= moved <= 30, moved
    assert drawn <= moved + 2, (drawn, moved)  # the click's own draw, then one per frame that moved the clock
    page.select_option(".playbar select.speed", "6")
    before = k_of(page)
    page.clock.run_for(1000)
    assert 5 <= k_of(page) - before <= 6 and page.evaluate("window.ladeStage.state.playing")
    page.clock.run_for(30_000)
    assert k_of(page) == last and not page.evaluate("window.ladeStage.state.playing")
    page.clock.run_for(1000)
    assert page.inner_text("#lade-live").startswith(f"Paused at {last} of {last}.")
    assert page.requests == []
    page.close()


def test_a_run_cut_short_inside_a_candidate_says_so(chromium, tmp_path):
    """When the budget ends inside an accepted candidate, the step emitted fewer tokens than matched; the
    verification view must not claim a bonus token that was never emitted."""
    run = load("code-class-W7N4G7")
    k = next(s.index for s in run.parallel.steps if s.winner >= 0 and s.match_lengths[s.winner] >= 2)
    steps = list(run.parallel.steps[: k + 1])
    steps[k] = dataclasses.replace(steps[k], accepted=steps[k].accepted[:1])
    tokens = tuple(t for s in steps for t in s.accepted)
    cut = dataclasses.replace(run.parallel, steps=tuple(steps), tokens=tokens, stop_reason="length")
    base = dataclasses.replace(
        run.baseline,
        steps=run.baseline.steps[: len(tokens)],
        tokens=run.baseline.tokens[: len(tokens)],
        stop_reason="length",
    )
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
    """ "changed" compares guesses for the same absolute position, step to step."""
    run = load("code-class-W7N4G7")
    page = open_export(chromium, exports["code-class-W7N4G7"])
    for step in run.parallel.steps[2:12]:
        go(page, step.index)
        prev = run.parallel.steps[step.index - 1]
        before = {prev.position + 1 + i + j: t for i, lv in enumerate(prev.levels_before) for j, t in enumerate(lv)}
        before.update({prev.position + len(prev.levels_before) + 1 + j: t for j, t in enumerate(prev.new_level)})
        cells = [(step.position + 1 + i + j, t) for i, lv in enumerate(step.levels_before) for j, t in enumerate(lv)]
        cells += [(step.position + len(step.levels_before) + 1 + j, t) for j, t in enumerate(step.new_level)]
        want = sum(1 for pos, t in cells if pos in before and before[pos] != t)  # per cell: the last guess before
        assert page.locator("#window-view td.cell .dot").count() == want, step.index
    page.close()


def test_screenshots_of_every_view_at_desktop_and_phone_width(chromium, exports):
    """Pictures of every view at 1280 and 390 px (looked at by a person), and at neither width does the page scroll
    sideways (wide grids scroll inside their own box)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    run = load("code-class-W7N4G7")
    k = next(s.index for s in run.parallel.steps if s.winner >= 0 and s.match_lengths[s.winner] >= 2)
    overflow = {}
    for width in (1280, 390):
        page = open_export(chromium, exports["code-class-W7N4G7"], width)
        go(page, k)
        for view in VIEWS:
            page.locator(f"#{view}").screenshot(path=str(SHOTS / f"export-{width}-{view}.png"))
        page.screenshot(path=str(SHOTS / f"export-{width}-full.png"), full_page=True)
        overflow[width] = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        page.close()
    assert all(v <= 1 for v in overflow.values()), f"the page scrolls sideways by {overflow} px"


# The stage's messages from the server (app/stage.py), fed to a second stage whose source counts what it is asked.
MESSAGES = """async () => {
    const run = window.ladeStage.run(), payload = { trace: run.t, derived: run.d };
    const asked = [], host = document.createElement('div');
    document.body.appendChild(host);
    const source = { kind: 'server', load: async (handle, since) => {
        asked.push([handle, since]);
        if (handle === 'gone') return { error: 'The run gone is not held by this server any more: open it again.' };
        return { payload: JSON.parse(JSON.stringify(payload)) };
    } };
    const stage = new Lade.stage.Stage(host, { boot: window.ladeStage.boot, source });
    const settle = () => new Promise(r => setTimeout(r, 50));
    const out = {};
    await stage.apply(JSON.stringify({ notice: 'hello', n: 1 }));
    out.notice = [stage.state.notice, asked.length];
    await stage.apply(JSON.stringify({ run: 'a', step: 3, mode: 'explorer', n: 2 }));
    await stage.apply(JSON.stringify({ run: 'a', step: 'last', mode: 'explorer', n: 3 }));
    out.opened = [stage.state.current, stage.state.k, stage.run().lastStep(), asked.length, stage.state.notice];
    await stage.apply(JSON.stringify({ run: 'gone', step: 1, n: 4 }));
    out.gone = [stage.state.current, stage.state.notice];
    for (const junk of ['not json', '[1, 2]', 'null', '{"run": 5}', '{"live": {"x": 1}}']) await stage.apply(junk);
    out.junk = [stage.state.current, asked.length];
    await stage.apply(JSON.stringify({ live: 'live-x', status: 'Live race: starting.', n: 5 }));
    await settle();
    await stage.apply(JSON.stringify({ live: 'live-x', status: 'Live race: lookahead at step 9.', n: 6 }));
    await settle();
    out.live = [stage.state.current, stage.state.live, stage.state.liveStatus, asked.slice(-2)];
    out.renders = stage.renders;
    host.remove();
    return out;
}"""


def test_the_stage_follows_the_servers_messages(chromium, exports):
    """A notice is shown without asking for any run; a run is pulled once by its handle and opened at the step
    asked ("last" too), a second message for it asks nothing; a handle the server dropped leaves the page as it
    was with the server's message; values that are not messages change nothing; a live race is pulled whole
    first, then by what the page already has."""
    page = open_export(chromium, exports["code-class-W7N4G7"])
    got = page.evaluate(MESSAGES)
    last = got["opened"][2]
    assert got["notice"] == ["hello", 0]
    assert got["opened"][:2] == ["a", last] and got["opened"][3] == 1
    assert got["gone"] == ["a", "The run gone is not held by this server any more: open it again."]
    assert got["junk"] == ["a", 2]
    current, live, status, pulls = got["live"]
    assert (current, live, status) == ("live-x", "live-x", "Live race: lookahead at step 9.")
    assert pulls[0] == ["live-x", None] and pulls[1][0] == "live-x" and pulls[1][1]["parallel"] >= 1
    page.close()


def test_a_hybrid_lane_is_named_and_its_copies_labelled(chromium, tmp_path):
    """Chapter 6's race ran lookahead with prompt lookup's copies among its candidates (48 of its 50 accepted draft
    tokens were copies), while the page called it lookahead and the copy "a candidate from the pool". A lookahead
    lane with copied candidates (tests/fixtures/hybrid-race.json, that recording) is named "Lookahead + prompt
    lookup" everywhere, and a step won by a copy says so in the verification view, counted apart from the pool's."""
    from lade_core.paths import ROOT

    run = parse_run((ROOT / "tests" / "fixtures" / "hybrid-race.json").read_bytes())
    assert run.config.lookup > 0
    won = next(s for s in run.parallel.steps if s.copied and s.winner >= len(s.candidates) - s.copied)
    path = tmp_path / "hybrid.html"
    path.write_text(render_html(run, "hybrid-race"), encoding="utf-8")
    page = open_export(chromium, path)
    go(page, won.index)
    verify = page.inner_text("#verify-view")
    pooled = len(won.candidates) - won.copied
    assert f"{pooled} candidate{'s' * (pooled != 1)} from the pool" in verify, verify
    assert f"{won.copied} cop{'y' if won.copied == 1 else 'ies'} of the text by prompt lookup" in verify, verify
    assert "Prompt lookup's copy matched" in verify and "not the paper's method" in verify
    assert page.locator("#verify-view tr.copied").count() >= 2
    assert "Lookahead + prompt lookup" in page.inner_text("#relatives-view")
    assert "Lookahead + prompt lookup" in page.inner_text("#counter")
    assert page.errors == []
    page.close()


def test_the_metrics_table_says_when_nothing_was_drafted_and_keeps_small_shares(chromium, tmp_path):
    """Greedy drafts nothing: its draft acceptance cells say so (they read "0%" and "1.00", as if every draft
    failed). A share under 10% keeps one decimal (early exit's 3 of 600 kept drafts read "1%"). The columns' names
    come from the register of what they are called elsewhere (assets/lab/metrics.json)."""
    from lade_core.metrics import run_metrics
    from lade_core.paths import ROOT

    run = parse_run((ROOT / "tests" / "fixtures" / "hybrid-race.json").read_bytes())
    path = tmp_path / "race.html"
    path.write_text(render_html(run, "race"), encoding="utf-8")
    page = open_export(chromium, path)
    assert page.evaluate("[3 / 600, 0, 0.25, 0.0996].map(Lade.dom.pct)") == ["0.5%", "0%", "25%", "10.0%"]
    cells = page.eval_on_selector_all(
        "#relatives-view tr[class^='lane-']",
        "rows => rows.map(r => [r.className, [...r.cells].map(c => c.textContent)])",
    )
    lanes = {"lane-parallel": run.parallel, "lane-baseline": run.baseline}
    lanes.update({f"lane-lane{i}": lane.run for i, lane in enumerate(run.lanes)})
    assert {name for name, _ in cells} == set(lanes)
    for name, row in cells:
        m = run_metrics(lanes[name])
        share = 100 * m["draft_acceptance_rate"]
        want = (
            "– (nothing drafted)"
            if not m["drafted_tokens"]
            else f"{share:.1f}%"
            if 0 < share < 10
            else f"{round(share)}%"
        )
        assert row[4] == want, (name, row)
    assert dict(cells)["lane-baseline"][4] == "– (nothing drafted)"
    # the same for its acceptance length (it read "1.00"), and the columns say whose names they are: vLLM's
    # counters are not the literature's mean accepted tokens or Leviathan et al.'s per-token acceptance rate
    assert dict(cells)["lane-baseline"][3] == "– (nothing drafted)"
    heads = page.eval_on_selector_all("#relatives-view table.methods th[scope=col]", "t => t.map(c => c.textContent)")
    assert heads[2:5] == ["tokens/step", "acceptance length (vLLM)", "drafted tokens kept"], heads
    note = " ".join(page.text_content("#relatives-view details.terms").split())
    for term in ("Spec-Bench", "EAGLE", "Medusa", "Leviathan", "at most one wins", "leaves out the steps that drafted"):
        assert term in note, term
    assert page.errors == []
    page.close()


def test_the_mask_names_only_the_marks_its_step_has(chromium, tmp_path):
    """A step that fed no candidates: its mask caption says nothing of a token tree and its legend has no candidate
    key (chapter 7 explained a token tree beside a mask with no candidate in it); a step that fed some has both."""
    run = parse_run((RUNS / "code-class-W7N4G7.json").read_bytes())
    empty = next(s for s in run.parallel.steps[1:] if s.tree and not s.layout.nodes)
    fed = next(s for s in run.parallel.steps[1:] if s.tree and s.layout.nodes)
    path = tmp_path / "code-class.html"
    path.write_text(render_html(run, "code-class"), encoding="utf-8")
    page = open_export(chromium, path)
    go(page, empty.index)
    said = page.inner_text("#mask-view")
    assert "0 verification tokens" in said and "token tree" not in said and "candidate token" not in said, said
    go(page, fed.index)
    said = page.inner_text("#mask-view")
    assert "a token tree: shared prefixes fed once" in said and "sees a candidate token" in said, said
    assert page.errors == []
    page.close()


@pytest.mark.parametrize(
    ("name", "source"),
    [
        ("code-bsearch-paper-W7N4G7", "(the window's full columns;"),
        (
            "code-bsearch-W7N4G7",
            "(the window's full columns, then the n-grams its accepted tokens complete in the text;",
        ),
    ],
)
def test_the_pool_view_says_what_a_step_adds(chromium, tmp_path, name, source):
    """The student could not tell what "added" counts: the pool view says where a step's n-grams come from under
    the run's policy (the window's columns; the text's n-grams too unless the pool is the paper's), that one
    already held counts again, and the count is the step's own."""
    run = parse_run((RUNS / f"{name}.json").read_bytes())
    step = next(s for s in run.parallel.steps[1:] if s.kind == "lookahead" and s.ngrams_added)
    path = tmp_path / f"{name}.html"
    path.write_text(render_html(run, name), encoding="utf-8")
    page = open_export(chromium, path)
    go(page, step.index)
    said = " ".join(page.inner_text("#pool-view").split())
    n = len(step.ngrams_added)
    assert f"added {n} n-gram{'s' * (n != 1)} {source} one already held counts again" in said, said
    page.close()


# A finished live race, as the server hands it over (its payload whole), followed by a second stage.
LIVE_BANNER = """async () => {
    const run = window.ladeStage.run(), payload = { trace: run.t, derived: run.d };
    const host = document.createElement('div');
    document.body.appendChild(host);
    const source = { kind: 'server', load: async () => ({ payload: JSON.parse(JSON.stringify(payload)) }) };
    const stage = new Lade.stage.Stage(host, { boot: window.ladeStage.boot, source });
    await stage.apply(JSON.stringify({ live: 'live-x', status: 'Live race: done.', n: 1 }));
    await stage.apply(JSON.stringify({ mode: 'explorer', n: 2 }));
    await new Promise(r => setTimeout(r, 100));
    const title = host.querySelector('.race-title');
    const text = title ? title.innerText : null;
    host.remove();
    return text;
}"""


@pytest.mark.parametrize("name", ["code-class-W7N4G7", "code-csv-W31N5G31"])
def test_a_finished_race_is_judged_by_the_one_noise_rule(chromium, exports, name):
    """The live race's banner said "Lookahead finished first, 0.66 s (2%) before prompt lookup" and never how either
    did against greedy, calling a 2% margin a win where the app calls gaps under its band noise. Now each lane is
    set against greedy with the rule's verdict, and the first two finish "about together" within the run's band
    (its own greedy drift or its machine's floor, the wider), naming that band, or one first by its margin. The
    gallery's recordings, handed over as finished live races: a W=7 and a W=31 race."""
    from lesson_facts import noise_band, seconds

    run = gallery.load(name)
    page = open_export(chromium, exports[name])
    banner = page.evaluate(LIVE_BANNER)
    page.close()
    band = noise_band(run)
    greedy, lookahead = (sum(map(seconds, m.steps)) for m in (run.baseline, run.parallel))
    speedup = greedy / lookahead
    verdict = "faster than" if speedup > band else "slower than" if speedup < 1 / band else "about as fast as"
    assert f"Lookahead ran at {speedup:.2f}x greedy's speed ({verdict} greedy)" in banner, banner
    if max(greedy, lookahead) <= band * min(greedy, lookahead):
        assert "finished about together" in banner, banner
        assert f"differences within {round(100 * (band - 1))}% are noise" in banner, banner
    else:
        first = "Lookahead" if lookahead < greedy else "Greedy"
        assert f"{first} finished first" in banner and "are noise" not in banner, banner


# A finished live race, pulled whole while the server's last word was still a running one, then told it is done with
# a note (markup in it, which must stay text), then done again with none: the race box's note each time.
LIVE_NOTE = """async () => {
    const run = window.ladeStage.run(), payload = { trace: run.t, derived: run.d };
    const host = document.createElement('div');
    document.body.appendChild(host);
    const source = { kind: 'server', load: async () => ({ payload: JSON.parse(JSON.stringify(payload)) }) };
    const stage = new Lade.stage.Stage(host, { boot: window.ladeStage.boot, source });
    const note = async (msg) => {
        await stage.apply(JSON.stringify(msg));
        await new Promise(r => setTimeout(r, 100));
        const shown = host.querySelector('.race-note');
        return shown ? shown.innerHTML : null;
    };
    const said = 'This race took 12.6 s on the engine, longer than the <b>11 s</b> the expected wait promised.';
    const notes = [
        await note({ live: 'live-x', status: 'Live race: lookahead at step 9.', n: 1 }),
        await note({ live: 'live-x', status: said, n: 2, done: true }),
        await note({ live: 'live-x', status: '', n: 3, done: true }),
    ];
    host.remove();
    return notes;
}"""


def test_a_finished_race_shows_the_servers_note_on_its_promise_only_when_told_it_is_done(chromium, exports):
    """A live race in CI took 12.6 s under "up to about 11 s" and the finished race box said nothing. The server's
    sentence on a done message now shows under the banner as text; a race pulled whole while the last word was a
    running status shows no note (the running status is not a note), nor does one whose done message has none."""
    page = open_export(chromium, exports["code-class-W7N4G7"])
    running, told, none = page.evaluate(LIVE_NOTE)
    page.close()
    assert running is None and none is None, (running, none)
    assert (
        told
        == "This race took 12.6 s on the engine, longer than the &lt;b&gt;11 s&lt;/b&gt; the expected wait promised."
    )


# A live run pulled whole twice under one handle (the race ended between two pulls): the second is a new object.
PULLED_TWICE = """async () => {
    const run = window.ladeStage.run(), first = { trace: run.t, derived: run.d };
    const second = JSON.parse(JSON.stringify(first));
    second.trace.title = 'the race as it ended';
    let pulls = 0;
    const host = document.createElement('div');
    document.body.appendChild(host);
    const copy = (p) => JSON.parse(JSON.stringify(p));
    const source = { kind: 'server', load: async () => ({ payload: copy(pulls++ ? second : first) }) };
    const stage = new Lade.stage.Stage(host, { boot: window.ladeStage.boot, source });
    await stage.apply(JSON.stringify({ live: 'live-x', status: 'Live race: step 1.', n: 1 }));
    await new Promise(r => setTimeout(r, 100));
    const before = host.querySelector('.run-title').textContent;
    await stage.apply(JSON.stringify({ live: 'live-x', status: 'Live race: done.', n: 2 }));
    await new Promise(r => setTimeout(r, 100));
    const after = host.querySelector('.run-title').textContent;
    host.remove();
    return [before, after, pulls];
}"""


def test_a_live_run_pulled_whole_again_is_drawn_afresh(chromium, exports):
    """The live run's header stayed at "1 token in 1 step" after the run ended: the page pulled the finished run
    whole, a new object at the same version number as the one drawn, and kept the old header. Now a run that is a
    new object is drawn afresh."""
    page = open_export(chromium, exports["code-class-W7N4G7"])
    before, after, pulls = page.evaluate(PULLED_TWICE)
    page.close()
    assert pulls == 2 and before != after and after.startswith("the race as it ended"), (before, after)


# A live race followed as it records: its lookahead lane one step short of its end beneath greedy's longer lane, then
# the race pulled whole once it ended, at the same clock step (greedy's last): what the live region says each time.
LIVE_NEWS = """async () => {
    const run = window.ladeStage.run(), copy = (p) => JSON.parse(JSON.stringify(p));
    const whole = copy({ trace: run.t, derived: run.d }), partial = copy(whole);
    const la = partial.trace.parallel, n = la.steps.length - 1;
    la.steps = la.steps.slice(0, n);
    la.tokens = la.steps.flatMap((s) => s.accepted);
    la.stop_reason = partial.trace.baseline.stop_reason = 'running';
    partial.derived.steps = partial.derived.steps.slice(0, n);
    let pulls = 0;
    const host = document.createElement('div');
    document.body.appendChild(host);
    const source = { kind: 'server', load: async () => ({ payload: copy(pulls++ ? whole : partial) }) };
    const stage = new Lade.stage.Stage(host, { boot: window.ladeStage.boot, source });
    const said = async () => { await new Promise((r) => setTimeout(r, 600)); return stage.liveRegion.textContent; };
    await stage.apply(JSON.stringify({ live: 'live-x', status: 'Live race: running.', n: 1 }));
    const before = await said();
    await stage.apply(JSON.stringify({ live: 'live-x', status: 'Live race: done.', n: 2, done: true }));
    const after = await said();
    host.remove();
    return [before, after, pulls];
}"""


def test_a_live_race_that_ends_beneath_greedy_announces_its_last_step(chromium, exports):
    """The step summary said "Lookahead step 30 … 34 tokens" beside "35 tokens in 32 steps": a live race's lookahead
    lane took its last step beneath greedy's longer lane, the clock step shown stayed greedy's last, and the page
    announced a step only when the clock step moved, so the news kept the lane as it stood a step before. Now the
    step shown is announced again when the run under it grows or is pulled whole: the news and the counter read
    the same numbers (`Run.numbers`)."""
    run = gallery.load("code-class-W7N4G7")
    assert len(run.baseline.steps) > len(run.parallel.steps)
    page = open_export(chromium, exports["code-class-W7N4G7"])
    before, after, pulls = page.evaluate(LIVE_NEWS)
    page.close()
    last, k = len(run.parallel.steps) - 1, len(run.baseline.steps) - 1

    def tokens(n: int) -> str:
        return f"{n} token{'' if n == 1 else 's'}"

    def news(i: int) -> str:
        return f"Step {k} of {k}. Lookahead step {i} accepted {tokens(len(run.parallel.steps[i].accepted))}"

    def written(i: int) -> str:
        return f"{tokens(sum(len(s.accepted) for s in run.parallel.steps[: i + 1]))} written so far."

    assert pulls == 2 and before.startswith(news(last - 1)) and before.endswith(written(last - 1)), before
    assert after.startswith(news(last)) and after.endswith(written(last)), after


def test_a_race_of_four_sets_each_lane_against_the_next(chromium, tmp_path):
    """A race of four (the lesson's relatives race, handed over as a finished live race): each method against
    greedy, then the finishing order lane by lane, each against the next, "about together" inside the band and by
    how much outside it."""
    from lesson_facts import lane_kind, noise_band, seconds

    from lade_core.config import METHOD_NAMES

    name = gallery.by_role("race")
    run = gallery.load(name)
    path = tmp_path / "race.html"
    path.write_text(render_html(run, name), encoding="utf-8")
    page = open_export(chromium, path)
    banner = page.evaluate(LIVE_BANNER)
    page.close()
    band = noise_band(run)
    times = sorted(
        [(METHOD_NAMES[lane_kind(lane)], sum(map(seconds, lane.run.steps))) for lane in run.all_lanes]
        + [("greedy", sum(map(seconds, run.baseline.steps)))],
        key=lambda x: x[1],
    )
    for i, ((ahead, t0), (nxt, t1)) in enumerate(zip(times, times[1:])):
        who = ahead[0].upper() + ahead[1:] if i == 0 else ahead
        said = (
            f"{who} and {nxt} finished about together"
            if t1 <= band * t0
            else f"{who} finished {'first, ' if i == 0 else ''}{t1 - t0:.2f} s"
        )
        assert said in banner, (said, banner)
    assert banner.count("greedy's speed") == len(times) - 1, banner


def test_a_race_the_budget_stopped_says_so_on_the_page(chromium, exports):
    """A live race the server's time limit stopped, drawn by the page itself (the race box, the output badge): each
    sentence as tests/test_race_end.py computes it from the trace, no success mark on a lane that did not finish,
    no "differs" of a lane that agrees as far as it got, and no accessibility violation in this state."""
    from test_a11y_browser import run_axe
    from test_race_end import cut, expected

    from app.render.payload import payload

    run = gallery.load("code-class-W7N4G7")
    run = dataclasses.replace(run, parallel=cut(run.parallel, 30, "budget"), baseline=cut(run.baseline, 45, "budget"))
    page = open_export(chromium, exports["code-class-W7N4G7"])
    page.evaluate(
        """data => { const s = window.ladeStage, run = new Lade.Run(data, 'live-x');
        s.runs.set('live-x', run);
        s.set({ mode: 'explorer', live: 'live-x', current: 'live-x', liveStatus: '', k: run.lastStep() }); }""",
        payload(run, lab=False),
    )
    title = page.inner_text("#race .race-title")
    assert title == " ".join(expected(run)), title
    assert "✓" not in page.inner_text("#race"), page.inner_text("#race")
    badge = page.inner_text("#la-output .badge")
    assert badge.startswith(f"= The same as greedy decoding over the {len(run.parallel.tokens)} tokens both wrote")
    assert run_axe(page, "race-stopped-by-the-budget") == []
    page.locator("#race").screenshot(path=str(SHOTS / "race-stopped-by-the-budget.png"))
    page.locator("#la-output").screenshot(path=str(SHOTS / "race-stopped-by-the-budget-output.png"))
    page.close()
