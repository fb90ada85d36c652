"""The cost curve: how long one forward pass takes against how many tokens it carries, on this device.

This is the curve the whole method lives on. Where a forward of 100 tokens costs about what a forward of 1 costs
(a GPU decoding a model much larger than its memory bandwidth can feed), lookahead's extra tokens are nearly free
and compression turns into speed-up. Where the cost grows with the tokens (a CPU), each extra token is paid for.

Each point is a real lookahead-shaped forward (one window level of n-1 tokens on top of a ~100-token cached
prefix, the 4D mask and explicit positions), timed the way a race runs them: each round takes the widths in a new
(seeded) order and puts a greedy one-token forward before each, so that widths change every forward, layouts switch
where the kernel plan switches them, and the greedy step is timed between wide ones as a race's greedy lane is.
Each point is the median over the rounds (with the quartiles, the spread the lab shows, and the fastest round); the
greedy step's is over all its samples. On a shared machine, load that comes and goes over seconds then touches one
sample of every point instead of bending a stretch of the curve. The host's load average at the start is recorded
beside it, and so is the machine (`machine.identity`). The batched variant (B sequences per forward) is
`batched.py`; where a curve is kept per machine and process, `calibrate.py`.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path

from ..layout import StepLayout
from ..machine import identity
from ..paths import measurement
from ..sizes import StepCost

DEFAULT_SIZES = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 160, 192, 256)


CLOCKS = {"wall": time.perf_counter, "thread": time.thread_time}


def interleaved_samples(fns: dict, repeats: int, clock: str = "wall") -> dict:
    """Seconds of each function, `repeats` samples each, timed in turn (one run of each per round, after one
    warm-up run each), so that the machine's load, which drifts over seconds on a shared host, weighs on all alike.
    `clock` "thread" times this thread's CPU seconds instead of the wall's: with torch on one thread the whole
    forward runs on it, and the time other processes take the core no longer counts (see `check_clock`)."""
    tick = CLOCKS[clock]
    for fn in fns.values():
        fn()
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = tick()
            fn()
            times[name].append(tick() - t0)
    return times


def check_clock(clock: str) -> None:
    """The thread clock is a forward's time only when torch runs on one thread (else the others' work is lost)."""
    import torch

    if clock not in CLOCKS:
        raise ValueError(f"clock {clock!r}: one of {', '.join(CLOCKS)}")
    if clock == "thread" and torch.get_num_threads() != 1:
        raise ValueError(
            f"the thread clock needs torch on one thread (OMP_NUM_THREADS=1), not {torch.get_num_threads()}"
        )


def interleaved_medians(fns: dict, repeats: int) -> dict:
    """Median seconds of each function, timed as `interleaved_samples` does."""
    return {name: statistics.median(ts) for name, ts in interleaved_samples(fns, repeats).items()}


def summarise(samples: list[float]) -> dict:
    """Median and quartiles of one point's samples (the quartiles are the samples' own when there are few)."""
    ordered = sorted(samples)
    q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive") if len(ordered) > 1 else ordered * 3
    return {"seconds": statistics.median(ordered), "q1": q1, "q3": q3, "min": ordered[0]}


def header(lm, prefix: int) -> dict:
    """What every curve records about how and where it was measured."""
    import torch

    return {
        "model": lm.name,
        "device": str(lm.device),
        "dtype": str(lm.dtype).removeprefix("torch."),
        "kernels": lm.kernels,
        "threads": torch.get_num_threads(),
        "prefix": prefix,
        "machine": identity(str(lm.device)),
        "torch": torch.__version__,
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,  # the host's, at the start
        "recorded_at": time.strftime("%Y-%m-%d"),
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }


def measure_cost_curve(lm, sizes=DEFAULT_SIZES, prefix: int = 100, repeats: int = 9, seed: int = 0) -> dict:
    """Forward latency (seconds) for each number of tokens in `sizes`, plus the greedy single-token step, on `lm`
    (an `LM`), timed the way a race runs them (the module's docstring)."""
    import random

    cache = lm.new_cache()
    lm.prefill(cache, [(7 * i) % 1000 + 10 for i in range(prefix)])
    tokens = [(13 * i) % 1000 + 10 for i in range(max(sizes))]

    def greedy_step():
        lm.decode_one(cache, 42, prefix)
        lm.sync()
        cache.crop(-1)

    def step_of(n):
        layout = StepLayout.plain(levels=1, window=n - 1, candidates=0, cand_len=0)

        def run():
            lm.step_forward(cache, tokens[:n], layout)
            lm.sync()
            cache.crop(-n)

        return run

    wide = {n: step_of(n) for n in sizes if n >= 2}
    for fn in (greedy_step, *wide.values()):  # a warm-up of each, not kept
        fn()
    samples: dict[int, list[float]] = {1: [], **{n: [] for n in wide}}
    order, rng = list(wide), random.Random(seed)
    for _ in range(repeats):
        rng.shuffle(order)
        for n in order:
            for width, fn in ((1, greedy_step), (n, wide[n])):
                t0 = time.perf_counter()
                fn()
                samples[width].append(time.perf_counter() - t0)
    points = [{"tokens": n, **summarise(ts)} for n, ts in sorted(samples.items())]
    half = len(samples[1]) // 2
    first, second = statistics.median(samples[1][:half]), statistics.median(samples[1][half:])
    return {
        **header(lm, prefix),
        "repeats": repeats,
        "how": "race-like: widths in a new order each round, a greedy step before each",
        "greedy_s": points[0]["seconds"],
        # how far the greedy step moved within this one measurement: its first half of samples against its second
        "greedy_drift": max(first, second) / min(first, second),
        "points": points,
    }


def step_cost(curve: dict, which: str = "seconds") -> StepCost:
    """The curve as the engine's `StepCost`: forward time relative to a greedy step, by tokens fed. `which` reads
    the medians ("seconds") or a quartile ("q1", "q3"; the medians where a curve has none) against the median
    greedy step."""
    return StepCost.from_seconds(
        [(p["tokens"], p.get(which, p["seconds"])) for p in curve["points"]], curve["greedy_s"]
    )


def curve_path(device: str) -> Path:
    """Where the saved curve of this kind of device lives: assets/costcurve-<cpu|cuda|mps>.json."""
    return measurement(f"costcurve-{str(device).split(':')[0]}")


def load_curve_file(path: Path) -> dict | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
