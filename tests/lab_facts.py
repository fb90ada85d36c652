"""Python's own reading of the speed lab: every fact the lab's sentences state (each number the page wraps in
`<span class="fact" data-fact=NAME>`), for a recorded run at a selection, computed from the definitions the
project's docstrings give, not by calling the code that makes the page's data (lade_core/measure/labdata.py,
lab.py, stepcost.py, roofline.py's functions).

What is read, and from where:

* the run (a `RunTrace`): compression = tokens written / steps; tokens fed = the mean `n_input` over the steps after
  the prefill (step 0); the KV context = the steps' mean position (lab.py `run_target`: "the KV context the run's
  steps saw on average"; rounded to a whole position, as a context is a count of positions);
* the register of outside facts: roofline.py's public data (`ACCELERATORS`, `MODELS`, `ASSUME`, `BOUNDS`: device
  peaks, model shapes, assumptions and their bounds), assets/lab/thresholds.json, assets/lab/paper.json, the sweeps
  (assets/sweep-*.json) and the CPU cost curve files;
* the formulas, re-derived here from the docstrings: roofline.py's module docstring (the time of a forward),
  `forward_seconds` (attention FLOPs; which term bounds a forward), stepcost.py (a step's cost against a one-token
  forward of the same batch on one device; the busiest device's tokens; the exchange), lab.py (speed-up =
  compression / step cost; the break-even batch), costcurve.py `step_cost` / sizes.py `StepCost` (a measured curve
  read piecewise linearly, extrapolated along its last segment; quartiles against the median greedy step).

The one thing taken from the project's code rather than re-derived: the run's bootstrap over its steps
(`lade_core.measure.lab.bootstrap`, a seeded resampling: DRAWS draws, SEED), whose draws feed the `_low/_high`
ranges (compression_*, spread_*, speedup_*, break_even_low/high). Every other number, including each draw's
speed-up and the percentiles over the draws, is computed here.

`page_lab` (the page's `boot.lab`) is read for provenance only: which CPU cost curve file the page names (its
`source` and `measured_at`) and which sweep file its Lookahead Parallelism scenarios name. None of its numbers is used.

Import-only (no tests here); no browser, no model.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import fields
from pathlib import Path

import numpy as np
from lesson_facts import same  # noqa: F401 (re-exported: floats compare at the precision shown)
from test_outside_facts import first_batch_without_drafts

from lade_core.measure import roofline as register  # the register: data classes and their values, no formulas
from lade_core.paths import ROOT

ASSETS = ROOT / "assets"
# The lab's menus (labdata.py BATCHES and DEVICES: which selections the page offers). A menu, not a figure.
BATCH_MENU = (1, 2, 4, 8, 16, 32, 64, 128, 256)
DEVICE_MENU = tuple(range(1, 9))
PAGE_CONTEXT = 512  # labdata.CONTEXT: the KV context of the page's curves and scenarios (boot.lab.assumptions.context)
MAX_BATCH = 256  # lab.py MAX_BATCH: break_even_batch tries every integer batch up to here on a GPU
BYTES_PER_TOKEN_ID = 4  # stepcost.exchange_s: "an all-gather of int32 tokens"


# -- the roofline, from roofline.py's docstrings ---------------------------------------------------------------------
def params(m) -> int:
    """Weights of a decoder of shape `m` counted here: embeddings (one matrix when tied), per layer the q and o
    projections (hidden x heads*head_dim each), k and v (hidden x kv_heads*head_dim each), a gated MLP (three
    hidden x intermediate matrices) and two norms, plus the final norm. (ModelShape's docstring: the count matches
    the published totals, Llama-2-7B 6,738,415,616 and SmolLM2-135M 134,515,008; checked in `check_register`.)"""
    attention = 2 * m.hidden * m.heads * m.head_dim + 2 * m.hidden * m.kv_heads * m.head_dim
    per_layer = attention + 3 * m.hidden * m.intermediate + 2 * m.hidden
    return m.vocab * m.hidden * (1 if m.tied else 2) + m.layers * per_layer + m.hidden


def kv_values(m) -> int:
    """K and V values cached per position, over all layers."""
    return 2 * m.layers * m.kv_heads * m.head_dim


def check_register() -> None:
    counts = {m.name: params(m) for m in register.MODELS}
    assert counts["Llama-2-7B"] == 6_738_415_616 and counts["SmolLM2-135M"] == 134_515_008, counts


def forward(acc, m, tokens, context: int, a, batch=1) -> dict:
    """One forward of `batch` sequences of `tokens` tokens over `context` cached positions (roofline.py's module
    docstring): memory = the weights read once, every sequence's KV cache read, the new tokens' KV written; compute =
    2 FLOPs per weight per token plus attention, 4 * layers * heads * head_dim * tokens * context FLOPs per sequence
    (`forward_seconds`' docstring); at the achievable bandwidth and FLOP rate (peak x efficiency);
    t = max(memory, compute) + (1 - overlap) * min(memory, compute) + layers * overhead_per_layer.
    `bound`: the largest of the three terms (memory, compute, overhead). Arrays allowed for tokens and batch."""
    bandwidth = acc.bandwidth * a.bandwidth_efficiency
    flops = acc.peak_flops * a.compute_efficiency
    b = a.bytes_per_value
    memory = (params(m) * b + batch * context * kv_values(m) * b + batch * tokens * kv_values(m) * b) / bandwidth
    compute = (2 * params(m) * tokens * batch + 4 * m.layers * m.heads * m.head_dim * tokens * context * batch) / flops
    overhead = m.layers * a.overhead_per_layer
    seconds = np.maximum(memory, compute) + (1 - a.overlap) * np.minimum(memory, compute) + overhead
    out = {"seconds": seconds, "memory": memory, "compute": compute, "overhead": overhead}
    if np.ndim(seconds) == 0:
        terms = {"memory": float(memory), "compute": float(compute), "overhead": overhead}
        out["bound"] = max(terms, key=terms.get)
    return out


def crossover(acc, m, context: int, a, batch: int) -> float | None:
    """Tokens per sequence at which compute time equals memory time (both are linear in the tokens fed): None where
    compute never overtakes (it grows no faster than memory)."""
    bandwidth, flops = acc.bandwidth * a.bandwidth_efficiency, acc.peak_flops * a.compute_efficiency
    b = a.bytes_per_value
    memory_fixed = (params(m) * b + batch * context * kv_values(m) * b) / bandwidth
    memory_per_token = batch * kv_values(m) * b / bandwidth
    compute_per_token = (2 * params(m) * batch + 4 * m.layers * m.heads * m.head_dim * context * batch) / flops
    if compute_per_token <= memory_per_token:
        return None
    return memory_fixed / (compute_per_token - memory_per_token)


def corners() -> list:
    """The 16 corners of the assumptions' bounds (roofline.py `Bounds`: every assumption at one of its two bounds;
    bytes per value stays at its mid)."""
    names = [f.name for f in fields(register.Bounds)]
    mid = register.ASSUME
    out = []
    for values in itertools.product(*(getattr(register.BOUNDS, n) for n in names)):
        kw = {f.name: getattr(mid, f.name) for f in fields(register.Assumptions)}
        kw.update(dict(zip(names, values)))
        out.append(register.Assumptions(**kw))
    return out


# -- a step's cost on a GPU, from stepcost.py's docstrings ------------------------------------------------------------
def _deal(window: int, guess: int, rows: float, devices: int) -> list[tuple[int, int, int]]:
    """(first column, columns, candidates) per device, as shares.py's docstring deals a step: contiguous column
    blocks, the odd ones to the earlier devices; then each candidate (rows tokens) to the device with the fewest
    tokens so far, the lower rank on a tie. A device with columns feeds level 0 up to its last column and its own
    columns at the rows - 1 deeper levels."""
    blocks, first = [], 0
    for r in range(devices):
        n = window // devices + (1 if r < window % devices else 0)
        blocks.append([first, n, 0])
        first += n
    load = [1 + ((f + n + (rows - 1) * n) if n else 0) for f, n, _ in blocks]
    for _ in range(guess):
        r = load.index(min(load))
        blocks[r][2] += 1
        load[r] += rows
    return [tuple(b) for b in blocks]


def busiest(fed, window: int, guess: int, devices: int):
    """Tokens the busiest of k devices feeds (stepcost `tokens_per_device`' docstring, shares.py's deal), N-1 read
    back from fed = 1 + (W + G)(N-1)."""
    if devices == 1 or window + guess == 0:
        return fed
    if np.ndim(fed):
        return np.array([busiest(float(f), window, guess, devices) for f in np.ravel(fed)]).reshape(np.shape(fed))
    rows = (fed - 1) / (window + guess)
    return max(1 + ((f + n + (rows - 1) * n) if n else 0) + g * rows for f, n, g in _deal(window, guess, rows, devices))


def exchange(acc, setting: dict, devices: int, batch: int) -> float:
    """Seconds a step spends exchanging over k > 1 devices (stepcost `exchange_s`, shares.py `payload`): every
    device's int32s, padded to the longest (3 + its columns + N per candidate), for each sequence, at the link's
    latency plus the bytes over its bandwidth. A few hundred bytes against 15 us of latency, far below the precision
    the page prints."""
    if devices == 1:
        return 0.0
    W, G, N = setting["window"], setting["guess"], setting["ngram"]
    longest = max(3 + n + g * N for _, n, g in _deal(W, G, N - 1, devices))
    return acc.link_latency + BYTES_PER_TOKEN_ID * batch * devices * longest / acc.link_bandwidth


def gpu_cost(acc, m, context, setting, fed, devices, batch, a):
    """A step's cost: its forward on the busiest device plus the exchange, against a one-token forward of the same
    batch on one device (stepcost.py's module docstring)."""
    carried = busiest(fed, setting["window"], setting["guess"], devices)
    one = forward(acc, m, 1, context, a, batch)["seconds"]
    return (forward(acc, m, carried, context, a, batch)["seconds"] + exchange(acc, setting, devices, batch)) / one


def gpu_band(acc, m, context, setting, fed, devices, batch):
    """(mid, low, high): the mid assumptions, and the extremes over the corners of the bounds (mid included)."""
    mid = gpu_cost(acc, m, context, setting, fed, devices, batch, register.ASSUME)
    at = [gpu_cost(acc, m, context, setting, fed, devices, batch, c) for c in corners()]
    return mid, np.minimum(np.min(at, axis=0), mid), np.maximum(np.max(at, axis=0), mid)


def fits(acc, m, context: int, batch: int) -> bool:
    """Whether the weights and `batch` sequences' caches fit one device's memory (bf16, the mid bytes per value)."""
    return (params(m) + kv_values(m) * context * batch) * register.ASSUME.bytes_per_value <= acc.memory


# -- the CPU's measured curves, from costcurve.py / sizes.py ------------------------------------------------------
def curve_reader(curve: dict, which: str = "seconds"):
    """A measured curve as a function of tokens fed: each point's `which` ("seconds", or a quartile "q1"/"q3", the
    median where a point has none) over the median greedy step, read piecewise linearly between the points (a
    (1, 1.0) point first where the curve starts above one token), extrapolated along the last segment."""
    pts = sorted((int(p["tokens"]), p.get(which, p["seconds"]) / curve["greedy_s"]) for p in curve["points"])
    if pts[0][0] != 1:
        pts = [(1, 1.0), *pts]
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]

    def read(tokens: float) -> float:
        if len(pts) == 1 or tokens <= xs[0]:
            return ys[0]
        for (a, ca), (b, cb) in zip(pts, pts[1:]):
            if tokens <= b:
                return ca + (tokens - a) * (cb - ca) / (b - a)
        (a, ca), (b, cb) = pts[-2], pts[-1]
        return cb + (tokens - b) * (cb - ca) / (b - a)

    return read


def cpu_files(page_lab: dict) -> tuple[dict, dict | None]:
    """The single and batched CPU curve files the page names: its `source` says "shipped" (assets/) or "measured
    here" (this machine's cache, the file whose `measured_at` the page states)."""

    def find(about: dict | None, shipped: Path, kind: str) -> dict | None:
        if about is None:
            return None
        if about["source"] == "shipped":
            return json.loads(shipped.read_text(encoding="utf-8"))
        from lade_core.checkpoint import cache_root  # where the loader keeps its cache (no numbers there)

        for path in sorted((cache_root() / "costcurves").glob(f"*-{kind}.json")):
            curve = json.loads(path.read_text(encoding="utf-8"))
            if curve.get("measured_at") == about["measured_at"] and curve.get("model") == about["model"]:
                return curve
        raise AssertionError(f"the page names a {kind} curve measured at {about['measured_at']}: not in the cache")

    single = find(page_lab["cpu"]["single"], ASSETS / "costcurve-cpu.json", "curve")
    batched = find(page_lab["cpu"]["batched"], ASSETS / "costcurve-cpu-batched.json", "batched")
    return single, batched


def own_curves(run) -> tuple[dict, dict | None] | None:
    """The curve the run's own machine measured in the process that recorded it (`RunTrace.machine`: its 1-token
    point is the greedy step), and the shipped batched curve only where that was measured on the same machine,
    threads and layouts (lab.py `machine_curves`); None where the run recorded no curve."""
    m = run.machine
    if not m.curve:
        return None
    single = {
        "points": [{"tokens": p.tokens, "seconds": p.seconds, "q1": p.q1, "q3": p.q3} for p in m.curve],
        "greedy_s": next(p.seconds for p in m.curve if p.tokens == 1),
    }
    shipped = json.loads((ASSETS / "costcurve-cpu-batched.json").read_text(encoding="utf-8"))
    same = ((shipped.get("machine") or {}).get("description"), shipped.get("threads"), shipped.get("kernels")) == (
        m.description,
        m.threads,
        m.kernels,
    )
    return single, shipped if same else None


def cpu_curve(single: dict, batched: dict | None, batch: int) -> dict:
    """Batch 1 reads the single curve, a larger batch its own curve in the batched file (stepcost `_cpu_curve`)."""
    if batch == 1:
        return single
    return next(c for c in batched["curves"] if c["batch"] == batch)


# -- the run ------------------------------------------------------------------------------------------------------
def run_numbers(run) -> dict:
    steps = run.parallel.steps
    later = steps[1:]
    compression = len(run.parallel.tokens) / len(steps)
    fed = sum(s.n_input for s in later) / len(later) if later else 1.0
    context = round(sum(s.position for s in steps) / len(steps))
    setting = {"window": run.config.window, "ngram": run.config.ngram, "guess": run.config.guess}
    if later:
        from lade_core.measure.lab import bootstrap  # the seeded draws only (see the module docstring)

        draws = bootstrap(steps)  # (compression, mean tokens fed) of each draw
    else:
        draws = None
    return {
        "compression": compression,
        "fed": fed,
        "context": context,
        "setting": setting,
        "draws": draws,
        "own": own_curves(run),
    }


def p10_p90(values) -> list[float]:
    return [float(v) for v in np.percentile(values, [10, 90])]


# -- formatting as the page prints ------------------------------------------------------------------------------------
def half_up(x: float) -> int:
    """JavaScript's Math.round for a positive number."""
    return int(math.floor(x + 0.5))


def thousands(n: int) -> str:
    return f"{n:,}"


# -- the facts --------------------------------------------------------------------------------------------------------
def selection_on_page(selection: dict, batches: list[int], devices: list[int]) -> tuple[int, int]:
    """The page's menus (lade-lab.js `pick`): a batch it does not offer falls back to 1; several devices only at
    batch 1 and where offered."""
    batch = selection.get("batch", 1) if selection.get("batch", 1) in batches else 1
    k = selection.get("devices", 1) if batch == 1 and selection.get("devices", 1) in devices else 1
    return batch, k


def lab_facts(run, selection: dict, page_lab: dict) -> dict:
    """Every fact the lab states for `run` at `selection` ({device, size, batch, devices}): {name: value}, a float
    where the page prints it rounded (compare with `same`), else the exact text (an int, or a string with en-US
    thousands separators)."""
    check_register()
    r = run_numbers(run)
    compression, fed, setting, draws = r["compression"], r["fed"], r["setting"], r["draws"]
    out: dict = {}
    device, size = selection["device"], selection["size"]
    cpu = device == "cpu"

    out["compression"] = compression
    band = p10_p90(draws[0]) if draws is not None else [compression, compression]  # compression over the steps
    out["compression_low"], out["compression_high"] = band
    out["fed"] = fed

    acc = m = None
    if cpu:
        single, batched = r["own"] or cpu_files(page_lab)
        batches = [1] + [c["batch"] for c in (batched or {"curves": []})["curves"] if c["batch"] > 1]
        batch, k = selection_on_page(selection, batches, [1])
        curve = cpu_curve(single, batched, batch)
        mid_of, low_of, high_of = (curve_reader(curve, w) for w in ("seconds", "q1", "q3"))
        mid, low, high = mid_of(fed), low_of(fed), high_of(fed)
        rel = np.vectorize(mid_of)
        recorded = all("q1" in p for p in curve["points"])  # the shipped single curve kept medians only
        other = "measurement"
    else:
        acc = register.accelerator(device)
        m = register.model_shape(size)
        context = r["context"]
        whole = fits(acc, m, context, 1)
        batches = [b for b in BATCH_MENU if fits(acc, m, context, b)] if whole else list(BATCH_MENU)
        batch, k = selection_on_page(selection, batches, list(DEVICE_MENU) if whole else [1])
        mid, low, high = (float(x) for x in gpu_band(acc, m, context, setting, fed, k, batch))
        rel = lambda tokens: gpu_cost(acc, m, context, setting, tokens, k, batch, register.ASSUME)  # noqa: E731
        recorded, other = True, "assumptions"

    # lab.py's module docstring: "speed-up = compression / step cost"; the range's parts as `_result` combines them:
    # the compression part is the 10th-90th percentile of the bootstrap's speed-ups (each draw's compression over the
    # mid cost at its tokens fed), the other part the compression over the cost's high and low; the whole range the
    # compression part stretched by each end of the cost's range (mid/high, mid/low).
    out["speedup"] = compression / mid
    spread = p10_p90(draws[0] / rel(draws[1])) if draws is not None else [compression / mid] * 2
    out["spread_low"], out["spread_high"] = spread
    out["speedup_low"], out["speedup_high"] = spread[0] * mid / high, spread[1] * mid / low
    if recorded:
        out[f"{other}_low"], out[f"{other}_high"] = compression / high, compression / low
    out["step_cost"] = mid
    if batch > 1:
        out["batch"] = batch
        out["fed_all"] = thousands(half_up(batch * fed))
    if k > 1:
        out["devices"] = k
        out["fed_busiest"] = busiest(fed, setting["window"], setting["guess"], k)
    if not cpu:
        # "the forward is B-bound (this GPU turns compute-bound past about X tokens per forward ...)": X is where
        # compute overtakes memory at the run's own mean context (the context the step cost and the bound beside it
        # are read at), tokens per sequence times the batch; not said where the forward is overhead-bound (the
        # crossover weighs memory against compute only, so it would sit beside a forward past it yet not
        # compute-bound).
        carried = busiest(fed, setting["window"], setting["guess"], k)
        bound = forward(acc, m, carried, context, register.ASSUME, batch)["bound"]
        x = crossover(acc, m, context, register.ASSUME, batch)
        if x is not None and bound != "overhead":
            out["crossover"] = half_up(x * batch)

    # a range whose two ends print alike is stated once, as its low end ("0.83x", not "0.83x to 0.83x")
    for name in ("compression", "speedup", "spread", other):
        if f"{name}_high" in out and f"{out[f'{name}_low']:.2f}" == f"{out[f'{name}_high']:.2f}":
            del out[f"{name}_high"]
    out.update(break_even(r, band, cpu, page_lab, acc, m))
    out.update(page_facts(page_lab))
    return out


def break_even(r: dict, band: list, cpu: bool, page_lab: dict, acc, m) -> dict:
    """lab.py `break_even_batch`: the smallest batch at which the predicted speed-up (compression / step cost on one
    device) falls below 1, None where it does not up to the largest batch tried (every integer to MAX_BATCH on a
    GPU, the measured batches on the CPU); its range: the earliest at the 10th-percentile compression over the
    cost's high, the latest at the 90th over its low. `why_it_stops`: what bounds greedy's and lookahead's forwards
    at that batch, by the roofline at its mid assumptions."""
    compression, fed, setting = r["compression"], r["fed"], r["setting"]
    if cpu:
        single, batched = r["own"] or cpu_files(page_lab)
        batches = np.array(sorted(c["batch"] for c in (batched or {"curves": []})["curves"]) or [1])
        mid, low, high = (
            np.array([curve_reader(cpu_curve(single, batched, int(b)), w)(fed) for b in batches])
            for w in ("seconds", "q1", "q3")
        )
    else:
        batches = np.arange(1, MAX_BATCH + 1)
        mid, low, high = gpu_band(acc, m, r["context"], setting, fed, 1, batches)

    def first(speed):
        below = np.nonzero(speed < 1)[0]
        return int(batches[below[0]]) if len(below) else None

    predicted = first(compression / mid)
    earliest, latest = first(band[0] / high), first(band[1] / low)
    out: dict = {}
    if predicted is None:
        out["largest_batch"] = int(batches[-1])
        return out
    out["break_even"] = predicted
    if not predicted == earliest == latest:  # a range of one batch is stated as that batch alone
        out["break_even_low"] = earliest if earliest is not None else "–"
        if latest is None:
            out["largest_batch"] = int(batches[-1])
        else:
            out["break_even_high"] = latest
    if predicted > 1:  # at batch 1 the reason speaks of "one sequence", "one token"
        out["why_batch"] = predicted
    if not cpu:
        greedy = forward(acc, m, 1, r["context"], register.ASSUME, predicted)["bound"]
        wide = forward(acc, m, fed, r["context"], register.ASSUME, predicted)["bound"]
        if greedy != "compute" and wide == "compute":  # "lookahead crosses": the sentence counts its tokens
            out["why_tokens"] = thousands(half_up(predicted * fed))
    return out


def page_facts(page_lab: dict) -> dict:
    """The facts outside the prediction: the servers' example settings, the paper's headline device counts, the
    Lookahead Parallelism scenarios and the CPU curve's threads and one-token time."""
    out: dict = {}
    thresholds = json.loads((ASSETS / "lab" / "thresholds.json").read_text(encoding="utf-8"))
    for n, server in enumerate(thresholds["servers"]):
        off = first_batch_without_drafts(server)
        if off:
            out[f"off_from_batch_{n}"] = off
    paper = json.loads((ASSETS / "lab" / "paper.json").read_text(encoding="utf-8"))
    for n, claim in enumerate(paper["headline"]):
        if isinstance(claim["devices"], (int, float)) and not isinstance(claim["devices"], bool):
            out[f"paper_devices_{n}"] = claim["devices"]
    out.update(scenarios(page_lab))
    single, _ = cpu_files(page_lab)
    if single is not None:
        out["cpu_one_token_ms"] = 1000 * single["greedy_s"]
    return out


def sweep_points(file: str) -> list[dict]:
    sweep = json.loads((ROOT / file).read_text(encoding="utf-8"))
    return [{**p, "pool": sweep["pool"]} for p in sweep["points"]]


def scenarios(page_lab: dict) -> dict:
    """Lookahead Parallelism (labdata `_parallelism`' docstring): on a 7B model on A100 80GB devices, from one sweep,
    the swept point nearest the default 7/4/7 (N=4, the window nearest 7, the narrower on a tie) beside the widest
    swept window at N=5 (the higher compression on a tie); each predicted on k = 1..8 devices at batch 1 and the page's
    context: speed-up = the point's compression / the step cost at its mean tokens fed. The sweep is the one the
    page's scenarios name (their `file`; their `source` says it in words)."""
    scen = page_lab["parallelism"]
    files = {name: scen[name]["file"] for name in ("default", "wide")}
    acc, m = register.accelerator("a100-80gb"), register.model_shape("7B")
    out: dict = {}
    picked = {}
    for name in ("default", "wide"):
        points = sweep_points(files[name])
        if name == "default":
            point = min((p for p in points if p["ngram"] == 4), key=lambda p: (abs(p["window"] - 7), p["window"]))
        else:
            point = max((p for p in points if p["ngram"] == 5), key=lambda p: (p["window"], p["compression"]))
        setting = {key: point[key] for key in ("window", "ngram", "guess")}
        speedups = [
            point["compression"]
            / gpu_cost(acc, m, PAGE_CONTEXT, setting, point["mean_tokens_fed"], k, 1, register.ASSUME)
            for k in DEVICE_MENU
        ]
        out[f"{name}_one"], out[f"{name}_top"] = speedups[0], speedups[-1]
        out[f"{name}_devices"] = len(DEVICE_MENU)
        picked[name] = (point, speedups)
    if files["default"] == files["wide"]:
        out["default_compression"] = picked["default"][0]["compression"]
        out["wide_compression"] = picked["wide"][0]["compression"]
    wide_point, wide_speedups = picked["wide"]
    if max(wide_speedups) <= wide_point["compression"]:
        out["wide_ceiling"] = wide_point["compression"]
    return out


def disagreements(shown: dict, want: dict) -> list[tuple]:
    """(name, shown, want) for every fact shown and not wanted, wanted and not shown, or shown otherwise."""
    out = []
    for name in sorted(set(shown) | set(want)):
        if name not in shown or name not in want:
            out.append((name, shown.get(name), want.get(name)))
        elif not same(shown[name], want[name]):
            out.append((name, shown[name], want[name]))
    return out
