"""`--auto`: pick W, N, G for this device, to maximise tokens per second.

Expected speed-up of a configuration = compression / (step cost / greedy step cost). Compression comes from the
recorded sweeps (`assets/sweep.json` and, with prompt-seeded pools, `assets/sweep-seeded.json`, measured on the
shared prompts); step cost from the device's cost curve
(`assets/costcurve-<device>.json`, measured with `python -m lade_core costcurve`, or measured now if missing),
read at the number of tokens such a step really feeds on average. A GPU, where extra tokens are nearly free, gets a
wide window; a CPU gets a narrow one. A saved curve is used only for the model, dtype and kernels it was measured
with. The sweeps were measured with the default model; for another model they stand in as an estimate.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from .config import LookaheadConfig
from .costcurve import ASSETS, cost_at, default_curve_path, measure_cost_curve
from .kernels import KERNELS
from .loading import prepack_enabled

SWEEP_PATH = ASSETS / "sweep.json"
SEEDED_SWEEP_PATH = ASSETS / "sweep-seeded.json"


def rank_configs(sweep: dict, curve: dict, pool_from_prompt: bool | None = None) -> list[dict]:
    """Every swept configuration with its predicted speed-up, best first; `pool_from_prompt` True or False keeps
    only the seeded or the unseeded ones (None: both)."""
    ranked = []
    for point in sweep["points"]:
        point = {"pool_from_prompt": False, **point}
        if pool_from_prompt is not None and point["pool_from_prompt"] != pool_from_prompt:
            continue
        cost = cost_at(curve, point["mean_tokens_fed"]) / curve["greedy_s"]
        ranked.append({**point, "step_cost": cost, "predicted_speedup": point["compression"] / cost})
    return sorted(ranked, key=lambda p: -p["predicted_speedup"])


def load_sweeps(paths=(SWEEP_PATH, SEEDED_SWEEP_PATH)) -> dict:
    """The points of every sweep file that exists, as one sweep (the first one must exist)."""
    points = []
    for i, path in enumerate(map(Path, paths)):
        if i == 0 or path.exists():
            sweep = json.loads(path.read_text())
            flag = bool(sweep.get("pool_from_prompt", False))
            points += [{"pool_from_prompt": flag, **p} for p in sweep["points"]]
    return {"points": points}


def shipped_curve(device: str, model_name: str, dtype: str = "float32", kernels: str | None = None) -> dict | None:
    """The saved cost curve of this kind of device, if it was measured with this model, dtype and kernels (the
    kernels `load_model` would pick when None); else None."""
    path = default_curve_path(device)
    if not path.exists():
        return None
    if kernels is None:
        kind = torch.device(device)
        kernels = KERNELS if prepack_enabled(kind, getattr(torch, dtype)) else "stock"
    curve = json.loads(path.read_text())
    same = (curve.get("model"), curve.get("dtype"), curve.get("kernels", "stock")) == (model_name, dtype, kernels)
    return curve if same else None


def load_curve(lm) -> dict:
    """The saved cost curve for `lm`'s device, model and kernels, or one measured now (about a minute on a CPU)."""
    dtype = str(lm.dtype).removeprefix("torch.")
    return (shipped_curve(str(lm.device), lm.name, dtype, lm.kernels)
            or measure_cost_curve(lm, sizes=(1, 4, 8, 16, 32, 64, 128, 256), repeats=3))


def _best(ranked: list[dict], pool_from_prompt: bool | None) -> dict:
    if not ranked:
        which = {True: "prompt-seeded ", False: "plain "}.get(pool_from_prompt, "")
        raise ValueError(f"no {which}sweep to choose from: run `python -m lade_core sweep"
                         f"{' --pool-from-prompt' if pool_from_prompt else ''}` first")
    return ranked[0]


def predict(lm, pool_from_prompt: bool | None = None, sweep_paths=(SWEEP_PATH, SEEDED_SWEEP_PATH)) -> dict:
    """The best swept configuration on `lm`'s device, with its compression, step cost and predicted speed-up."""
    return _best(rank_configs(load_sweeps(sweep_paths), load_curve(lm), pool_from_prompt), pool_from_prompt)


def predict_shipped(device: str, model_name: str, sweep_paths=(SWEEP_PATH, SEEDED_SWEEP_PATH)) -> dict | None:
    """`predict` from saved measurements only (no model needed); None where this device, model and kernels have no
    saved cost curve, or there is no sweep."""
    curve = shipped_curve(device, model_name)
    if curve is None or not Path(sweep_paths[0]).exists():
        return None
    ranked = rank_configs(load_sweeps(sweep_paths), curve)
    return ranked[0] if ranked else None


def auto_config(lm, pool_from_prompt: bool | None = None, seed: int = 0,
                sweep_paths=(SWEEP_PATH, SEEDED_SWEEP_PATH)) -> LookaheadConfig:
    """The configuration with the best predicted tokens per second on `lm`'s device; whether to seed the pool is
    part of the choice unless `pool_from_prompt` fixes it."""
    best = predict(lm, pool_from_prompt, sweep_paths)
    return LookaheadConfig(best["window"], best["ngram"], best["guess"], best["pool_from_prompt"], seed)
