"""The speed lab: what a measured compression would be worth on a GPU, at batch B, over several GPUs (a simulation),
or on this CPU from its own measured curves.

speed-up = compression / step cost, the step cost being a lookahead step's forward against a one-token greedy
forward of the same batch on one device. A GPU's comes from the roofline (roofline.py) at its mid assumptions, with
low and high from its stated bounds; this CPU's from its measured curves (calibrate.py: measured here where it has
been, else shipped), low and high from the quartiles of the timing rounds. Every range says where it comes from:
`range_parts` holds the `compression` part (the spread of the run's own steps, or of the prompts, 10th to 90th
percentile) and the `assumptions` part (GPU) or `measurement` part (CPU); `predicted_speedup_range` combines them.
A point outside its band is left outside, never widened in. Lookahead Parallelism (the window's columns and the
candidates dealt out over k devices, each holding the whole model, exchanging tokens once a step) is simulated here
for GPUs; the engine's own Lookahead Parallelism (`lade generate --devices K`, parallel.py) runs it for real, and the
lab does not time it. At B > 1 every sequence is taken to accept as many tokens per step as the run did.

Left out: prefill time, host work between steps (pool look-ups, verification), how devices bring their KV caches
into line after a step, sequences of different lengths in one batch. Results say "model" or "simulation", never
"measured". The paper's figures are paper.py; what the page draws, labdata.py.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict

import numpy as np

from ..machine import machine_name
from .calibrate import lab_cpu_curves
from .costcurve import step_cost as curve_cost
from .paper import paper_comparison, paper_figures  # noqa: F401 (the lab's API)
from .roofline import ASSUME, BOUNDS, Assumptions, Bounds, accelerator, forward_seconds, model_shape  # noqa: F401
from .stepcost import (  # noqa: F401
    CONTEXT,
    Target,
    assumptions_of,
    gpu_relative,
    spread,
    step_cost,
    target,
    tokens_per_device,
)

DRAWS, SEED = 1000, 0  # the bootstrap over a run's steps
MAX_BATCH = 256


def _result(compression: float, spread: list, cost: dict, t: Target, devices: int, method: str) -> dict:
    """The contract: the speed-up, its range and where each part comes from (a part is None where its spread was not
    recorded: the shipped CPU curve kept medians only), the inputs."""
    mid, (low, high) = cost["step_cost"], cost["step_cost_range"]
    other = "measurement" if t.device == "cpu" else "assumptions"
    part = [compression / high, compression / low] if cost.get("spread_recorded", True) else None
    return {
        "predicted_speedup": compression / mid,
        "predicted_speedup_range": [spread[0] * mid / high, spread[1] * mid / low],
        "range_parts": {"compression": list(spread), other: part},
        "compression": compression,
        "device": t.device,
        "model_size": t.model.size,
        "devices": devices,
        "batch": cost["batch"],
        "kind": "simulation" if devices > 1 else "model",
        "range_method": method,
        **{k: v for k, v in cost.items() if k != "rel"},
        "assumptions": assumptions_of(t, cost),
    }


def predict(
    point: dict,
    device,
    model_size,
    devices: int = 1,
    context: int = CONTEXT,
    comm=None,
    a: Assumptions = ASSUME,
    batch: int = 1,
) -> dict:
    """A sweep or bench point's speed-up; its compression part is the 10th-90th percentile over the prompts."""
    t = target(device, model_size, context, a)
    cost = step_cost(point, point["mean_tokens_fed"], t, devices, batch, comm)
    per_prompt = [c / cost["step_cost"] for c in point.get("compression_by_prompt", {}).values()]
    per_prompt = per_prompt or [point["compression"] / cost["step_cost"]]
    result = _result(
        point["compression"], spread(per_prompt), cost, t, devices, "10th-90th percentile over the prompts"
    )
    return {
        **result,
        "predicted_speedup_median": statistics.median(per_prompt),
        "window": point["window"],
        "ngram": point["ngram"],
        "guess": point["guess"],
        "pool": point.get("pool"),
    }


def bootstrap(steps) -> tuple[np.ndarray, np.ndarray]:
    """(compression, mean tokens fed) of the run's lookahead steps drawn again with replacement, DRAWS times; the
    prefill, steps[0], stays in every draw as a step of its one token, as in compression."""
    first, later = steps[0], steps[1:]
    accepted, fed = np.array([len(s.accepted) for s in later]), np.array([s.n_input for s in later])
    picks = np.random.default_rng(SEED).integers(0, len(later), size=(DRAWS, len(later)))
    return (len(first.accepted) + accepted[picks].sum(axis=1)) / len(steps), fed[picks].mean(axis=1)


def machine_curves(run) -> dict | None:
    """The cost curve the run's own machine measured in the process that recorded it (`RunTrace.machine`), as the
    lab reads curves ({"single": curve, "batched": curve or None}), labelled with that machine; the shipped batched
    curve only where it was measured on the same machine, threads and layouts (it is not measured per process);
    None where the run did not record a curve (traces before version 5, a browser race without one)."""
    m = run.machine
    if not m.curve:
        return None
    threads = f", {m.threads} thread{'' if m.threads == 1 else 's'}" if m.threads else ""
    single = {
        "points": [{"tokens": p.tokens, "seconds": p.seconds, "q1": p.q1, "q3": p.q3} for p in m.curve],
        "greedy_s": m.curve[0].seconds,
        "prefix": 100,
        "model": run.model,
        "dtype": run.dtype,
        "kernels": m.kernels,
        "threads": m.threads,
        "measured_at": m.curve_at,
        "source": "this run's machine",
        "cached_at": "the run's trace",
        "machine_description": f"{m.description}{threads}, its curve measured {m.curve_at[:16].replace('T', ' ')}",
        "machine_name": machine_name(m.description, m.threads),
    }
    shipped = lab_cpu_curves(here=False)["batched"]
    same = shipped and (
        (shipped.get("machine") or {}).get("description"),
        shipped.get("threads"),
        shipped.get("kernels"),
    ) == (m.description, m.threads, m.kernels)
    return {"single": single, "batched": shipped if same else None}


def run_target(run, device, model_size, a: Assumptions = ASSUME, bounds: Bounds = BOUNDS, here: bool = True) -> Target:
    """The target at the KV context the run's steps saw on average; on the CPU, the curve of the run's own machine
    where it recorded one (else as `stepcost.target` with `here`)."""
    context = round(statistics.fmean(s.position for s in run.parallel.steps))
    own = machine_curves(run) if str(device).strip().lower() == "cpu" else None
    return target(device, model_size, context, a, bounds, here, own)


def _forward_per_token(method) -> tuple[float, int]:
    """(forward seconds, tokens) of a lane's steps after the prefill."""
    later = method.steps[1:]
    return sum(s.forward_s for s in later), sum(len(s.accepted) for s in later)


def measured_on_cpu(run) -> dict | None:
    """The run's own CPU figures, measured: its main lane's forwards against its greedy lane's (after the prefill,
    forward time only, as the curve times forwards), and beside them what the curve its machine measured in the same
    process predicts for the same steps (each step's width read off the curve; the range from the curve's
    quartiles) and whether the measurement falls inside. None where the run has no curve of its own, or no steps to
    measure."""
    curves = machine_curves(run)
    (main_s, main_n), (greedy_s, greedy_n) = _forward_per_token(run.parallel), _forward_per_token(run.baseline)
    if curves is None or not (main_n and greedy_n and main_s and greedy_s):
        return None
    curve = curves["single"]
    mid, low, high = (curve_cost(curve, which) for which in ("seconds", "q1", "q3"))
    widths = [s.n_input for s in run.parallel.steps[1:]]
    greedy_steps, main_steps = len(run.baseline.steps) - 1, len(widths)
    measured_cost = (main_s / main_steps) / (greedy_s / greedy_steps)
    per_token = main_n / main_steps  # tokens per step after the prefill
    predicted = [statistics.fmean(c(w) for w in widths) for c in (mid, low, high)]
    speed = lambda cost: per_token / cost * greedy_steps / greedy_n  # noqa: E731 (greedy's tokens per step: about 1)
    return {
        "machine": curve["machine_description"],
        "measured": {
            "step_cost": measured_cost,
            "speedup": speed(measured_cost),
            "greedy_forward_ms": 1000 * greedy_s / greedy_steps,
            "forward_ms": 1000 * main_s / main_steps,
            "tokens_per_step": per_token,
            "tokens_fed": statistics.fmean(widths),
            "kind": "measurement",
        },
        "predicted": {
            "step_cost": predicted[0],
            "step_cost_range": [predicted[1], predicted[2]],
            "speedup": speed(predicted[0]),
            "speedup_range": [speed(predicted[2]), speed(predicted[1])],
            "kind": "prediction from the curve measured before the race, in the same process",
        },
        "contains": speed(predicted[2]) <= speed(measured_cost) <= speed(predicted[1]),
    }


def predict_run(
    run,
    device: str,
    model_size: str,
    devices: int = 1,
    a: Assumptions = ASSUME,
    batch: int = 1,
    t: Target | None = None,
    draws: tuple | None = None,
) -> dict:
    """A recorded run's (`RunTrace`) compression on a device, model size, number of devices and batch, its
    compression part from its own steps (bootstrap; `draws`, the run's `bootstrap(steps)`, saves redrawing it).
    The step cost is read at the lookahead steps' mean tokens fed, the KV context at the steps' mean position."""
    steps, setting = run.parallel.steps, asdict(run.config)
    later = steps[1:]
    fed = statistics.fmean(s.n_input for s in later) if later else 1.0
    t = t or run_target(run, device, model_size, a)
    cost, compression = step_cost(setting, fed, t, devices, batch), run.parallel.compression
    if later:
        compressions, fed_draws = draws or bootstrap(steps)
        band = spread(compressions / cost["rel"](fed_draws))
        method = f"bootstrap over the run's {len(later)} lookahead steps ({DRAWS} draws, seed {SEED}), 10th-90th pct"
    else:
        band, method = [compression / cost["step_cost"]] * 2, "a single step: no spread"
    result = _result(compression, band, cost, t, devices, method)
    notes = (
        []
        if run.model.startswith(t.model.name)
        else [
            f"compression measured with {run.model} ({run.dtype}); the prediction assumes a {t.model.size} model "
            f"accepts as many tokens per step"
        ]
    )
    if getattr(run, "method", "lookahead") in ("early-exit", "draft"):
        notes.append(
            f"a {run.method} step also runs its draft's forwards, which this cost leaves out: the "
            f"prediction is an upper bound"
        )
    a = result["assumptions"]
    if a.get("fits_in_memory") is False:
        weights = t.model.params * t.assumptions.bytes_per_value / 1e9
        notes.append(
            f"a {t.model.size} model's weights alone are {weights:.0f} GB in bf16 and its caches at this run's "
            f"context ({t.context} positions{' a sequence' * (batch > 1)}, the mean position its steps saw) more, "
            f"so it "
            f"does not fit one {accelerator(t.device).label} ({a['memory'] / 1e9:.0f} GB)"
            f"{' at this batch' * (batch > 1)}: "
            f"the time is that of reading everything once per step, as pipeline parallelism over several "
            f"devices would, and Lookahead Parallelism (a whole model on every device) cannot run it"
        )
    return {**result, "config": {k: setting[k] for k in ("window", "ngram", "guess")}, "note": "; ".join(notes)}


def simulate_parallelism(
    points,
    device,
    model,
    devices_list=(1, 2, 3, 4, 5, 6, 7, 8),
    comm=None,
    context: int = CONTEXT,
    a: Assumptions = ASSUME,
) -> dict:
    """Lookahead Parallelism's strong scaling, simulated: for each k, every point on k devices and the best by the
    median over prompts (as Auto ranks) kept. Speed-ups are over greedy on one device; `comm` (seconds per step)
    replaces the modelled exchange."""
    if not points:
        raise ValueError("no sweep points to simulate: run `python -m lade_core sweep`")
    curve = [
        max(
            (predict(p, device, model, k, context, comm, a) for p in points),
            key=lambda r: r["predicted_speedup_median"],
        )
        for k in devices_list
    ]
    return {
        "kind": "simulation",
        "device": curve[0]["device"],
        "model_size": model_shape(model).size,
        "curve": curve,
        "note": "Lookahead Parallelism is simulated: each device holds a whole model and carries "
        "its share of the window and candidates, and the devices exchange tokens once a "
        "step. The project's own Lookahead Parallelism (lade generate --devices K) runs it for real; these "
        "figures are the simulation's, not timings of it.",
    }


def _first_below_one(batches: np.ndarray, speedups: np.ndarray) -> int | None:
    below = np.nonzero(speedups < 1)[0]
    return int(batches[below[0]]) if len(below) else None


def break_even_batch(
    setting: dict, fed: float, compression: float, spread: list, t: Target, max_batch: int = MAX_BATCH
) -> dict:
    """The smallest batch at which the predicted speed-up falls below 1 (None: it still pays at `max_batch`, or at
    the largest batch measured on cpu), with the earliest and latest such batch over the range and its parts:
    `spread` is the (10th, 90th percentile) compression. Every integer batch is tried on a GPU, the measured ones on
    the cpu; the speed-up is assumed to fall as the batch grows (it does here: the arithmetic grows B-fold)."""
    if t.device == "cpu":
        measured = [c["batch"] for c in (t.curves["batched"] or {"curves": []})["curves"]] or [1]
        batches = np.array(sorted(measured))
        cost = [step_cost(setting, fed, t, 1, int(b)) for b in batches]
        mid = np.array([c["step_cost"] for c in cost])
        low, high = (np.array([c["step_cost_range"][i] for c in cost]) for i in (0, 1))
        other, largest = "measurement", int(batches[-1])
    else:
        batches = np.arange(1, max_batch + 1)
        costs = [gpu_relative(setting, fed, t, 1, batches, c) for c in t.bounds.corners(t.assumptions)]
        mid = gpu_relative(setting, fed, t, 1, batches)
        low, high = np.minimum(np.min(costs, axis=0), mid), np.maximum(np.max(costs, axis=0), mid)
        other, largest = "assumptions", max_batch
    c10, c90 = spread
    first = lambda speed: _first_below_one(batches, speed)  # noqa: E731
    predicted = first(compression / mid)
    return {
        "predicted": predicted,
        "range": [first(c10 / high), first(c90 / low)],
        "range_parts": {
            "compression": [first(c10 / mid), first(c90 / mid)],
            other: [first(compression / high), first(compression / low)],
        },
        "largest_batch_tried": largest,
        "kind": "model",
        "why": why_it_stops(t, fed, predicted),
        "meaning": "the smallest batch at which lookahead is predicted slower than greedy decoding of the same "
        "batch; null: not below 1 up to largest_batch_tried; 1: slower even alone",
    }


def why_it_stops(t: Target, fed: float, batch: int | None) -> dict | None:
    """What bounds the two forwards at the batch where lookahead stops paying, by the roofline at its mid
    assumptions: greedy's (1 token a sequence) and lookahead's (`fed` a sequence). `reason`: "lookahead crosses"
    (greedy's forward is still memory-bound, lookahead's B x fed tokens are past the crossover: its extra tokens
    now cost arithmetic), "both compute" (even greedy's is compute-bound), "neither compute" (both still memory-
    or launch-bound: the extra tokens' own reads and the window's KV outweigh the compression), or "measured" (the
    CPU's curves, no roofline). None where it never stops paying."""
    if batch is None:
        return None
    if t.device == "cpu":
        return {"reason": "measured", "batch": batch}
    greedy = forward_seconds(t.device, t.model, 1, t.context, t.assumptions, batch)["bound"]
    wide = forward_seconds(t.device, t.model, fed, t.context, t.assumptions, batch)["bound"]
    reason = "both compute" if greedy == "compute" else "lookahead crosses" if wide == "compute" else "neither compute"
    return {
        "reason": reason,
        "batch": batch,
        "greedy_bound": greedy,
        "lookahead_bound": wide,
        "greedy_tokens": batch,
        "lookahead_tokens": batch * fed,
    }


def cost_curve(device, model, sizes, context: int = CONTEXT, a: Assumptions = ASSUME, batch: int = 1) -> list[dict]:
    """Forward cost by tokens fed per sequence against the one-token forward of the same batch, with its range
    (the roofline's bounds on a GPU; the timing quartiles of the measured curve on cpu)."""
    t = target(device, model, context, a)
    plain = {"window": 0, "guess": 0, "ngram": 1}
    rows = []
    for n in sizes:
        cost = step_cost(plain, n, t, 1, batch)
        rows.append(
            {"tokens": n, **cost["breakdown"], "relative": cost["step_cost"], "relative_range": cost["step_cost_range"]}
        )
    return rows


def describe(result: dict) -> str:
    """A few plain sentences for the terminal."""
    (low, high), k, s = result["predicted_speedup_range"], result["devices"], result["assumptions"]
    label = (
        "Simulation (Lookahead Parallelism on GPUs; not a timing of `lade generate --devices K`)"
        if result["kind"] == "simulation"
        else "Prediction (a model, not a measurement)"
    )
    where = f"{k} x {result['device']}" if k > 1 else f"one {result['device']}"
    batch = f" at batch {result['batch']}" if result["batch"] > 1 else ""
    parts = "; ".join(
        f"{name} alone {p[0]:.2f}x to {p[1]:.2f}x" if p else f"no {name} spread recorded"
        for name, p in result["range_parts"].items()
    )
    busiest = f", {result['tokens_per_device']:.0f} of them on the busiest device," if k > 1 else ""
    bound = result["breakdown"]["bound"]
    lo_cost, hi_cost = result["step_cost_range"]
    lines = [
        f"{label}: on {where} with a {result['model_size']} model{batch}, {result['compression']:.2f} tokens "
        f"per step would give about {result['predicted_speedup']:.2f}x the speed of greedy decoding "
        f"({low:.2f}x to {high:.2f}x; {parts}; compression: {result['range_method']}).",
        f"A step feeds {result['tokens_fed']:.0f} tokens on average{busiest} and costs "
        f"{result['step_cost']:.2f}x ({lo_cost:.2f}x to {hi_cost:.2f}x) a one-token step"
        + (" on this machine's measured curve" if bound == "measured" else f"; the forward is {bound}-bound")
        + ".",
    ]
    if s["bandwidth"] is None:
        lines.append(
            f"The cost is measured ({s['curve']}, {s['model']}, {s['precision']}; {s['source']}: "
            f"{s['machine']}), not modelled."
        )
    else:
        exchange = f", {s['comm_per_step'] * 1e6:.0f} us of exchange per step" if k > 1 else ""
        lines.append(
            f"Assumed: {s['efficiency']['bandwidth']:.0%} of {s['bandwidth'] / 1e12:.2f} TB/s, "
            f"{s['efficiency']['compute']:.0%} of {s['peak_flops'] / 1e12:.0f} TFLOP/s, overlap "
            f"{s['overlap']:.0%}, {s['overhead'] * 1e6:.0f} us of launches per forward, {s['context']} "
            f"positions of context, {s['precision']}{exchange}; each varied within its bounds for the range."
        )
    if result.get("note"):
        lines.append(result["note"][0].upper() + result["note"][1:] + ".")
    own = result.get("measurement")
    if own:  # the run's own setting on its own machine: the measurement replaces the prediction
        m, p = own["measured"], own["predicted"]
        lines[0] = (
            f"Measured (this run, on {own['machine']}): its forwards took {m['step_cost']:.2f}x greedy's per step "
            f"({m['forward_ms']:.1f} against {m['greedy_forward_ms']:.1f} ms), {m['tokens_per_step']:.2f} tokens per "
            f"step: {m['speedup']:.2f}x greedy's speed by forward time. The curve measured before the race "
            f"predicted {p['speedup']:.2f}x ({p['speedup_range'][0]:.2f}x to {p['speedup_range'][1]:.2f}x), "
            f"{'which contains' if own['contains'] else 'which misses'} the measurement."
        )
        del lines[1]  # the curve's reading at the mean width: the prediction the measurement replaces
    return "\n".join(lines)
