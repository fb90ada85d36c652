"""The views, built from the recorded runs in assets/runs/ without a server: what they show agrees with the trace."""

import re

import numpy as np
import pytest

from conftest_app import recorded_runs

from app import replay, views
from app.views.common import last_step
from lade_core.pool import NGramPool

RUNS = recorded_runs()
IDS = [name for name, _ in RUNS]


def test_runs_are_shipped():
    assert {"code-fib-W7N4G7", "chat-sleep-W7N4G7", "code-fib-t0.7-W7N4G7"} <= set(IDS)
    for _, run in RUNS:
        if not run.sampling.greedy:  # a sampled run (tests/test_views_sampling.py)
            continue
        assert run.lookahead.tokens == run.greedy.tokens  # greedy lookahead is exact
        assert (run.config.window, run.config.ngram, run.config.guess, run.max_new_tokens) == (7, 4, 7, 96)


@pytest.mark.parametrize("name,run", RUNS, ids=IDS)
def test_counter_numbers_match_the_trace(name, run):
    for k in range(0, last_step(run) + 1, 5):
        text = views.counter_text(run, k)
        la = re.search(r"Lookahead: steps=(\d+) tokens=(\d+)", text).groups()
        ar = re.search(r"(?:Greedy|Sampling): steps=(\d+) tokens=(\d+)", text).groups()
        la_steps = run.lookahead.steps[: min(k, len(run.lookahead.steps) - 1) + 1]
        assert (int(la[0]), int(la[1])) == (len(la_steps), sum(len(s.accepted) for s in la_steps))
        assert (int(ar[0]), int(ar[1])) == (min(k, len(run.greedy.steps) - 1) + 1,) * 2
        assert f"steps={int(la[0])}" in views.counter_html(run, k)


@pytest.mark.parametrize("name,run", RUNS, ids=IDS)
def test_outputs_show_the_tokens_up_to_the_step(name, run):
    k = replay.interesting_step(run)
    la_html = re.search(r'<div class="tok-text">(.*?)</div>', views.la_output_html(run, k), re.S).group(1)
    expected = [t for s in run.lookahead.steps[: k + 1] for t in s.accepted]
    assert la_html.count('class="tok ') == len(expected)
    assert la_html.count(" multi") == sum(len(s.accepted) for s in run.lookahead.steps[: k + 1] if len(s.accepted) > 1)
    assert views.ar_output_html(run, k).count('<span class="tok') == k + 1


@pytest.mark.parametrize("name,run", RUNS, ids=IDS)
def test_mask_heatmap_is_the_layout_mask(name, run):
    N, W = run.config.ngram, run.config.window
    for step in run.lookahead.steps:
        if step.kind != "lookahead":
            continue
        g = len(step.candidates)
        heat = views.mask_figure(run, step.index).data[0]
        z = np.array(heat.z)
        assert z.shape == ((W + g) * (N - 1) + 1,) * 2
        assert np.array_equal(z > 0, step.layout.mask())
        assert list(heat.x) == step.layout.labels()
        i, j = 1, 0
        assert heat.text[i][j] == step.layout.reason(i, j)


@pytest.mark.parametrize("name,run", RUNS, ids=IDS)
def test_pool_replay_matches_sizes_and_evictions(name, run):
    replayed = NGramPool(run.config.guess)
    for step in run.lookahead.steps:
        assert replayed.add_all(step.ngrams_added) == [tuple(n) for n in step.ngrams_evicted]
        assert len(replayed) == step.pool_size
        pool = views.pool_at(run, step.index)
        assert sum(len(v) for v in pool.values()) == step.pool_size
    step = next(s for s in run.lookahead.steps if s.candidates)
    before = views.pool_at(run, step.index - 1)
    assert before[step.input_token][: len(step.candidates)] == [tuple(c) for c in step.candidates]


@pytest.mark.parametrize("name,run", RUNS, ids=IDS)
def test_window_grid_shows_the_levels(name, run):
    step = run.lookahead.steps[replay.interesting_step(run)]
    html = views.window_html(run, step.index)
    cells = re.findall(r'<td class="cell[^"]*"[^>]*>([^<]*)</td>', html)
    expected = [t for level in (*step.levels_before, step.new_level) for t in level]
    assert len(cells) == len(expected)
    assert cells == [views.common.cell_text(run, t) for t in expected]
    assert html.count('<td class="cell new') == step.window


@pytest.mark.parametrize("name,run", RUNS, ids=IDS)
def test_verify_shows_the_winner_and_accepted_tokens(name, run):
    step = run.lookahead.steps[replay.interesting_step(run)]
    assert step.winner >= 0
    html = views.verify_html(run, step.index)
    assert f"★ candidate {step.winner + 1}" in html
    accepted = re.search(r'Accepted this step: (.*?)</div>', html).group(1)
    chips = re.findall(r'<span class="chip (?:added|bonus)"[^>]*>([^<]*)</span>', accepted)
    assert chips == [views.common.cell_text(run, t, 14) for t in step.accepted]
    assert len(chips) == step.match_lengths[step.winner] + 1


@pytest.mark.parametrize("name,run", RUNS, ids=IDS)
def test_every_view_renders_every_step(name, run):
    for k in range(0, last_step(run) + 1, 3):
        out = replay.render_step(run, k)
        assert len(out) == len(replay.VIEW_IDS)
    assert "1.8x" in views.honest_note_md(run) and "several GPUs" in views.honest_note_md(run)


def test_playback_resends_the_mask_only_when_the_layout_changes():
    run = dict(RUNS)["code-fib-W7N4G7"]
    for k in range(2, len(run.lookahead.steps)):
        same = run.lookahead.steps[k].layout == run.lookahead.steps[k - 1].layout
        assert ("mask-view" in replay.stale_views(run, k, k - 1)) == same


def test_tokens_per_forward():
    assert "**43**" in views.tokens_per_forward_md(7, 4, 7)
    assert "**28**" in views.tokens_per_forward_md(5, 4, 4)


def test_scaling_figures_draw_the_shipped_measurements():
    """Section 6 draws the cost curve and both sweeps exactly as measured (no point invented or dropped)."""
    curve = views.load_measurement("costcurve-cpu")
    line = views.cost_curve_figure(curve).data[0]
    assert list(line.x) == [p["tokens"] for p in curve["points"]]
    assert list(line.y) == pytest.approx([p["seconds"] / curve["greedy_s"] for p in curve["points"]])
    sweep, seeded = views.load_measurement("sweep"), views.load_measurement("sweep-seeded")
    lines = {t.name: t for t in views.sweep_figure(sweep, seeded).data}
    for data, suffix in ((sweep, ""), (seeded, ", seeded pool")):
        drawn = {(name, x, y) for name, t in lines.items() for x, y in zip(t.x, t.y)}
        want = {(f"N={p['ngram']}{suffix}", p["log2_tokens_per_step"], p["compression"]) for p in data["points"]}
        assert want <= drawn
    assert sum(len(t.x) for t in lines.values()) == len(sweep["points"]) + len(seeded["points"])
    assert {t.line.dash for name, t in lines.items() if "seeded" in name} == {"dash"}
    assert len(views.sweep_figure(sweep).data) == len({p["ngram"] for p in sweep["points"]})
    assert views.sweep_figure(None).data == () and views.cost_curve_figure(None).data == ()
