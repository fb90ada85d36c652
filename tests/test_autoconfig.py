"""`--auto`: the cost curve is read right, the ranking follows predicted tokens per second, and every configuration
the auto mode can choose (the swept ones) was measured exact on every benchmark prompt."""

import json
from pathlib import Path

import pytest

from lade_core import LookaheadConfig, greedy_generate, lookahead_generate
from lade_core.autoconfig import SEEDED_SWEEP_PATH, SWEEP_PATH, auto_config, load_sweeps, rank_configs
from lade_core.costcurve import cost_at

CURVE = {"greedy_s": 1.0, "points": [{"tokens": 1, "seconds": 1.0}, {"tokens": 10, "seconds": 2.0},
                                     {"tokens": 100, "seconds": 11.0}]}


def _point(w, n, compression, fed):
    return {"window": w, "ngram": n, "guess": w, "compression": compression, "mean_tokens_fed": fed}


def test_cost_at_interpolates_and_extrapolates():
    assert cost_at(CURVE, 1) == 1.0 and cost_at(CURVE, 10) == 2.0
    assert cost_at(CURVE, 55) == pytest.approx(6.5)
    assert cost_at(CURVE, 200) == pytest.approx(21.0)  # last slope, 0.1 s per token


def test_ranking_is_by_compression_over_step_cost():
    sweep = {"points": [_point(1, 2, 1.2, 1), _point(4, 3, 1.8, 10), _point(32, 6, 3.0, 100)]}
    ranked = rank_configs(sweep, CURVE)
    # predicted speed-ups: 1.2 / 1 = 1.2, 1.8 / 2 = 0.9, 3.0 / 11 = 0.27
    assert [(p["window"], round(p["predicted_speedup"], 2)) for p in ranked] == [(1, 1.2), (4, 0.9), (32, 0.27)]
    flat = {"greedy_s": 1.0, "points": [{"tokens": 1, "seconds": 1.0}, {"tokens": 400, "seconds": 1.1}]}
    assert rank_configs(sweep, flat)[0]["window"] == 32  # where extra tokens are free, the widest window wins


def test_seeding_is_part_of_the_choice_unless_fixed():
    plain, seeded = _point(2, 3, 1.3, 5), {**_point(2, 3, 1.5, 5), "pool_from_prompt": True}
    sweep = {"points": [plain, seeded]}
    assert rank_configs(sweep, CURVE)[0]["pool_from_prompt"] is True
    assert [p["pool_from_prompt"] for p in rank_configs(sweep, CURVE, pool_from_prompt=False)] == [False]
    assert [p["compression"] for p in rank_configs(sweep, CURVE, pool_from_prompt=True)] == [1.5]


@pytest.mark.parametrize("path", [SWEEP_PATH, SEEDED_SWEEP_PATH], ids=["plain", "seeded"])
def test_every_choosable_configuration_was_exact(path):
    sweep = json.loads(Path(path).read_text())
    assert len(sweep["points"]) >= 20 and len(sweep["prompts"]) == 8
    assert sweep.get("pool_from_prompt", False) == (path == SEEDED_SWEEP_PATH)
    assert all(p["exact"] for p in sweep["points"]), [p for p in sweep["points"] if not p["exact"]]
    assert all(p in load_sweeps()["points"] for p in ({"pool_from_prompt": False, **q} for q in sweep["points"]))


def test_the_configuration_auto_picks_here_is_exact(lm, bench_prompts):
    config = auto_config(lm)
    assert isinstance(config, LookaheadConfig)
    for p in bench_prompts[:2]:
        ids = lm.encode_prompt(p["prompt"])
        assert lookahead_generate(lm, ids, config, 32).tokens == greedy_generate(lm, ids, 32).tokens
