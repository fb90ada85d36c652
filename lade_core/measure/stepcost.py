"""What one lookahead step costs on a target: a modelled GPU and model size (the roofline, with its bounds), or this
CPU (its measured curves). The cost is the step's forward, on the busiest of k devices when the step is dealt out
(plus the exchange), against a one-token greedy forward of the same batch on one device.

A GPU's cost comes at the roofline's mid assumptions with low and high the extremes over the corners of its
bounds; this CPU's at the median of the timing rounds with low and high at their quartiles. Left out: everything a
step does besides its forward (lab.py says what the predictions leave out).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ..shares import busiest, deal, payload
from .calibrate import lab_cpu_curves
from .costcurve import step_cost as curve_cost
from .roofline import (
    ASSUME,
    BOUNDS,
    Assumptions,
    Bounds,
    ModelShape,
    accelerator,
    forward_seconds,
    model_shape,
    seconds,
)

CONTEXT = 512  # KV positions when a caller gives none: a prompt and a short answer


@dataclass(frozen=True)
class Target:
    """What a prediction is for: a modelled GPU and model size, or "cpu" (this machine's measured curves, taken
    with SmolLM2-135M only)."""

    device: str
    model: ModelShape
    context: int = CONTEXT
    assumptions: Assumptions = ASSUME
    bounds: Bounds = BOUNDS
    curves: dict | None = field(default=None, compare=False)  # cpu: {"single": curve, "batched": curve or None}


def target(
    device,
    model_size,
    context: int = CONTEXT,
    a: Assumptions = ASSUME,
    bounds: Bounds = BOUNDS,
    here: bool = True,
    curves: dict | None = None,
) -> Target:
    """What a cost is read for: a GPU by the roofline, or the CPU by its measured curves: `curves` where given (a
    run's own machine's, `lab.machine_curves`), else this machine's where it has measured them and `here`, else the
    shipped ones (`calibrate.lab_cpu_curves`)."""
    if str(device).strip().lower() != "cpu":
        return Target(accelerator(device).name, model_shape(model_size), context, a, bounds)
    if model_shape(model_size).size != "135M":
        raise ValueError(
            f"device cpu is this machine's measured cost curve, taken with SmolLM2-135M only: its model "
            f"size is 135M, not {model_size}; pick a100-80gb, h100 or h200 for other sizes"
        )
    curves = curves or lab_cpu_curves(here=here)
    if curves["single"] is None:
        raise ValueError("no measured CPU cost curve: run `python -m lade_core costcurve --device cpu`")
    return Target("cpu", model_shape("135M"), curves["single"]["prefix"], a, bounds, curves)


def _rows(fed, window: int, guess: int):
    """N-1, read back from a steady step's `fed` = 1 + (W + G)(N-1): the window's levels and a candidate's tokens
    (fractional for an average over a run's steps)."""
    return (fed - 1) / (window + guess)


def tokens_per_device(fed, window: int, guess: int, devices: int):
    """Tokens the busiest of `devices` feeds when a step of `fed` tokens (a W-column window of N-1 levels and G
    candidates of N-1 tokens) is dealt out as the engine deals it (`shares.deal`): its window columns at every
    level, level 0's columns left of them, its candidates, and x. `fed` may be an array."""
    if devices == 1 or window + guess == 0:
        return fed
    one = lambda f: _busiest(float(f), window, guess, devices)  # noqa: E731
    return np.vectorize(one, otypes=[float])(fed) if np.ndim(fed) else one(fed)


@lru_cache(maxsize=65536)
def _busiest(fed: float, window: int, guess: int, devices: int) -> float:
    """`tokens_per_device` for one step width (the lab asks the same widths again for every batch and corner)."""
    rows = _rows(fed, window, guess)
    return busiest(window, rows, [rows] * guess, devices)


def _cpu_curve(t: Target, batch: int) -> dict:
    """Batch 1 reads the single curve (the one Auto and adaptive sizes use), a larger batch the batched one; each is
    relative to its own batch's one-token forward, so the two never mix within one figure."""
    if batch == 1:
        return t.curves["single"]
    batched = t.curves["batched"] or {"curves": []}
    for c in batched["curves"]:
        if c["batch"] == batch:
            return c
    measured = [c["batch"] for c in batched["curves"]] or [1]
    raise ValueError(f"batch {batch} on cpu: this CPU's curve was measured at batch {measured}, not {batch}")


def _cpu_step(fed, t: Target, devices: int, batch: int) -> dict:
    if devices != 1:
        raise ValueError(f"devices: 1 on cpu (Lookahead Parallelism is simulated for GPUs), not {devices}")
    curve = _cpu_curve(t, batch)
    mid, low, high = (curve_cost(curve, which) for which in ("seconds", "q1", "q3"))
    return {
        "step_cost": mid(fed),
        "step_cost_range": [low(fed), high(fed)],
        "tokens_fed": fed,
        "tokens_per_device": fed,
        "comm_s": 0.0,
        "batch": batch,
        "rel": np.vectorize(mid),
        "spread_recorded": all("q1" in p for p in curve["points"]),  # the shipped B = 1 curve kept medians only
        "breakdown": {"seconds": curve["greedy_s"] * mid(fed), "bound": "measured"},
    }


def spread(values) -> list[float]:
    """The 10th and 90th percentile of `values`: the compression part of a prediction's range."""
    return [float(v) for v in np.percentile(values, [10, 90])]


def exchange_s(setting: dict, t: Target, devices: int, batch=1, comm=None):
    """Seconds per step the devices spend exchanging: the engine's all-gather of int32s (`shares.payload` from
    each device, for each sequence of the batch) at the link's latency and bandwidth; 0 on one device. Left out: the
    accepted tokens' K/V, broadcast on the steps that accept a candidate (`parallel.py`)."""
    if devices == 1:
        return 0.0
    acc = accelerator(t.device)
    W, G, rows = setting["window"], setting["guess"], setting["ngram"] - 1
    sent = payload(deal(W, rows, [rows] * G, devices), [rows] * G)
    return float(comm) if comm is not None else acc.link_latency + 4 * batch * devices * sent / acc.link_bandwidth


def gpu_relative(setting: dict, tokens, t: Target, devices: int = 1, batch=1, a: Assumptions | None = None, comm=None):
    """A GPU step's mid cost under assumptions `a` (default the target's); `tokens` and `batch` may be arrays."""
    acc, a = accelerator(t.device), a or t.assumptions
    carried = tokens_per_device(tokens, setting["window"], setting["guess"], devices)
    return (
        seconds(acc, t.model, carried, t.context, a, batch) + exchange_s(setting, t, devices, batch, comm)
    ) / seconds(acc, t.model, 1, t.context, a, batch)


def step_cost(setting: dict, fed: float, t: Target, devices: int = 1, batch: int = 1, comm=None) -> dict:
    """A step's cost against a one-token forward of the same batch on one device: mid, [low, high], its parts, and
    `rel`, the mid cost as a function of tokens fed (numpy arrays allowed)."""
    if devices < 1 or batch < 1:
        raise ValueError(f"devices and batch: at least 1, not {devices} and {batch}")
    if t.device == "cpu":
        return _cpu_step(fed, t, devices, batch)
    mid = float(gpu_relative(setting, fed, t, devices, batch, comm=comm))
    corners = [float(gpu_relative(setting, fed, t, devices, batch, c, comm)) for c in t.bounds.corners(t.assumptions)]
    carried = tokens_per_device(fed, setting["window"], setting["guess"], devices)
    return {
        "step_cost": mid,
        "step_cost_range": [min(corners + [mid]), max(corners + [mid])],
        "tokens_fed": fed,
        "tokens_per_device": carried,
        "comm_s": exchange_s(setting, t, devices, batch, comm),
        "batch": batch,
        "rel": lambda tokens: gpu_relative(setting, tokens, t, devices, batch, comm=comm),
        "breakdown": forward_seconds(accelerator(t.device), t.model, carried, t.context, t.assumptions, batch),
    }


def assumptions_of(t: Target, cost: dict) -> dict:
    """What a result rests on, for its reader."""
    if t.device == "cpu":
        curve = t.curves["single"] if cost["batch"] == 1 else t.curves["batched"]
        shipped = "assets/costcurve-cpu.json" if cost["batch"] == 1 else "assets/costcurve-cpu-batched.json"
        return {
            "device": "cpu",
            "bandwidth": None,
            "peak_flops": None,
            "precision": curve["dtype"],
            "efficiency": None,
            "overhead": "inside the measurement",
            "context": t.context,
            "model": curve["model"],
            "curve": curve.get("cached_at") or shipped,
            "clock": curve.get("clock", "wall"),
            "source": curve["source"],
            "machine": curve["machine_description"],
            "threads": curve.get("threads"),
            "batch": cost["batch"],
        }
    acc, a = accelerator(t.device), t.assumptions
    return {
        "device": acc.name,
        "bandwidth": acc.bandwidth,
        "peak_flops": acc.peak_flops,
        "precision": "bf16",
        "efficiency": {"bandwidth": a.bandwidth_efficiency, "compute": a.compute_efficiency},
        "overlap": a.overlap,
        "overhead": t.model.layers * a.overhead_per_layer,
        "overhead_per_layer": a.overhead_per_layer,
        "bounds": t.bounds.to_dict(),
        "context": t.context,
        "model": t.model.name,
        "params": t.model.params,
        "memory": acc.memory,
        "batch": cost["batch"],
        "comm_per_step": cost["comm_s"],
        "fits_in_memory": (t.model.params + t.model.kv_values_per_position * t.context * cost["batch"])
        * a.bytes_per_value
        <= acc.memory,
    }
