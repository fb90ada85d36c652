"""`--auto`: pick W, N, G for this device, to maximise tokens per second.

Expected speed-up of a configuration = compression / (step cost / greedy step cost). Compression comes from the
recorded sweep (`assets/sweep.json`, measured on the shared prompts); step cost from the device's cost curve
(`assets/costcurve-<device>.json`, measured with `python -m lade_core costcurve`, or measured now if missing),
read at the number of tokens such a step really feeds on average. A GPU, where extra tokens are nearly free, gets a
wide window; a CPU gets a narrow one.
"""

from __future__ import annotations

import json
from pathlib import Path

from .config import LookaheadConfig
from .costcurve import ASSETS, cost_at, default_curve_path, measure_cost_curve

SWEEP_PATH = ASSETS / "sweep.json"


def rank_configs(sweep: dict, curve: dict) -> list[dict]:
    """Every swept configuration with its predicted speed-up, best first."""
    ranked = []
    for point in sweep["points"]:
        cost = cost_at(curve, point["mean_tokens_fed"]) / curve["greedy_s"]
        ranked.append({**point, "step_cost": cost, "predicted_speedup": point["compression"] / cost})
    return sorted(ranked, key=lambda p: -p["predicted_speedup"])


def load_curve(lm) -> dict:
    path = default_curve_path(str(lm.device))
    if path.exists():
        curve = json.loads(path.read_text())
        if curve.get("model") == lm.name:
            return curve
    return measure_cost_curve(lm, sizes=(1, 4, 8, 16, 32, 64, 128, 256), repeats=3)


def predict(lm, sweep_path: Path = SWEEP_PATH) -> dict:
    """The best swept configuration on `lm`'s device, with its compression, step cost and predicted speed-up."""
    sweep = json.loads(Path(sweep_path).read_text())
    return rank_configs(sweep, load_curve(lm))[0]


def auto_config(lm, pool_from_prompt: bool = False, seed: int = 0, sweep_path: Path = SWEEP_PATH) -> LookaheadConfig:
    """The configuration with the best predicted tokens per second on `lm`'s device."""
    best = predict(lm, sweep_path)
    return LookaheadConfig(best["window"], best["ngram"], best["guess"], pool_from_prompt, seed)
