"""Auto: pick W, N, G (and the pool policy) for this device, to maximise tokens per second.

Expected speed-up of a configuration = compression / (step cost / greedy step cost). Compression comes from the
saved sweeps (assets/sweep-<pool>.json, measured on the benchmark prompts), step cost from the device's cost curve
(assets/costcurve-<device>.json, or one measured now), read at the number of tokens such a step really feeds on
average. Every prediction carries its spread: the same ratio for each benchmark prompt's own compression, so Auto
says "1.28x (0.98x to 1.61x over the 8 prompts)", not one number. A GPU, where extra tokens are nearly free, gets a
wide window; a CPU gets a narrow one. The curve is this machine's own (`calibrate.calibrated_curve`: measured here
once, about 10 s, and cached per machine, model, dtype, kernels and threads), never one measured elsewhere. The
sweeps were measured with the default model; for another model they stand in as an estimate. Where the engine runs
(`choose`), the best swept setting then meets adaptive sizes, whose steps the curve chooses so that no sweep can stand
for them: both run here on the benchmark prompts for 128 tokens on this curve (`auto_trial`), and the one predicted
faster is the choice. The browser's Auto and the app's propose among the swept settings only (`best`): their live
runs take fixed sizes.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from ..config import LookaheadConfig
from ..paths import measurement
from ..sizes import StepCost
from .costcurve import step_cost

SWEEPS = tuple(measurement(f"sweep-{pool}") for pool in ("paper", "output", "prompt"))
FIGURES = ("window", "ngram", "guess", "pool", "adaptive", "compression", "step_cost", "predicted_speedup_median")


def predict_point(point: dict, cost: StepCost) -> dict:
    """A sweep point with its step cost and predicted speed-up: the mean, and the range and median over prompts.
    A swept setting's step cost is read at the tokens its steps fed on average; a point run here (`auto_trial`)
    brings every step's tokens fed, and its cost is their mean cost, by prompt and over all (a prompt whose run had
    no step after the prompt's own forward costs the mean)."""
    fed = point.get("fed_by_prompt")
    if fed:  # by prompt: (the steps' summed cost, their number)
        sums = {p: (sum(cost(int(n)) * k for n, k in sizes.items()), sum(sizes.values())) for p, sizes in fed.items()}
        by_prompt = {p: c / k for p, (c, k) in sums.items() if k}
        steps = sum(k for _, k in sums.values())
        relative = sum(c for c, _ in sums.values()) / steps if steps else cost(1)
    else:
        relative = cost(point["mean_tokens_fed"])
        by_prompt = {}
    compression = point.get("compression_by_prompt", {})
    per_prompt = sorted(c / by_prompt.get(p, relative) for p, c in compression.items())
    mean = point["compression"] / relative
    return {
        **point,
        "step_cost": relative,
        "predicted_speedup": mean,
        "predicted_speedup_range": [per_prompt[0], per_prompt[-1]] if per_prompt else [mean, mean],
        "predicted_speedup_median": statistics.median(per_prompt) if per_prompt else mean,
    }


def rank_configs(points: list[dict], cost: StepCost, pool: str | None = None) -> list[dict]:
    """Every swept configuration with its predicted speed-up, best first (by the median over prompts, so that one
    repetitive prompt does not pick the setting; a tie, as two pools can give at a narrow window, goes to the higher
    mean); `pool` keeps only the points of that policy (None: all)."""
    ranked = [predict_point(p, cost) for p in points if pool is None or p["pool"] == pool]
    return sorted(ranked, key=lambda p: (-round(p["predicted_speedup_median"], 3), -p["predicted_speedup"]))


def load_sweeps(paths=SWEEPS) -> list[dict]:
    """The points of every saved sweep, each with its sweep's pool, token budget and file."""
    points = []
    for path in map(Path, paths):
        if path.exists():
            sweep = json.loads(path.read_text(encoding="utf-8"))
            points += [
                {**p, "pool": sweep["pool"], "max_new_tokens": sweep["max_new_tokens"], "file": f"assets/{path.name}"}
                for p in sweep["points"]
            ]
    return points


def curve_for(lm) -> dict:
    """This machine's cost curve for `lm`'s device, model, dtype, kernels and threads: cached, or measured now
    (about 10 s on a 2-core CPU) and cached; labelled with its source and machine. Callers that serve many
    requests keep it."""
    from .calibrate import calibrated_curve

    return calibrated_curve(lm)


def best(points: list[dict], curve: dict, pool: str | None = None) -> dict:
    """The best swept configuration under `curve`, with its prediction and spread, and which curve it was read
    off (`cost_curve`: its source and machine, where the curve says)."""
    ranked = rank_configs(points, step_cost(curve), pool)
    if not ranked:
        which = f"{pool} " if pool else ""
        raise ValueError(f"no {which}sweep to choose from: run `python -m lade_core sweep --pool {pool or 'prompt'}`")
    keys = ("source", "machine_description", "threads", "kernels", "measured_at", "cached_at")
    return {**ranked[0], "cost_curve": {k: curve[k] for k in keys if k in curve}}


def choose(lm, curve: dict, pool: str | None = None, points: list[dict] | None = None, **trial) -> dict:
    """Auto's choice for `lm` on `curve`: the best swept setting (`best`, of `pool` if given), then it and adaptive
    sizes run here on the benchmark prompts for `auto_trial.TOKENS` new tokens (`auto_trial.duel`; `trial` may name
    other prompts, a budget, or the tree and lookup settings both run with); the one predicted faster, with that
    run's prediction, the swept setting with its sweep's prediction (`swept_choice`), and both contenders' figures in
    the duel (`duel`, the choice first)."""
    from .auto_trial import duel

    top = best(load_sweeps() if points is None else points, curve, pool)
    ran = duel(lm, curve, top, pool, **trial)
    figures = [{k: p.get(k, False) for k in FIGURES} for p in rank_configs(ran, step_cost(curve))]
    return {**best(ran, curve), "swept_choice": {k: top.get(k, False) for k in FIGURES}, "duel": figures}


def auto_config(choice: dict, window_seed: int = 0) -> LookaheadConfig:
    """The configuration of a ranked point: a swept setting, or adaptive sizes within its W, N, G."""
    return LookaheadConfig(
        choice["window"],
        choice["ngram"],
        choice["guess"],
        pool=choice["pool"],
        adaptive=bool(choice.get("adaptive")),
        window_seed=window_seed,
    )
