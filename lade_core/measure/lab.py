"""The speed lab: what a measured compression would be worth on a GPU, alone or over several (a simulation).

Compression (tokens per step) is measured here; speed on a GPU is not. The lab turns one into the other: speed-up =
compression / (time of a lookahead step / time of a one-token greedy step). A step's time comes from a roofline
model of one forward pass at batch 1: the longer of reading the weights and KV cache from memory and doing the
arithmetic, each at a stated fraction of the vendor's peak, plus a fixed launch overhead per layer. On a big model a
forward of dozens of tokens costs about what one token costs, so compression turns into speed; on a small model
launches dominate. This CPU is not modelled: device "cpu" reads its measured cost curve, taken with SmolLM2-135M only.
Lookahead Parallelism (the window's columns and the candidates dealt out over k devices, each with a whole model,
exchanging tokens once a step) is simulated; no multi-GPU code exists in this project.

Left out: batches above 1, quantisation, prefill time, host work between steps (pool look-ups, verification), the
attention among a step's own tokens, how devices bring their KV caches into line after a step, and kernel effects
beyond the per-layer overhead. Results say "model" or "simulation", never "measured". The paper's figures as found,
and what could not be found, are in assets/lab/paper.json; `paper_comparison` sets predictions beside them.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import asdict, dataclass

import numpy as np

from ..paths import ASSETS
from .autoconfig import load_sweeps
from .costcurve import curve_path, load_curve_file, step_cost

PAPER = ASSETS / "lab" / "paper.json"
CONTEXT = 512  # KV positions when a caller gives none: a prompt and a short answer
DRAWS, SEED = 1000, 0  # the bootstrap over a run's steps


@dataclass(frozen=True)
class Accelerator:
    """One GPU as the roofline sees it. Peaks are the vendors' spec-sheet figures, dense (no sparsity): A100 80GB
    SXM 2,039 GB/s and 312 TFLOP/s BF16, NVLink 600 GB/s; H100 SXM 3.35 TB/s and 989 TFLOP/s, NVLink 900 GB/s; H200
    SXM 4.8 TB/s and 141 GB with the H100's compute and NVLink. `link_latency` is assumed, not measured: an
    all-gather of a few bytes inside one NVLink node is latency-bound, NCCL taking on the order of 10-20 us."""

    name: str
    bandwidth: float  # HBM, bytes/s
    peak_flops: float  # dense BF16, FLOP/s
    memory: float  # bytes
    link_bandwidth: float  # NVLink, bytes/s per GPU
    link_latency: float  # seconds per all-gather


ACCELERATORS = (
    Accelerator("a100-80gb", 2.039e12, 312e12, 80e9, 600e9, 15e-6),
    Accelerator("h100", 3.35e12, 989e12, 80e9, 900e9, 15e-6),
    Accelerator("h200", 4.8e12, 989e12, 141e9, 900e9, 15e-6),
)


@dataclass(frozen=True)
class ModelShape:
    """A decoder's published shape (its config.json on the Hugging Face hub). The parameter count is derived, and
    matches the published totals (Llama-2-7B 6,738,415,616; SmolLM2-135M 134,515,008). CodeLlama 7B and 13B differ
    from Llama-2 only by 16 vocabulary rows."""

    size: str
    name: str
    layers: int
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    tied: bool  # input embedding shared with the output head

    @property
    def params(self) -> int:
        attention = self.hidden * self.head_dim * 2 * (self.heads + self.kv_heads)  # q, o; k, v
        block = attention + 3 * self.hidden * self.intermediate + 2 * self.hidden  # gated MLP, two norms
        return self.vocab * self.hidden * (1 if self.tied else 2) + self.layers * block + self.hidden

    @property
    def kv_values_per_position(self) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim  # K and V in every layer


MODELS = (
    ModelShape("135M", "SmolLM2-135M", 30, 576, 1536, 9, 3, 64, 49152, True),
    ModelShape("360M", "SmolLM2-360M", 32, 960, 2560, 15, 5, 64, 49152, True),
    ModelShape("1.7B", "SmolLM2-1.7B", 24, 2048, 8192, 32, 32, 64, 49152, True),
    ModelShape("7B", "Llama-2-7B", 32, 4096, 11008, 32, 32, 128, 32000, False),
    ModelShape("13B", "Llama-2-13B", 40, 5120, 13824, 40, 40, 128, 32000, False),
    ModelShape("34B", "CodeLlama-34B", 48, 8192, 22016, 64, 8, 128, 32000, False),
    ModelShape("70B", "Llama-2-70B", 80, 8192, 28672, 64, 8, 128, 32000, False),
)


@dataclass(frozen=True)
class Assumptions:
    """What the roofline takes for granted. 0.7 of peak bandwidth: gpt-fast's compiled Llama-2-7B decodes at
    1,397 GB/s on an A100-80GB, 0.69 of 2,039. 0.5 of peak compute: a round figure for matrix products a few dozen
    rows tall, not a measurement. 20 us per layer: about a dozen kernels a layer at 1-2 us each when launches set
    the pace (eager PyTorch is slower, CUDA graphs faster). bf16: 2 bytes per weight and per KV value."""

    bandwidth_efficiency: float = 0.7
    compute_efficiency: float = 0.5
    overhead_per_layer: float = 20e-6
    bytes_per_value: int = 2


ASSUME = Assumptions()


def accelerator(device) -> Accelerator:
    if isinstance(device, Accelerator):
        return device
    for acc in ACCELERATORS:
        if acc.name == str(device).strip().lower():
            return acc
    names = ", ".join(a.name for a in ACCELERATORS)
    raise ValueError(f"unknown device {device!r}: the lab models {names}, and cpu (this machine's measured curve)")


def _count(text) -> float:
    s = str(text).strip().upper().replace(" ", "")
    try:
        return float(s[:-1]) * {"M": 1e6, "B": 1e9}[s[-1]]
    except (KeyError, ValueError, IndexError):
        raise ValueError(f"model size {text!r}: write it like 135M, 1.7B or 7B") from None


def model_shape(size) -> ModelShape:
    """The model of a size written "7B", "135M" or "1.7b" (a `ModelShape` passes through)."""
    if isinstance(size, ModelShape):
        return size
    for m in MODELS:
        if math.isclose(_count(size), _count(m.size)):
            return m
    raise ValueError(f"no model of size {size!r} here; sizes: {', '.join(m.size for m in MODELS)}")


def forward_seconds(device, model, tokens: float, context: int, a: Assumptions = ASSUME) -> dict:
    """One forward of `tokens` tokens over `context` cached positions, in seconds: max(memory, compute) + overhead,
    with its parts. `attention_s` is attention's share of the bounding term: reading the KV cache when memory bounds
    the forward, its 4 * layers * heads * head_dim * tokens * context FLOPs when compute does."""
    acc, m = accelerator(device), model_shape(model)
    bandwidth, flops = acc.bandwidth * a.bandwidth_efficiency, acc.peak_flops * a.compute_efficiency
    kv_s = m.kv_values_per_position * context * a.bytes_per_value / bandwidth
    attention_flops_s = 4 * m.layers * m.heads * m.head_dim * tokens * context / flops
    memory_s = m.params * a.bytes_per_value / bandwidth + kv_s
    compute_s = 2 * m.params * tokens / flops + attention_flops_s
    overhead_s = m.layers * a.overhead_per_layer
    terms = {"memory": memory_s, "compute": compute_s, "overhead": overhead_s}
    return {"seconds": max(memory_s, compute_s) + overhead_s, "memory_s": memory_s, "compute_s": compute_s,
            "attention_s": kv_s if memory_s >= compute_s else attention_flops_s, "overhead_s": overhead_s,
            "bound": max(terms, key=terms.get)}


def _device(device, model_size, context: int, a: Assumptions) -> tuple:
    """(forward(tokens) -> seconds dict, accelerator or None for cpu, assumptions) for a device and model size."""
    if str(device).strip().lower() != "cpu":
        acc, m = accelerator(device), model_shape(model_size)
        return (lambda tokens: forward_seconds(acc, m, tokens, context, a)), acc, {
            "device": acc.name, "bandwidth": acc.bandwidth, "peak_flops": acc.peak_flops, "precision": "bf16",
            "efficiency": {"bandwidth": a.bandwidth_efficiency, "compute": a.compute_efficiency},
            "overhead": m.layers * a.overhead_per_layer, "overhead_per_layer": a.overhead_per_layer,
            "context": context, "model": m.name, "params": m.params, "memory": acc.memory,
            "fits_in_memory": (m.params + m.kv_values_per_position * context) * a.bytes_per_value <= acc.memory}
    if model_shape(model_size).size != "135M":
        raise ValueError(f"device cpu is this machine's measured cost curve, taken with SmolLM2-135M only: its model "
                         f"size is 135M, not {model_size}; pick a100-80gb, h100 or h200 for other sizes")
    curve = load_curve_file(curve_path("cpu"))
    if curve is None:
        raise ValueError("no measured CPU cost curve: run `python -m lade_core costcurve --device cpu`")
    cost = step_cost(curve)
    return (lambda tokens: {"seconds": curve["greedy_s"] * cost(tokens), "bound": "measured"}), None, {
        "device": "cpu", "bandwidth": None, "peak_flops": None, "precision": curve["dtype"], "efficiency": None,
        "overhead": "inside the measurement", "context": curve["prefix"], "model": curve["model"],
        "curve": f"assets/{curve_path('cpu').name}", "threads": curve.get("threads")}


def cost_curve(device, model, sizes, context: int = CONTEXT, a: Assumptions = ASSUME) -> list[dict]:
    """Forward time by tokens fed, each point also relative to the one-token forward (the measured curve on cpu)."""
    forward = _device(device, model, context, a)[0]
    return [{"tokens": n, **forward(n), "relative": forward(n)["seconds"] / forward(1)["seconds"]} for n in sizes]


def tokens_per_device(fed: float, window: int, guess: int, devices: int) -> float:
    """Tokens the busiest of `devices` carries when the W window columns and the G candidates are dealt out
    evenly: its ceil(W/k) + ceil(G/k) of the W + G rows (of N-1 tokens each), plus the input token all need."""
    if devices == 1 or window + guess == 0:
        return fed
    return 1 + (fed - 1) * (math.ceil(window / devices) + math.ceil(guess / devices)) / (window + guess)


def _step(setting: dict, fed: float, dev: tuple, devices: int, comm=None) -> dict:
    """A step's cost relative to a one-token forward on one device (`dev` from `_device`), with its parts."""
    forward, acc, assumptions = dev
    if devices < 1 or (devices > 1 and acc is None):
        raise ValueError(f"devices: at least 1, and 1 on cpu (Lookahead Parallelism is simulated for GPUs), "
                         f"not {devices}")
    carried = tokens_per_device(fed, setting["window"], setting["guess"], devices)
    comm_s = 0.0 if devices == 1 else float(comm) if comm is not None else (  # an all-gather of int32 tokens:
        acc.link_latency + 4 * (setting["window"] + setting["guess"] * setting["ngram"]) / acc.link_bandwidth)
    step = forward(carried)
    return {"step_cost": (step["seconds"] + comm_s) / forward(1)["seconds"], "tokens_fed": fed,
            "tokens_per_device": carried, "breakdown": step, "comm_s": comm_s,
            "assumptions": {**assumptions, "comm_per_step": comm_s}}


def _spread(values) -> list[float]:
    return [float(v) for v in np.percentile(values, [10, 90])]


def _result(compression: float, spread: list, cost: dict, model_size, devices: int, method: str) -> dict:
    """The contract: the speed-up, its range (`spread`, widened to hold the point if it falls outside), the inputs."""
    speedup = compression / cost["step_cost"]
    return {"predicted_speedup": speedup, "predicted_speedup_range": [min(spread[0], speedup), max(spread[1], speedup)],
            "compression": compression, "device": cost["assumptions"]["device"],
            "model_size": model_shape(model_size).size, "devices": devices,
            "kind": "simulation" if devices > 1 else "model", "range_method": method, **cost}


def predict(point: dict, device, model_size, devices: int = 1, context: int = CONTEXT, comm=None,
            a: Assumptions = ASSUME) -> dict:
    """A sweep point's speed-up on `devices` devices; its range is the 10th-90th percentile over the prompts."""
    cost = _step(point, point["mean_tokens_fed"], _device(device, model_size, context, a), devices, comm)
    per_prompt = [c / cost["step_cost"] for c in point.get("compression_by_prompt", {}).values()]
    per_prompt = per_prompt or [point["compression"] / cost["step_cost"]]
    result = _result(point["compression"], _spread(per_prompt), cost, model_size, devices,
                     "10th-90th percentile over the sweep's prompts")
    return {**result, "predicted_speedup_median": statistics.median(per_prompt), "window": point["window"],
            "ngram": point["ngram"], "guess": point["guess"], "pool": point.get("pool")}


def _bootstrap(steps, speedup) -> list[float]:
    """10th-90th percentile of `speedup(compression, mean tokens fed)` over the run's lookahead steps drawn again
    with replacement; the prefill, steps[0], stays in every draw as a step of its one token, as in compression."""
    first, later = steps[0], steps[1:]
    accepted, fed = np.array([len(s.accepted) for s in later]), np.array([s.n_input for s in later])
    picks = np.random.default_rng(SEED).integers(0, len(later), size=(DRAWS, len(later)))
    compression = (len(first.accepted) + accepted[picks].sum(axis=1)) / len(steps)
    return _spread([speedup(c, f) for c, f in zip(compression, fed[picks].mean(axis=1))])


def predict_run(run, device: str, model_size: str, devices: int = 1, a: Assumptions = ASSUME) -> dict:
    """A recorded run's (`RunTrace`) compression on a device and model size, with the spread of its own steps. The
    step cost is read at the lookahead steps' mean tokens fed, the KV context at the steps' mean position."""
    steps, setting = run.parallel.steps, asdict(run.config)
    later = steps[1:]
    fed = statistics.fmean(s.n_input for s in later) if later else 1.0
    dev = _device(device, model_size, round(statistics.fmean(s.position for s in steps)), a)
    cost, compression = _step(setting, fed, dev, devices), run.parallel.compression
    if later:
        spread = _bootstrap(steps, lambda c, f: c / _step(setting, f, dev, devices)["step_cost"])
        method = f"bootstrap over the run's {len(later)} lookahead steps ({DRAWS} draws, seed {SEED}), 10th-90th pct"
    else:
        spread, method = [compression / cost["step_cost"]] * 2, "a single step: no spread"
    result = _result(compression, spread, cost, model_size, devices, method)
    same = run.model.startswith(model_shape(model_size).name)
    notes = [] if same else [f"compression measured with {run.model} ({run.dtype}); the prediction assumes a "
                             f"{result['model_size']} model accepts as many tokens per step"]
    if result["assumptions"].get("fits_in_memory") is False:
        notes.append("the weights do not fit one device: the time is that of reading them all once per step, as "
                     "pipeline parallelism over several devices would at batch 1")
    return {**result, "config": {k: setting[k] for k in ("window", "ngram", "guess")}, "note": "; ".join(notes)}


def simulate_parallelism(points, device, model, devices_list=range(1, 9), comm=None, context: int = CONTEXT,
                         a: Assumptions = ASSUME) -> dict:
    """Lookahead Parallelism's strong scaling, simulated: for each k, every swept point on k devices and the best
    by the median over prompts (as Auto ranks) kept. Speed-ups are over greedy on one device; `comm` (seconds per
    step) replaces the modelled exchange."""
    if not points:
        raise ValueError("no sweep points to simulate: run `python -m lade_core sweep`")
    curve = [max((predict(p, device, model, k, context, comm, a) for p in points),
                 key=lambda r: r["predicted_speedup_median"]) for k in devices_list]
    return {"kind": "simulation", "device": curve[0]["device"], "model_size": model_shape(model).size,
            "curve": curve, "note": "Lookahead Parallelism is simulated: each device holds a whole model and carries "
                                    "its share of the window and candidates, and the devices exchange tokens once a "
                                    "step. No multi-GPU code exists in this project."}


def paper_figures(path=PAPER) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _nearest(points: list[dict], setting: dict) -> dict | None:
    """The swept point nearest a setting: same N first, then W and G on a log scale; the paper's pool if swept."""
    pool = [p for p in points if p.get("pool") == "paper"] or points
    return min(pool, default=None, key=lambda p: (abs(p["ngram"] - setting["ngram"]),
                                                  abs(math.log2(p["window"] / setting["window"])),
                                                  abs(math.log2((p["guess"] + 1) / (setting["guess"] + 1)))))


def _compression(row: dict, setting: dict, given, points) -> tuple:
    """(compression, where it comes from) for a paper row, or (None, why not)."""
    key, near = (setting["window"], setting["ngram"], setting["guess"]), _nearest(points, setting)
    if "compression" in row:
        return row["compression"], "paper"
    if given and key in given:
        return given[key], "given"
    if near is None:
        return None, "no sweep saved: run `python -m lade_core sweep`"
    return near["compression"], (f"this project's sweep at the nearest setting, W={near['window']} N={near['ngram']}"
                                 f" G={near['guess']}: another model on other prompts, so the gap mixes both")


def paper_comparison(compression_by_setting=None, points=None, context: int = CONTEXT, a: Assumptions = ASSUME):
    """The paper's measured rows beside the model's prediction for the same device, size and W/N/G, with the gap
    (measured / predicted). Compression: the paper's own where it gives one, else `compression_by_setting`
    ({(W, N, G): compression}), else this project's sweep at the nearest setting. The step feeds its full
    1 + (W+G)(N-1) tokens: the blog's extra FLOPs per step (120x for 7B) count all of them."""
    paper = paper_figures()
    configs = {c["model_size"]: c for c in paper["configs"]}
    points = load_sweeps() if points is None else points
    rows = []
    for row in (paper["rows_defaults"] | r for r in paper["rows"]):
        out, setting = {**row, "measured_speedup": row["speedup"], "predicted_speedup": None, "gap": None}, \
            configs.get(row["model_size"])
        compression, source = _compression(row, setting, compression_by_setting, points) if setting else \
            (None, "the paper's W, N, G for this size were not found")
        if compression is None:
            rows.append({**out, **(setting or {}), "compression_source": source})
            continue
        fed = 1 + (setting["window"] + setting["guess"]) * (setting["ngram"] - 1)
        cost = _step(setting, fed, _device(row["device"], row["model_size"], context, a), 1)
        predicted = compression / cost["step_cost"]
        rows.append({**out, **setting, "compression": compression, "compression_source": source, "kind": "model",
                     "step_cost": cost["step_cost"], "predicted_speedup": predicted, "gap": row["speedup"] / predicted})
    return rows


def describe(result: dict) -> str:
    """A few plain sentences for the terminal."""
    (low, high), k, s = result["predicted_speedup_range"], result["devices"], result["assumptions"]
    label = ("Simulation (Lookahead Parallelism; no multi-GPU code exists here)" if result["kind"] == "simulation"
             else "Prediction (a model, not a measurement)")
    where = f"{k} x {result['device']}" if k > 1 else f"one {result['device']}"
    busiest = f", {result['tokens_per_device']:.0f} of them on the busiest device," if k > 1 else ""
    bound = result["breakdown"]["bound"]
    lines = [f"{label}: on {where} with a {result['model_size']} model, {result['compression']:.2f} tokens per step "
             f"would give about {result['predicted_speedup']:.2f}x the speed of greedy decoding "
             f"({low:.2f}x to {high:.2f}x; {result['range_method']}).",
             f"A step feeds {result['tokens_fed']:.0f} tokens on average{busiest} and costs {result['step_cost']:.2f}x "
             f"a one-token step" + (" on this machine's measured curve" if bound == "measured" else
                                    f"; the forward is {bound}-bound") + "."]
    if s["bandwidth"] is None:
        lines.append(f"The cost is measured ({s['curve']}, {s['model']}, {s['precision']}), not modelled.")
    else:
        exchange = f", {s['comm_per_step'] * 1e6:.0f} us of exchange per step" if k > 1 else ""
        lines.append(f"Assumed: {s['efficiency']['bandwidth']:.0%} of {s['bandwidth'] / 1e12:.2f} TB/s, "
                     f"{s['efficiency']['compute']:.0%} of {s['peak_flops'] / 1e12:.0f} TFLOP/s, "
                     f"{s['overhead'] * 1e6:.0f} us of launches per forward, {s['context']} positions of context, "
                     f"{s['precision']}{exchange}.")
    if result.get("note"):
        lines.append(result["note"][0].upper() + result["note"][1:] + ".")
    return "\n".join(lines)
