"""Measurements: the step cost is read right, Auto ranks by the median predicted speed-up over prompts and says its
spread, every swept configuration Auto can choose was measured exact on every benchmark prompt, and adaptive sizes
meet the best of them on this machine's curve, weighed by what their steps fed, run here once and kept beside it."""

import json

import pytest

from lade_core import LookaheadConfig, StepCost, lookahead_generate
from lade_core.measure import auto_trial, autoconfig
from lade_core.measure.autoconfig import SWEEPS, load_sweeps, predict_point, rank_configs
from lade_core.measure.costcurve import step_cost

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


def _adaptive(by_prompt: dict, fed: dict) -> dict:
    """A point as `auto_trial` keeps it (its counts' keys are strings once read back from JSON)."""
    compression = sum(by_prompt.values()) / len(by_prompt)
    return {
        **_point(7, 4, compression, 0.0, pool="prompt", by_prompt=by_prompt),
        "adaptive": True,
        "fed_by_prompt": fed,
    }


def test_adaptive_sizes_are_weighed_by_every_step_they_fed():
    """A step's cost is read at the tokens it fed, then averaged: on a curve that bends up, a mix of narrow and wide
    steps costs more than a step of their mean width, and each prompt is weighed by its own steps."""
    point = _adaptive({"a": 1.5, "b": 3.0}, {"a": {"1": 2, "10": 2}, "b": {"10": 4}})
    p = predict_point(point, COST)
    assert p["step_cost"] == pytest.approx((2 * 1.0 + 6 * 2.0) / 8)  # COST at 10 tokens is 2.0
    assert p["predicted_speedup"] == pytest.approx(2.25 / 1.75)
    assert p["predicted_speedup_range"] == pytest.approx([1.0, 1.5])  # a: 1.5 / 1.5, b: 3.0 / 2.0
    bent = StepCost(((1, 1.0), (5, 1.0), (10, 3.0)))
    assert predict_point(_adaptive({"a": 2.0}, {"a": {"1": 1, "9": 1}}), bent)["step_cost"] > bent(5)


def test_the_duel_goes_to_adaptive_sizes_where_they_are_predicted_faster_and_auto_runs_them_so():
    fixed = _point(1, 2, 1.2, 3, pool="prompt", by_prompt={"a": 1.2, "b": 1.2})
    adaptive = _adaptive({"a": 1.6, "b": 1.4}, {"a": {"1": 5, "4": 5}, "b": {"1": 9, "8": 1}})
    steep, flat = StepCost(((1, 1.0), (2, 1.3), (10, 3.0))), StepCost(((1, 1.0), (100, 1.05)))
    assert rank_configs([fixed, adaptive], steep)[0].get("adaptive")
    config = autoconfig.auto_config(rank_configs([fixed, adaptive], steep)[0])
    assert config.adaptive and (config.window, config.ngram, config.guess, config.pool) == (7, 4, 7, "prompt")
    wide = _point(32, 5, 3.0, 200, pool="prompt", by_prompt={"a": 3.0, "b": 3.0})
    assert not autoconfig.auto_config(rank_configs([fixed, adaptive, wide], flat)[0]).adaptive


def test_auto_chooses_by_a_duel_of_the_best_swept_setting_and_adaptive_sizes(monkeypatch):
    """`choose` hands the best swept setting (of the pool asked for) and the trial's arguments to the duel, and
    returns the contender predicted faster, with both contenders' figures, the choice first."""
    seen = {}

    def duel(lm, curve, top, pool, **trial):
        seen.update(top=(top["window"], top["pool"]), pool=pool, trial=trial)
        return [{**top, "fed_by_prompt": {"a": {"4": 2}}}, _adaptive({"a": 1.9}, {"a": {"1": 1, "10": 1}})]

    monkeypatch.setattr(auto_trial, "duel", duel)
    curve = {"greedy_s": 0.01, "points": [{"tokens": 1, "seconds": 0.01}, {"tokens": 10, "seconds": 0.02}]}
    swept = [_point(1, 2, 1.2, 2, pool="prompt"), _point(2, 2, 1.3, 4, pool="paper")]
    choice = autoconfig.choose("lm", curve, "paper", swept, tokens=16, lookup=3)
    assert seen == {"top": (2, "paper"), "pool": "paper", "trial": {"tokens": 16, "lookup": 3}}
    # adaptive: 1.9 over (1 + 2) / 2 = 1.27; swept: 1.3 over the cost at 4 tokens, 1 + 3/9 = 1.33, so 0.98
    assert choice["adaptive"] and choice["predicted_speedup_median"] == pytest.approx(1.9 / 1.5)
    assert [d["adaptive"] for d in choice["duel"]] == [True, False] and choice["swept_choice"]["window"] == 2
    assert choice["duel"][1]["predicted_speedup_median"] == pytest.approx(1.3 / (1 + 3 / 9))


@pytest.mark.model
def test_the_duel_is_run_once_per_curve_and_kept_beside_it(lm, tmp_path, monkeypatch, bench_prompts):
    curve = {
        "greedy_s": 0.02,
        "points": [{"tokens": 1, "seconds": 0.02}, {"tokens": 8, "seconds": 0.03}, {"tokens": 32, "seconds": 0.08}],
        "measured_at": "2026-12-06T00:00:00",
        "cached_at": str(tmp_path / "m-model-float32-stock-1t-curve.json"),
    }
    prompts = [p for p in bench_prompts if p["id"] in ("code-fib", "chat-sleep")]
    swept = _point(2, 2, 1.0, 4.0, pool="prompt")
    fixed, adaptive = auto_trial.duel(lm, curve, swept, prompts=prompts, tokens=12)
    assert (fixed["window"], fixed["ngram"], fixed["guess"], fixed["pool"]) == (2, 2, 2, "prompt")
    assert not fixed["adaptive"] and adaptive["adaptive"] and adaptive["pool"] == LookaheadConfig().pool
    for point in (fixed, adaptive):  # both weighed by every step after the prompt's own, by tokens fed
        assert set(point["fed_by_prompt"]) == {"code-fib", "chat-sleep"}
        for pid, counts in point["fed_by_prompt"].items():
            assert point["compression_by_prompt"][pid] == pytest.approx(12 / (sum(counts.values()) + 1))
    assert {int(n) for n in fixed["fed_by_prompt"]["code-fib"]} <= set(range(1, 1 + (2 + 2) * 1 + 1))
    kept = auto_trial.kept_path(curve)
    assert kept.exists() and not kept.name.endswith("-curve.json")  # never read as a curve (machine.cached_curves)

    def run_again(lm, curve, config, prompts, tokens):
        return {"again": True}

    monkeypatch.setattr(auto_trial, "measure", run_again)
    assert auto_trial.duel(lm, curve, swept, prompts=prompts, tokens=12) == [fixed, adaptive]  # read back
    assert auto_trial.duel(lm, {**curve, "measured_at": "later"}, swept, prompts=prompts, tokens=12)[0]["again"]
    assert auto_trial.duel(lm, curve, swept, prompts=prompts, tokens=16)[0]["again"]  # another budget
    edited = [{**prompts[0], "prompt": prompts[0]["prompt"] + " Briefly."}, prompts[1]]
    assert auto_trial.duel(lm, curve, swept, prompts=edited, tokens=12)[0]["again"]  # another text, same id
    kept.write_text("{not json")
    assert auto_trial.duel(lm, curve, swept, prompts=prompts, tokens=12)[0]["again"]
    assert auto_trial.duel(lm, {**curve, "cached_at": None}, swept, prompts=prompts, tokens=12)[0]["again"]


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
def test_the_configuration_auto_picks_here_is_exact(lm, bench_prompts, greedy, tmp_path):
    """Whatever Auto picks on this machine's curve, the best swept setting or adaptive sizes (its duel here shortened
    to two prompts and 32 tokens, and kept aside, not beside the machine's curve), is greedy's output."""
    curve = {**autoconfig.curve_for(lm), "cached_at": str(tmp_path / "here-curve.json")}
    choice = autoconfig.choose(lm, curve, prompts=bench_prompts[:2], tokens=32)
    config = autoconfig.auto_config(choice)
    low, high = choice["predicted_speedup_range"]
    assert low <= choice["predicted_speedup_median"] <= high
    winner, other = choice["duel"]  # both contenders' figures, the choice first
    assert winner["adaptive"] != other["adaptive"] and winner["adaptive"] == config.adaptive
    assert round(winner["predicted_speedup_median"], 3) >= round(other["predicted_speedup_median"], 3)
    for p in bench_prompts[:2]:
        ids = lm.encode_prompt(p["prompt"])
        run = lookahead_generate(lm, ids, config, 32, step_cost=step_cost(curve))
        assert run.tokens == greedy(p["id"], 32)
