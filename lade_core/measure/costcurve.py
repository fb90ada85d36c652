"""The cost curve: how long one forward pass takes against how many tokens it carries, on this device.

This is the curve the whole method lives on. Where a forward of 100 tokens costs about what a forward of 1 costs
(a GPU decoding a model much larger than its memory bandwidth can feed), lookahead's extra tokens are nearly free
and compression turns into speed-up. Where the cost grows with the tokens (a CPU), each extra token is paid for.

Each point is a real lookahead-shaped forward (one window level of n-1 tokens on top of a ~100-token cached
prefix, the 4D mask and explicit positions). After a warm-up, each round times the greedy step and every size once,
in turn, and each point is the median over the rounds: on a shared machine, load that comes and goes over seconds
then touches one sample of every point instead of bending a stretch of the curve.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from ..layout import StepLayout
from ..paths import measurement
from ..sizes import StepCost

DEFAULT_SIZES = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 160, 192, 256)


def interleaved_medians(fns: dict, repeats: int) -> dict:
    """Median seconds of each function, timed in turn (one run of each per round, after one warm-up run each), so
    that the machine's load, which drifts over seconds on a shared host, weighs on all of them alike."""
    for fn in fns.values():
        fn()
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) for name, ts in times.items()}


def measure_cost_curve(lm, sizes=DEFAULT_SIZES, prefix: int = 100, repeats: int = 9) -> dict:
    """Forward latency (seconds) for each number of tokens in `sizes`, plus the greedy single-token step, on `lm`
    (an `LM`)."""
    import torch

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

    medians = interleaved_medians({1: greedy_step, **{n: step_of(n) for n in sizes if n >= 2}}, repeats)
    return {
        "model": lm.name, "device": str(lm.device), "dtype": str(lm.dtype).removeprefix("torch."),
        "kernels": lm.kernels, "threads": torch.get_num_threads(), "prefix": prefix, "greedy_s": medians[1],
        "points": [{"tokens": n, "seconds": seconds} for n, seconds in sorted(medians.items())],
        "recorded_at": time.strftime("%Y-%m-%d"),
    }


def step_cost(curve: dict) -> StepCost:
    """The curve as the engine's `StepCost`: forward time relative to a greedy step, by tokens fed."""
    return StepCost.from_seconds([(p["tokens"], p["seconds"]) for p in curve["points"]], curve["greedy_s"])


def curve_path(device: str) -> Path:
    """Where the saved curve of this kind of device lives: assets/costcurve-<cpu|cuda|mps>.json."""
    return measurement(f"costcurve-{str(device).split(':')[0]}")


def load_curve_file(path: Path) -> dict | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
