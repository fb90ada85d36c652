"""What the speed lab page draws, as plain JSON-able data: `lab_page_data()` (everything that does not depend on the
run on screen) and `lab_run_data(run)` (the predictions for one run). The browser draws both and computes nothing
that is a number on screen; a static export ships them as they are.

Every number is computed here from the files under assets/ (or this machine's cached curves) and labelled with
its source; GPU figures come as low, mid and high from the roofline's stated bounds, and say "model" or
"simulation". Numbers are rounded to 5 significant digits. Sizes: about 130 KB for the page, under 50 KB a run.
Left out: anything the browser can read off the run itself (its tokens, steps, timings).
"""

from __future__ import annotations

import json
import math
import shlex
import statistics
from dataclasses import asdict, fields
from typing import NotRequired

import numpy as np
from pydantic import JsonValue
from typing_extensions import TypedDict  # pydantic reads it on Python 3.11 (app/render/contract.py)

from ..paths import ASSETS
from .autoconfig import load_sweeps
from .calibrate import lab_cpu_curves
from .lab import (
    bootstrap,
    break_even_batch,
    machine_curves,
    measured_on_cpu,
    predict,
    predict_run,
    run_target,
    spread,
)
from .paper import engine_best, paper_comparison, paper_figures
from .roofline import (
    ACCELERATORS,
    ASSUME,
    BOUNDS,
    MODELS,
    Assumptions,
    Bounds,
    crossover_tokens,
    relative_cost,
    seconds,
)

TOKENS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)
BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
DEVICES = tuple(range(1, 9))
CONTEXT = 512
THRESHOLDS = ASSETS / "lab" / "thresholds.json"
PARALLEL_RUN = (
    ASSETS / "lab" / "parallel-2.json"
)  # recorded by the command below (BENCHMARKS.md, Lookahead Parallelism)
PARALLEL_COMMAND = (
    "lade trace --devices 2 --device cpu -W 8 -N 4 -G 8 --no-tree --max-new-tokens 64 --prompt {prompt} "
    "--out out/parallel-2.json"
)
SCHEMA_PAGE, SCHEMA_RUN, VERSION = "lade-explorer/lab-page", "lade-explorer/lab-run", 1


# What `lab_run_data` returns, declared once: the page's `LabRunData` is generated from it (app/render/contract.py).


class Series(TypedDict):
    """Predictions over one axis (devices, or batch) as parallel lists (`_series`): the speed-up, its range and each
    part of the range (compression, and assumptions on a GPU or measurement on the CPU; null where not recorded), the
    step cost and what bounds it; over batch the step cost's range, over devices the busiest device's tokens."""

    predicted_speedup: list[float]
    low: list[float]
    high: list[float]
    compression_low: list[float | None]
    compression_high: list[float | None]
    assumptions_low: NotRequired[list[float | None]]
    assumptions_high: NotRequired[list[float | None]]
    measurement_low: NotRequired[list[float | None]]
    measurement_high: NotRequired[list[float | None]]
    step_cost: list[float]
    bound: list[str]  # "memory" | "compute" | "overhead" | "measured"
    step_cost_low: NotRequired[list[float]]
    step_cost_high: NotRequired[list[float]]
    tokens_per_device: NotRequired[list[float]]


class WhyItStops(TypedDict):
    """What bounds greedy's and lookahead's forwards at the batch where lookahead stops paying (`lab.why_it_stops`)."""

    reason: str  # "lookahead crosses" | "both compute" | "neither compute" | "measured"
    batch: int
    greedy_bound: NotRequired[str]
    lookahead_bound: NotRequired[str]
    greedy_tokens: NotRequired[int]
    lookahead_tokens: NotRequired[float]


class BreakEven(TypedDict):
    """The smallest batch at which lookahead is predicted slower than greedy (`lab.break_even_batch`; null: not below
    1 up to `largest_batch_tried`), its range and each part of the range."""

    predicted: int | None
    range: list[int | None]
    range_parts: dict[str, list[int | None]]
    largest_batch_tried: int
    why: WhyItStops | None


class Measured(TypedDict):
    step_cost: float
    speedup: float
    greedy_forward_ms: float
    forward_ms: float
    tokens_per_step: float
    tokens_fed: float
    kind: str


class Predicted(TypedDict):
    step_cost: float
    step_cost_range: list[float]
    speedup: float
    speedup_range: list[float]
    kind: str


class CpuMeasurement(TypedDict):
    """The run's own CPU figures beside its curve's prediction for the same steps (`lab.measured_on_cpu`)."""

    machine: str
    measured: Measured
    predicted: Predicted
    contains: bool


class CpuRoof(TypedDict):
    """The run's CPU as a device against its measured roof (`_cpu_roof`)."""

    bandwidth_bytes_per_s: float
    flops: float
    threads: int
    context: int
    tokens: list[int]
    floor_ms: list[float]
    floor_bound: list[str]
    crossover_tokens: float | None
    measured_tokens: list[int]
    measured_ms: list[float]
    over_floor: list[float]


class Target(TypedDict):
    """One device x model size (`_for_target`); the CPU's also names its curves' machines, its measurement and roof."""

    devices: list[int]
    by_devices: Series
    batches: list[int]
    by_batch: Series
    crossover_tokens: list[int | None] | None
    fits_in_memory: bool
    fits_in_memory_up_to_batch: int | None
    notes: list[str]
    break_even_batch: BreakEven
    source: NotRequired[str]
    machine: NotRequired[str | None]
    machine_name: NotRequired[str | None]
    batched_source: NotRequired[str | None]
    batched_machine_name: NotRequired[str | None]
    measurement: NotRequired[CpuMeasurement | None]
    roof: NotRequired[CpuRoof | None]
    curve: NotRequired[CpuLine | None]  # the CPU curve these predictions read at batch 1, to draw beside them


class RunSetting(TypedDict):
    window: int
    ngram: int
    guess: int


class RunSummary(TypedDict):
    model: str
    dtype: str
    compression: float  # tokens per step
    compression_range: list[float]  # its 10th and 90th percentile
    tokens_fed: float  # mean per step
    steps: int
    context: int  # mean KV position
    config: RunSetting


class LabRunData(TypedDict):
    """The speed lab's predictions for one run (`lab_run_data`)."""

    schema: str
    version: int
    kind: str
    break_even_meaning: str
    range_method: str
    run: RunSummary
    predictions: dict[str, dict[str, Target]]  # by device id ("cpu" too), then model size


# What `lab_page_data` returns, declared once: the page's `LabPage` is generated from it (app/render/contract.py).


class DeviceSpec(TypedDict):
    """A GPU the lab models, as the register states it (`roofline.ACCELERATORS`)."""

    id: str
    name: str
    bandwidth_bytes_per_s: float
    peak_flops: float
    memory_bytes: float
    link_bandwidth_bytes_per_s: float
    link_latency_s: float


class ModelSize(TypedDict):
    size: str  # "7B"
    name: str
    params: int
    layers: int
    kv_values_per_position: int


class AssumptionsData(TypedDict):
    """The roofline's assumed efficiencies (`mid`), their ranges (`bounds`, each [low, high]) and why."""

    mid: dict[str, float]
    bounds: dict[str, list[float]]
    context: int  # KV positions
    why_mid: str
    why_bounds: str
    names: list[str]


class GpuCurve(TypedDict):
    """One device x size x batch: relative cost by tokens fed (low, mid, high), the one-token forward, the
    crossover (tokens per sequence; may be under 1, null: never)."""

    low: list[float]
    mid: list[float]
    high: list[float]
    one_token_ms: float
    crossover_tokens: float | None
    fits_in_memory: bool


class CpuLine(TypedDict):
    """A measured CPU curve: relative cost by tokens fed, its quartiles where recorded."""

    tokens: list[int]
    relative: list[float]
    q1: list[float] | None
    q3: list[float] | None
    one_token_ms: float


class MachineCurve(TypedDict):
    """The CPU curve the run's own machine measured in the process that recorded it (`machine_curve`)."""

    curve: CpuLine
    machine: str  # how the machine is described, with when its curve was measured
    machine_name: str  # its short name (`lade_core.machine.machine_name`)


class CurveSource(TypedDict):
    """Where a CPU curve was measured (each null where its file does not say)."""

    source: str | None  # "measured here" | "shipped"
    machine_description: str | None
    machine_name: str | None
    model: str | None
    dtype: str | None
    kernels: str | None
    threads: int | None
    prefix: int | None
    command: str | None
    measured_at: str | None
    recorded_at: str | None


class CpuSingle(CurveSource, CpuLine):
    pass


class CpuBatched(CurveSource):
    batches: list[int]
    curves: dict[str, CpuLine]  # by str(batch)


class CpuCurves(TypedDict):
    single: CpuSingle | None
    batched: CpuBatched | None


class PaperPrediction(TypedDict):
    """The model's prediction for one of the paper's rows at a compression this project measured."""

    source: str  # "sweep" | "bench"
    file: str
    max_new_tokens: int
    pool: str
    setting: RunSetting
    exact_setting: bool
    compression: float
    step_cost: float
    step_cost_range: list[float]
    predicted_speedup: float
    predicted_speedup_range: list[float]
    range_parts: dict[str, list[float]]
    gap: float | None


class PaperRow(TypedDict):
    """One of the paper's measured rows (assets/lab/paper.json) beside the model's predictions."""

    model: str
    dataset: str
    model_size: str
    speedup: float  # measured
    device: str
    devices: int
    parallelism: str | None
    window: int | None
    ngram: int | None
    guess: int | None
    predicted_speedup: float | None
    gap: float | None
    compression_source: str
    source: str
    figure: str
    note: str | None
    predictions: list[PaperPrediction]


class PaperClaim(TypedDict):
    claim: str
    devices: int | str
    source: str
    where: str
    note: NotRequired[str]
    which_figure: NotRequired[str]


class PaperData(TypedDict):
    rows: list[PaperRow]
    headline: list[PaperClaim]
    missing: list[str]
    rows_source: str
    baseline: str
    models: dict[str, str]
    configs_note: str


class EngineBestEntry(TypedDict):
    compression: float
    file: str
    setting: str
    max_new_tokens: int
    prompt: NotRequired[str]


class EngineBest(TypedDict):
    """This engine's best compressions: the bench's mean, the sweep's mean, the best prompt."""

    bench_mean: EngineBestEntry
    sweep_mean: EngineBestEntry
    best_prompt: EngineBestEntry


class Scenario(TypedDict):
    """Lookahead Parallelism for one swept point on k = 1..8 devices (`_scenario`; k > 1 a simulation)."""

    label: str
    source: str
    device: str
    model_size: str
    setting: RunSetting
    compression: float
    tokens_fed: float
    devices: list[int]
    predicted_speedup: list[float]
    range: list[list[float]]
    range_parts: list[dict[str, list[float]]]
    step_cost: list[float]
    tokens_per_device: list[float]
    bound: list[str]
    kind: list[str]
    fits_in_memory: bool
    file: str
    max_new_tokens: int


class Parallelism(TypedDict):
    default: Scenario
    wide: Scenario


class ParallelSetting(RunSetting):
    tree: bool


class ParallelRun(TypedDict):
    """The recorded Lookahead Parallelism run (`_parallel_run`)."""

    file: str
    command: str
    prompt: str
    model: str
    device: str
    recorded_at: str | None
    devices: int
    setting: ParallelSetting
    tokens: int
    steps: int
    greedy_steps: int
    identical: bool
    step_index: list[int]
    fed_one: list[int]
    fed_ranks: list[list[int]]
    mean_one: float
    mean_ranks: list[float]
    mean_busiest: float
    simulated_busiest: float
    gathered_bytes: float
    broadcast_steps: int
    kv_bytes_per_token: int | None


class ThresholdSource(TypedDict):
    what: str
    url: NotRequired[str]
    repo: NotRequired[str]
    path: NotRequired[str]


class ServerThreshold(TypedDict):
    """How one server stops speculating as the batch grows (assets/lab/thresholds.json, as it is)."""

    server: str
    setting: str
    applies_to: str
    rule: str
    default: JsonValue
    example_value: JsonValue
    off_from_batch: int | None  # the first batch at which the example drafts nothing
    chart_label: NotRequired[str]  # its rule's label on the batch chart, where it has off_from_batch
    status: NotRequired[str]
    compares: NotRequired[str]
    sources: list[ThresholdSource]


class Thresholds(TypedDict):
    what: str
    read_on: str
    how_read: str
    servers: list[ServerThreshold]
    not_found: list[str]


class LabPage(TypedDict):
    """Everything the lab page shows that does not depend on the run (`lab_page_data`)."""

    schema: str
    version: int
    kind: str
    devices: list[DeviceSpec]
    model_sizes: list[ModelSize]
    assumptions: AssumptionsData
    tokens: list[int]  # tokens fed per sequence
    batches: list[int]
    gpu_curves: dict[str, dict[str, dict[str, GpuCurve]]]  # by device id, model size, str(batch)
    cpu: CpuCurves
    paper: PaperData
    engine_best: EngineBest
    parallelism: Parallelism
    parallel_run: ParallelRun | None
    thresholds: Thresholds


def r4(x):
    """A number (or a list or dict of them) to 5 significant digits, or more where the page would print it wrong;
    None stays None. The page prints one or two decimals, and a value rounded twice can print wrong (12.614886
    stored as 12.615 prints as 12.62), so a number keeps the fewest digits from 5 that print as the number does."""
    if isinstance(x, (list, tuple)):
        return [r4(v) for v in x]
    if isinstance(x, dict):
        return {k: r4(v) for k, v in x.items()}
    if x is None or isinstance(x, (bool, str, int)):
        return x
    x = float(x)
    for digits in range(5, 10):
        y = float(f"{x:.{digits}g}")
        if f"{y:.2f}" == f"{x:.2f}" and f"{y:.1f}" == f"{x:.1f}":
            return y
    return x


def _gpu_curve(acc, m, batch: int) -> dict:
    """One device x size x batch: relative cost by tokens fed (low, mid, high), the one-token forward, the
    crossover."""
    tokens = np.array(TOKENS, dtype=float)
    corners = [relative_cost(acc, m, tokens, CONTEXT, c, batch) for c in BOUNDS.corners(ASSUME)]
    mid = relative_cost(acc, m, tokens, CONTEXT, ASSUME, batch)
    fits = (m.params + m.kv_values_per_position * CONTEXT * batch) * ASSUME.bytes_per_value <= acc.memory
    return {
        "low": r4([min(c[i] for c in corners + [mid]) for i in range(len(TOKENS))]),
        "mid": r4(list(mid)),
        "high": r4([max(c[i] for c in corners + [mid]) for i in range(len(TOKENS))]),
        "one_token_ms": r4(1000 * seconds(acc, m, 1, CONTEXT, ASSUME, batch)),
        "crossover_tokens": r4(crossover_tokens(acc, m, CONTEXT, ASSUME, batch)),
        "fits_in_memory": fits,
    }


def _line(curve: dict) -> CpuLine:
    """A measured curve relative to its one-token forward, with quartiles where recorded."""
    one_s = curve["greedy_s"]
    return {
        "tokens": [p["tokens"] for p in curve["points"]],
        "relative": r4([p["seconds"] / one_s for p in curve["points"]]),
        "q1": r4([p["q1"] / one_s for p in curve["points"]]) if "q1" in curve["points"][0] else None,
        "q3": r4([p["q3"] / one_s for p in curve["points"]]) if "q3" in curve["points"][0] else None,
        "one_token_ms": r4(1000 * one_s),
    }


def _cpu_lines(curves: dict) -> dict:
    """This CPU's measured curves: relative cost by tokens fed, with quartiles where recorded, and their source."""

    def about(curve):
        return {
            k: curve.get(k)
            for k in (
                "source",
                "machine_description",
                "machine_name",
                "model",
                "dtype",
                "kernels",
                "threads",
                "prefix",
                "command",
                "measured_at",
                "recorded_at",
            )
        }

    out = {"single": None, "batched": None}
    if curves["single"]:
        out["single"] = {**about(curves["single"]), **_line(curves["single"])}
    if curves["batched"]:
        b = curves["batched"]
        out["batched"] = {
            **about(b),
            "batches": [c["batch"] for c in b["curves"]],
            "curves": {str(c["batch"]): _line(c) for c in b["curves"]},
        }
    return out


def _scenario(point: dict, device: str, size: str, label: str, source: str) -> dict:
    """Lookahead Parallelism for one point on k = 1..8 devices (a simulation beyond k = 1)."""
    rows = [predict(point, device, size, k, CONTEXT) for k in DEVICES]
    return {
        "label": label,
        "source": source,
        "device": device,
        "model_size": size,
        "setting": {k: point[k] for k in ("window", "ngram", "guess")},
        "compression": r4(point["compression"]),
        "tokens_fed": r4(point["mean_tokens_fed"]),
        "devices": list(DEVICES),
        "predicted_speedup": r4([r["predicted_speedup"] for r in rows]),
        "range": r4([r["predicted_speedup_range"] for r in rows]),
        "range_parts": r4([r["range_parts"] for r in rows]),
        "step_cost": r4([r["step_cost"] for r in rows]),
        "tokens_per_device": r4([r["tokens_per_device"] for r in rows]),
        "bound": [r["breakdown"]["bound"] for r in rows],
        "kind": [r["kind"] for r in rows],
        "fits_in_memory": rows[0]["assumptions"]["fits_in_memory"],
    }


def _parallelism() -> dict:
    """Both on a 7B model on A100 80GB devices (the paper ran Lookahead Parallelism on 7B and 13B models; every
    device holds the whole model, so a scenario must fit one), both from one sweep (one pool, one token budget, one
    set of prompts, so their compressions compare): the swept point nearest the default 7/4/7, memory-bound on one
    device, beside the widest swept window at N=5, where one device is past its compute/memory crossover and dealing
    the step out over devices is what pays."""
    sweep = [p for p in load_sweeps() if p["pool"] == "prompt"]
    near = min((p for p in sweep if p["ngram"] == 4), key=lambda p: (abs(p["window"] - 7), p["window"]))
    wide = max((p for p in sweep if p["ngram"] == 5), key=lambda p: (p["window"], p["compression"]))

    def scenario(point: dict, label: str) -> dict:
        source = f"this project's sweep with the {point['pool']} pool, {point['max_new_tokens']} new tokens a prompt"
        scen = _scenario(point, "a100-80gb", "7B", label, source)
        return {**scen, "file": point["file"], "max_new_tokens": point["max_new_tokens"]}

    return {
        "default": scenario(near, f"W={near['window']} N=4, the swept window nearest the default 7/4/7"),
        "wide": scenario(wide, f"the widest swept window, W={wide['window']} N=5"),
    }


def _parallel_run() -> dict | None:
    """The recorded Lookahead Parallelism run (`PARALLEL_RUN`): per decoding step, what each rank fed (counted from
    its input) beside what one device would have fed for the same step; the means; the busiest rank's mean against
    the simulation's busiest device at the run's mean step (`stepcost.tokens_per_device`, the engine's deal); the
    bytes each rank sent in the all-gather and the K/V broadcasts (bytes per accepted token) on the steps that
    accepted a candidate's tokens."""
    from ..tracefile import parse_run
    from .stepcost import tokens_per_device

    if not PARALLEL_RUN.exists():
        return None
    run = parse_run(PARALLEL_RUN.read_bytes())
    steps = [s for s in run.parallel.steps if s.ranks]
    k, cfg = len(steps[0].ranks), run.config
    one = [s.n_input for s in steps]
    ranks = [[s.ranks[r].fed for s in steps] for r in range(k)]
    gathered = [min(r.sent for r in s.ranks) for s in steps]
    broadcasts = [
        (max(r.sent for r in s.ranks) - g, s.match_lengths[s.winner]) for s, g in zip(steps, gathered) if s.winner >= 0
    ]
    mean_one = statistics.fmean(one)
    return r4(
        {
            "file": f"assets/lab/{PARALLEL_RUN.name}",
            "command": PARALLEL_COMMAND.format(prompt=shlex.quote(run.prompt)),
            "prompt": run.prompt,
            "model": run.model,
            "device": run.device,
            "recorded_at": run.recorded_at,
            "devices": k,
            "setting": {"window": cfg.window, "ngram": cfg.ngram, "guess": cfg.guess, "tree": cfg.tree},
            "tokens": len(run.parallel.tokens),
            "steps": len(run.parallel.steps),
            "greedy_steps": len(run.baseline.steps),
            "identical": run.parallel.tokens == run.baseline.tokens,
            "step_index": [s.index for s in steps],
            "fed_one": one,
            "fed_ranks": ranks,
            "mean_one": mean_one,
            "mean_ranks": [statistics.fmean(f) for f in ranks],
            "mean_busiest": statistics.fmean(max(f) for f in zip(*ranks)),
            "simulated_busiest": float(tokens_per_device(mean_one, cfg.window, cfg.guess, k)),
            "gathered_bytes": statistics.fmean(gathered),
            "broadcast_steps": len(broadcasts),
            "kv_bytes_per_token": broadcasts[0][0] // broadcasts[0][1] if broadcasts else None,
        }
    )


def _paper() -> dict:
    figures = paper_figures()
    keep = (
        "model",
        "dataset",
        "model_size",
        "speedup",
        "device",
        "devices",
        "parallelism",
        "window",
        "ngram",
        "guess",
        "predicted_speedup",
        "gap",
        "compression_source",
        "source",
        "figure",
        "note",
    )
    rows = [
        {
            **{k: r.get(k) for k in keep},
            "predictions": r4([{k: v for k, v in p.items() if k not in ("kind",)} for p in r["predictions"]]),
        }
        for r in paper_comparison()
    ]
    return {
        "rows": r4(rows),
        "headline": figures["headline"],
        "missing": figures["missing"],
        "rows_source": figures["rows_defaults"]["figure"],
        "baseline": figures["rows_defaults"]["baseline"],
        "models": figures["models"],
        "configs_note": figures["configs_note"],
    }


def lab_page_data(curves: dict | None = None) -> LabPage:
    """Everything the lab page shows that does not depend on the run (its shape: `LabPage` above); `curves` replaces
    this CPU's curves (`calibrate.lab_cpu_curves()`), for tests. Costs are relative to a one-token forward of the
    same batch; the thresholds are assets/lab/thresholds.json as it is."""
    curves = lab_cpu_curves(here=False) if curves is None else curves  # the shipped ones (each names its machine)
    gpu = {acc.name: {m.size: {str(b): _gpu_curve(acc, m, b) for b in BATCHES} for m in MODELS} for acc in ACCELERATORS}
    return {
        "schema": SCHEMA_PAGE,
        "version": VERSION,
        "kind": "model",
        "devices": [
            {
                "id": a.name,
                "name": a.label,
                "bandwidth_bytes_per_s": a.bandwidth,
                "peak_flops": a.peak_flops,
                "memory_bytes": a.memory,
                "link_bandwidth_bytes_per_s": a.link_bandwidth,
                "link_latency_s": a.link_latency,
            }
            for a in ACCELERATORS
        ],
        "model_sizes": [
            {
                "size": m.size,
                "name": m.name,
                "params": m.params,
                "layers": m.layers,
                "kv_values_per_position": m.kv_values_per_position,
            }
            for m in MODELS
        ],
        "assumptions": {
            "mid": asdict(ASSUME),
            "bounds": BOUNDS.to_dict(),
            "context": CONTEXT,
            "why_mid": " ".join(Assumptions.__doc__.split()),
            "why_bounds": " ".join(Bounds.__doc__.split()),
            "names": [f.name for f in fields(Bounds)],
        },
        "tokens": list(TOKENS),
        "batches": list(BATCHES),
        "gpu_curves": gpu,
        "cpu": _cpu_lines(curves),
        "paper": _paper(),
        "engine_best": r4(engine_best()),
        "parallelism": _parallelism(),
        "parallel_run": _parallel_run(),
        "thresholds": json.loads(THRESHOLDS.read_text(encoding="utf-8")),
    }


def _series(results: list[dict], per_batch: bool) -> dict:
    """Predictions over one axis (devices, or batch) as parallel lists: the speed-up, its range, each part of the
    range, the step cost, the bound; over batch also the step cost's range, over devices the busiest device's
    tokens (k = 1 is a model, k > 1 a simulation)."""
    out = {
        "predicted_speedup": r4([r["predicted_speedup"] for r in results]),
        "low": r4([r["predicted_speedup_range"][0] for r in results]),
        "high": r4([r["predicted_speedup_range"][1] for r in results]),
    }
    for name in results[0]["range_parts"]:
        vals = [r["range_parts"][name] for r in results]
        out[f"{name}_low"], out[f"{name}_high"] = r4([v and v[0] for v in vals]), r4([v and v[1] for v in vals])
    out.update(step_cost=r4([r["step_cost"] for r in results]), bound=[r["breakdown"]["bound"] for r in results])
    if per_batch:
        out.update(
            step_cost_low=r4([r["step_cost_range"][0] for r in results]),
            step_cost_high=r4([r["step_cost_range"][1] for r in results]),
        )
    else:
        out.update(tokens_per_device=r4([r["tokens_per_device"] for r in results]))
    return out


def _for_target(run, t, batches, devices, setting: dict, fed: float, band: list, draws) -> dict:
    """One device x model size. A model that does not fit one device gets no Lookahead Parallelism (every device
    would hold the whole model), and its batch-1 figure is the pipeline reading `predict_run` notes; a model that
    fits gets only the batches whose caches fit beside it."""
    alone = predict_run(run, t.device, t.model.size, 1, t=t, draws=draws)
    fits = alone["assumptions"].get("fits_in_memory", True)
    devices = list(devices) if fits else [1]
    by_devices = [alone] + [predict_run(run, t.device, t.model.size, k, t=t, draws=draws) for k in devices[1:]]
    by_batch = [predict_run(run, t.device, t.model.size, 1, batch=b, t=t, draws=draws) for b in batches]
    fitting = [b for b, r in zip(batches, by_batch) if r["assumptions"].get("fits_in_memory", True)]
    if fits and len(fitting) < len(batches):
        by_batch, batches = by_batch[: len(fitting)], fitting
    even = break_even_batch(setting, fed, run.parallel.compression, band, t)

    # where a forward at the run's own context turns compute-bound, per sequence (the sentence beside the bound)
    def per_forward(b: int) -> int | None:
        x = crossover_tokens(t.device, t.model, t.context, t.assumptions, b)
        return None if x is None else math.floor(x * b + 0.5)

    crossover = [per_forward(b) for b in batches] if t.device != "cpu" else None  # a CPU's curve is measured
    return {
        "devices": devices,
        "by_devices": _series(by_devices, False),
        "batches": list(batches),
        "by_batch": _series(by_batch, True),
        "crossover_tokens": crossover,
        "fits_in_memory": fits,
        "fits_in_memory_up_to_batch": max(fitting, default=None),
        "notes": [n for n in alone["note"].split("; ") if n],
        "break_even_batch": {k: v for k, v in even.items() if k not in ("meaning", "kind")},
    }


def _cpu_roof(run) -> dict | None:
    """The run's CPU as a device, from what its machine measured in the process that recorded it: its roof (read
    bandwidth, fp32 throughput), the least time a forward of each width can take under it (the 135M model at the run's
    mean context), the width where that turns compute-bound, and the engine's measured forward at each width of its
    curve against that least time. None where the run did not record a roof and a curve."""
    from .cpuroof import crossover, floor

    m = run.machine
    if not (m.bandwidth and m.flops and m.curve):
        return None
    roof = {"bandwidth": m.bandwidth, "flops": m.flops}
    context = round(statistics.fmean(s.position for s in run.parallel.steps))
    widths = [p.tokens for p in m.curve]
    floors = [floor(roof, "135M", n, context) for n in TOKENS]
    at = {n: floor(roof, "135M", n, context)["seconds"] for n in widths}
    return r4(
        {
            "bandwidth_bytes_per_s": m.bandwidth,
            "flops": m.flops,
            "threads": m.threads,
            "context": context,
            "tokens": list(TOKENS),
            "floor_ms": [1000 * f["seconds"] for f in floors],
            "floor_bound": [f["bound"] for f in floors],
            "crossover_tokens": crossover(roof, "135M", context),
            "measured_tokens": widths,
            "measured_ms": [1000 * p.seconds for p in m.curve],
            "over_floor": [p.seconds / at[p.tokens] for p in m.curve],
        }
    )


def machine_curve(run) -> MachineCurve | None:
    """The cost curve the run's machine measured in the process that recorded it, relative to its one-token forward,
    with the machine's words; None where the run recorded none. Cheap (the trace holds it): a run's payload carries
    it for the sentences beside the run, where `lab_run_data` (its predictions) is computed when the lab asks."""
    curves = machine_curves(run)
    if curves is None:
        return None
    single = curves["single"]
    return {"curve": _line(single), "machine": single["machine_description"], "machine_name": single["machine_name"]}


def lab_run_data(run) -> LabRunData:
    """For one `RunTrace`: per device x model size, its predictions on k = 1..8 devices at batch 1 and at each
    batch on one device, and the batch at which lookahead stops paying; the CPU (135M) at its measured batches,
    with the run's own measurement beside its curve's prediction and its roof. The same numbers `lade lab --run RUN
    --json` prints, rounded. The shape is `LabRunData` (above): on each device, k > 1 is a simulation; a model that
    does not fit one device gets devices [1] and its batch-1 figure reads the weights once per step, as pipeline
    parallelism would; a model that fits gets the batches whose caches fit too; the CPU's are the measured ones."""
    steps, setting = run.parallel.steps, asdict(run.config)
    later = steps[1:]
    fed = statistics.fmean(s.n_input for s in later) if later else 1.0
    draws = bootstrap(steps) if later else None
    band = spread(draws[0]) if later else [run.parallel.compression] * 2
    out = {}
    for acc in ACCELERATORS:
        out[acc.name] = {
            m.size: _for_target(run, run_target(run, acc.name, m.size), BATCHES, DEVICES, setting, fed, band, draws)
            for m in MODELS
        }
    cpu = run_target(run, "cpu", "135M", here=False)  # the run's own machine's curve; else the shipped one
    measured = [1] + [c["batch"] for c in (cpu.curves["batched"] or {"curves": []})["curves"] if c["batch"] > 1]
    out["cpu"] = {
        "135M": {
            **_for_target(run, cpu, measured, (1,), setting, fed, band, draws),
            "source": cpu.curves["single"]["source"],
            "machine": cpu.curves["single"]["machine_description"],
            "machine_name": cpu.curves["single"].get("machine_name"),
            "batched_source": cpu.curves["batched"] and cpu.curves["batched"]["source"],
            "batched_machine_name": cpu.curves["batched"] and cpu.curves["batched"].get("machine_name"),
            "measurement": r4(measured_on_cpu(run)),
            "roof": _cpu_roof(run),
            "curve": _line(cpu.curves["single"]) if cpu.curves["single"] else None,
        }
    }
    some = predict_run(run, "h100", "7B", t=run_target(run, "h100", "7B"))
    return {
        "schema": SCHEMA_RUN,
        "version": VERSION,
        "kind": "model (k > 1 devices: simulation)",
        "break_even_meaning": break_even_batch.__doc__.split(" (")[0],
        "range_method": some["range_method"],
        "run": {
            "model": run.model,
            "dtype": run.dtype,
            "compression": r4(run.parallel.compression),
            "compression_range": r4(band),
            "tokens_fed": r4(fed),
            "steps": len(steps),
            "context": run_target(run, "h100", "7B").context,
            "config": {k: setting[k] for k in ("window", "ngram", "guess")},
        },
        "predictions": out,
    }
