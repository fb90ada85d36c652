"""Auto: pick W, N, G (and the pool policy) for this device, to maximise tokens per second.

Expected speed-up of a configuration = compression / (step cost / greedy step cost). Compression comes from the
saved sweeps (assets/sweep-<pool>.json, measured on the benchmark prompts), step cost from the device's cost curve
(assets/costcurve-<device>.json, or one measured now), read at the number of tokens such a step really feeds on
average. Every prediction carries its spread: the same ratio for each benchmark prompt's own compression, so Auto
says "1.28x (0.98x to 1.61x over the 8 prompts)", not one number. A GPU, where extra tokens are nearly free, gets a
wide window; a CPU gets a narrow one. A saved curve is used only for the model, dtype and kernels it was measured
with. The sweeps were measured with the default model; for another model they stand in as an estimate.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from ..config import LookaheadConfig
from ..paths import measurement
from ..sizes import StepCost
from .costcurve import curve_path, load_curve_file, measure_cost_curve, step_cost

SWEEPS = tuple(measurement(f"sweep-{pool}") for pool in ("paper", "output", "prompt"))
AUTO_SIZES = (1, 4, 8, 16, 32, 64, 128, 256)  # a quick curve, when none was saved for this device


def predict_point(point: dict, cost: StepCost) -> dict:
    """A sweep point with its step cost and predicted speed-up: the mean, and the range and median over prompts."""
    relative = cost(point["mean_tokens_fed"])
    per_prompt = sorted(c / relative for c in point.get("compression_by_prompt", {}).values())
    mean = point["compression"] / relative
    return {**point, "step_cost": relative, "predicted_speedup": mean,
            "predicted_speedup_range": [per_prompt[0], per_prompt[-1]] if per_prompt else [mean, mean],
            "predicted_speedup_median": statistics.median(per_prompt) if per_prompt else mean}


def rank_configs(points: list[dict], cost: StepCost, pool: str | None = None) -> list[dict]:
    """Every swept configuration with its predicted speed-up, best first (by the median over prompts, so that one
    repetitive prompt does not pick the setting); `pool` keeps only the points of that policy (None: all)."""
    ranked = [predict_point(p, cost) for p in points if pool is None or p["pool"] == pool]
    return sorted(ranked, key=lambda p: -p["predicted_speedup_median"])


def load_sweeps(paths=SWEEPS) -> list[dict]:
    """The points of every saved sweep."""
    points = []
    for path in map(Path, paths):
        if path.exists():
            sweep = json.loads(path.read_text(encoding="utf-8"))
            points += [{**p, "pool": sweep["pool"]} for p in sweep["points"]]
    return points


def shipped_curve(device: str, model_name: str, dtype: str = "float32", kernels: str | None = None) -> dict | None:
    """The saved cost curve of this kind of device, if it was measured with this model, dtype and kernels (the
    kernels `load_model` would pick when None); else None."""
    curve = load_curve_file(curve_path(device))
    if curve is None:
        return None
    if kernels is None:  # the kernels `load_model` would pick (this loads torch: only when asked)
        import torch

        from ..kernels import KERNELS
        from ..loading import prepack_enabled

        kernels = KERNELS if prepack_enabled(torch.device(device), getattr(torch, dtype)) else "stock"
    same = (curve.get("model"), curve.get("dtype"), curve.get("kernels", "stock")) == (model_name, dtype, kernels)
    return curve if same else None


def curve_for(lm) -> dict:
    """The saved cost curve for `lm`'s device, model and kernels, or a quick one measured now (about half a minute
    on a CPU; callers that serve many requests keep it)."""
    dtype = str(lm.dtype).removeprefix("torch.")
    return shipped_curve(str(lm.device), lm.name, dtype, lm.kernels) or measure_cost_curve(lm, AUTO_SIZES, repeats=3)


def best(points: list[dict], curve: dict, pool: str | None = None) -> dict:
    """The best swept configuration under `curve`, with its prediction and spread."""
    ranked = rank_configs(points, step_cost(curve), pool)
    if not ranked:
        which = f"{pool} " if pool else ""
        raise ValueError(f"no {which}sweep to choose from: run `python -m lade_core sweep --pool {pool or 'prompt'}`")
    return ranked[0]


def auto_config(choice: dict, window_seed: int = 0) -> LookaheadConfig:
    """The configuration of a ranked sweep point."""
    return LookaheadConfig(choice["window"], choice["ngram"], choice["guess"], pool=choice["pool"],
                           window_seed=window_seed)
