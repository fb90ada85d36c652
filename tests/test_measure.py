"""Measurements: the step cost is read right, Auto ranks by the median predicted speed-up over prompts and says its
spread, and every configuration Auto can choose (the swept ones) was measured exact on every benchmark prompt."""

import json

import pytest

from lade_core import LookaheadConfig, StepCost, lookahead_generate
from lade_core.measure import autoconfig
from lade_core.measure.autoconfig import SWEEPS, load_sweeps, predict_point, rank_configs

COST = StepCost(((1, 1.0), (10, 2.0), (100, 11.0)))


def _point(w, n, compression, fed, pool="paper", by_prompt=None):
    return {
        "window": w,
        "ngram": n,
        "guess": w,
        "compression": compression,
        "mean_tokens_fed": fed,
        "pool": pool,
        "compression_by_prompt": by_prompt or {"a": compression},
    }


def test_step_cost_interpolates_and_extrapolates():
    assert COST(1) == 1.0 and COST(10) == 2.0
    assert COST(55) == pytest.approx(6.5)
    assert COST(200) == pytest.approx(21.0)  # the last slope, 0.1 per token
    assert StepCost.from_seconds([(2, 0.02), (8, 0.04)], 0.02).points == ((1, 1.0), (2, 1.0), (8, 2.0))


def test_ranking_is_by_compression_over_step_cost():
    points = [_point(1, 2, 1.2, 1), _point(4, 3, 1.8, 10), _point(32, 6, 3.0, 100)]
    ranked = rank_configs(points, COST)
    # predicted speed-ups: 1.2 / 1 = 1.2, 1.8 / 2 = 0.9, 3.0 / 11 = 0.27
    assert [(p["window"], round(p["predicted_speedup"], 2)) for p in ranked] == [(1, 1.2), (4, 0.9), (32, 0.27)]
    flat = StepCost(((1, 1.0), (400, 1.1)))
    assert rank_configs(points, flat)[0]["window"] == 32  # where extra tokens are free, the widest window wins


def test_every_prediction_carries_the_spread_over_prompts():
    """Auto says "1.28x (0.98x to 1.61x)", not one number: the range is each prompt's compression at the same cost,
    and the ranking uses the median, so one repetitive prompt cannot pick the setting."""
    point = _point(2, 3, 1.5, 10, by_prompt={"a": 1.0, "b": 1.2, "c": 4.0})
    p = predict_point(point, COST)
    assert p["predicted_speedup_range"] == [0.5, 2.0] and p["predicted_speedup_median"] == pytest.approx(0.6)
    loop = _point(4, 3, 2.0, 10, by_prompt={"a": 1.0, "b": 1.0, "c": 4.0})
    steady = _point(2, 3, 1.6, 10, by_prompt={"a": 1.5, "b": 1.6, "c": 1.7})
    assert rank_configs([loop, steady], COST)[0]["window"] == 2  # by mean the loop (W=4) would win


def test_the_pool_policy_is_part_of_the_choice_unless_fixed():
    plain, seeded = _point(2, 3, 1.3, 5), _point(2, 3, 1.5, 5, pool="prompt")
    assert rank_configs([plain, seeded], COST)[0]["pool"] == "prompt"
    assert [p["pool"] for p in rank_configs([plain, seeded], COST, pool="paper")] == ["paper"]


def test_the_sweeps_auto_chooses_from_are_shipped():
    """The paper's pool and the default (prompt) pool are shipped; an output-pool sweep is used when someone runs it."""
    assert {p.stem for p in SWEEPS if p.exists()} >= {"sweep-paper", "sweep-prompt"}


@pytest.mark.parametrize("path", [p for p in SWEEPS if p.exists()], ids=lambda p: p.stem)
def test_every_choosable_configuration_was_exact(path):
    sweep = json.loads(path.read_text())
    assert len(sweep["points"]) >= 20 and len(sweep["prompts"]) == 8
    assert all(p["exact"] for p in sweep["points"]), [p for p in sweep["points"] if not p["exact"]]
    assert all(p["pool"] == sweep["pool"] for p in sweep["points"])


def test_at_least_the_paper_and_the_default_policies_are_swept():
    pools = {p["pool"] for p in load_sweeps()}
    assert {"paper", LookaheadConfig().pool} <= pools


@pytest.mark.model
def test_the_configuration_auto_picks_here_is_exact(lm, bench_prompts, greedy):
    choice = autoconfig.best(load_sweeps(), autoconfig.curve_for(lm))
    config = autoconfig.auto_config(choice)
    low, high = choice["predicted_speedup_range"]
    assert low <= choice["predicted_speedup_median"] <= high
    for p in bench_prompts[:2]:
        ids = lm.encode_prompt(p["prompt"])
        assert lookahead_generate(lm, ids, config, 32).tokens == greedy(p["id"], 32)
