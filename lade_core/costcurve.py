"""`python -m lade_core costcurve`: how long one forward pass takes against how many tokens it carries.

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

import torch

from .layout import StepLayout
from .model import LM

DEFAULT_SIZES = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 160, 192, 256)
ASSETS = Path(__file__).resolve().parents[1] / "assets"


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


def measure_cost_curve(lm: LM, sizes=DEFAULT_SIZES, prefix: int = 100, repeats: int = 9) -> dict:
    """Forward latency (seconds) for each number of tokens in `sizes`, plus the greedy single-token step."""
    cache = lm.new_cache()
    lm.prefill(cache, [(7 * i) % 1000 + 10 for i in range(prefix)])
    tokens = [(13 * i) % 1000 + 10 for i in range(max(sizes))]

    def greedy_step():
        lm.decode_one(cache, 42, prefix)
        lm.sync()
        cache.crop(-1)

    def step_of(n):
        layout = StepLayout(levels=1, window=n - 1, candidates=0, cand_len=1)
        keep = torch.arange(n, device=lm.device)

        def run():
            lm.step_forward(cache, tokens[:n], layout, keep)
            lm.sync()
            cache.crop(-n)

        return run

    medians = interleaved_medians({1: greedy_step, **{n: step_of(n) for n in sizes if n >= 2}}, repeats)
    points = [{"tokens": n, "seconds": seconds} for n, seconds in medians.items()]
    greedy_s = medians[1]
    return {
        "model": lm.name, "device": str(lm.device), "dtype": str(lm.dtype).removeprefix("torch."),
        "kernels": lm.kernels,
        "threads": torch.get_num_threads(), "prefix": prefix, "greedy_s": greedy_s, "points": points,
    }


def cost_at(curve: dict, tokens: int) -> float:
    """Interpolated forward time for `tokens` tokens (linear between measured points, extrapolated past the end)."""
    pts = curve["points"]
    for a, b in zip(pts, pts[1:]):
        if a["tokens"] <= tokens <= b["tokens"]:
            f = (tokens - a["tokens"]) / (b["tokens"] - a["tokens"])
            return a["seconds"] + f * (b["seconds"] - a["seconds"])
    last, prev = pts[-1], pts[-2]
    slope = (last["seconds"] - prev["seconds"]) / (last["tokens"] - prev["tokens"])
    return last["seconds"] + slope * (tokens - last["tokens"])


def default_curve_path(device: str) -> Path:
    return ASSETS / f"costcurve-{torch.device(device).type}.json"


def run_costcurve(args) -> dict:
    from .loading import load_model

    lm = load_model(args.model, args.device, args.dtype)
    sizes = [n for n in DEFAULT_SIZES if n <= args.max_tokens]
    curve = measure_cost_curve(lm, sizes)
    out = Path(args.out) if args.out else default_curve_path(str(lm.device))
    out.write_text(json.dumps(curve, indent=1), encoding="utf-8")
    print(f"{lm.name} on {lm.device}: greedy step {1000 * curve['greedy_s']:.1f} ms")
    for p in curve["points"]:
        print(f"{p['tokens']:5d} tokens  {1000 * p['seconds']:8.1f} ms  {p['seconds'] / curve['greedy_s']:6.2f}x greedy")
    print(f"wrote {out}")
    return curve
