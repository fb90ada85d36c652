"""Stock linear layers against oneDNN-packed ones (what `load_model` uses on a CPU in fp32), side by side, with
torch's `MkldnnLinear` (`torch.utils.mkldnn.to_mkldnn`, which converts every input and output) as a third path.

All copies of the model are loaded into one process; for every benchmark prompt greedy decoding runs on each in
turn, so the ratios are measured under the same machine load. Also checks that all produce the same tokens, and
times one forward at a few sizes on each (the cost curve's shape is what lookahead lives on; the curves are
measured one after the other, not interleaved, so read them as a shape more than a ratio). Writes one JSON file.

    python -m scripts.kernels_bench --max-new-tokens 64 --out assets/bench/kernels.json
    python -m scripts.kernels_bench --widths --threads 1,2 --out out/kernels-widths.json

`--widths`: every layout at every width a step feeds (kernel_choice.SIZES), side by side at each thread count in one
process (`kernel_choice.measure`: interleaved round by round), with the plan each thread count gets, this CPU's
measured roof beside them (`measure/cpuroof.py`: the least time a forward of that width can take here), and the
memory every layout holds against one (the process's resident memory with one layout, then with all).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from dataclasses import replace
from pathlib import Path

from lade_core import greedy_generate, load_model
from lade_core.kernels import KERNELS
from lade_core.measure.costcurve import measure_cost_curve
from lade_core.measure.prompts import load_prompts


def load(packed: bool):
    """The default model on the CPU with (or without) packed linear layers; LADE_PREPACK is restored after."""
    before = os.environ.get("LADE_PREPACK")
    os.environ["LADE_PREPACK"] = "1" if packed else "0"
    try:
        return load_model(None, "cpu")
    finally:
        if before is None:
            del os.environ["LADE_PREPACK"]
        else:
            os.environ["LADE_PREPACK"] = before


def load_mkldnn_linear():
    """The stock model with its linear layers swapped by `torch.utils.mkldnn.to_mkldnn`."""
    from torch.utils.mkldnn import to_mkldnn

    lm = load(False)
    lm.model.requires_grad_(False)
    return replace(lm, model=to_mkldnn(lm.model), kernels="mkldnn-linear")


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def widths(threads: list[int], out: str) -> None:
    """Every layout per width at each thread count, in one process, with the roof and the memory."""
    import gc
    import time

    import torch

    from lade_core import kernels
    from lade_core.kernel_choice import CONTEXT, ROUNDS, SIZES, measure, over_stock, plan
    from lade_core.measure.cpuroof import floor, measure_roof

    lm = load(False)
    gc.collect()
    one = rss_mb()
    switch = kernels.layered_linears(lm.model)
    gc.collect()
    every = rss_mb()
    rows = {}
    for k in threads:
        torch.set_num_threads(k)
        seconds = measure(lm.model, switch)
        roof = measure_roof()
        floors = {str(n): floor(roof, "135M", n, CONTEXT)["seconds"] for n in SIZES}
        rows[str(k)] = {
            "median_s": seconds,
            "over_stock": over_stock(seconds),
            "plan": plan(seconds).label,
            "roof": {key: roof[key] for key in ("bandwidth", "flops", "how")},
            "floor_s": floors,
            "best_over_floor": {n: min(by[n] for by in seconds.values()) / floors[n] for n in floors},
        }
        print(
            f"{k} thread(s), plan {rows[str(k)]['plan']}: "
            + "  ".join(
                f"{n}: {'/'.join(f'{1000 * by[str(n)]:.0f}' for by in seconds.values())} ms"
                f" (floor {1000 * floors[str(n)]:.0f})"
                for n in SIZES
            )
            + f"  [{'/'.join(seconds)}]",
            flush=True,
        )
    result = {
        "command": "python -m scripts.kernels_bench " + " ".join(sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d"),
        "sizes": list(SIZES),
        "context": CONTEXT,
        "rounds": ROUNDS,
        "load_average": os.getloadavg(),
        "layouts": list(switch.layouts),
        "rss_mb": {"one_layout": one, "every_layout": every, "extra": every - one},
        "threads": rows,
    }
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(result, indent=1), encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", default=None)
    ap.add_argument("--max-new-tokens", type=int, default=64)
    ap.add_argument("--out", default="assets/bench/kernels.json")
    ap.add_argument("--widths", action="store_true", help="every layout at every width a step feeds")
    ap.add_argument("--threads", default="1,2", help="with --widths: the thread counts, comma-separated")
    args = ap.parse_args()
    if args.widths:
        widths([int(t) for t in args.threads.split(",")], args.out)
        return
    models = {"stock": load(False), KERNELS: load(True), "mkldnn-linear": load_mkldnn_linear()}
    assert [lm.kernels for lm in models.values()] == list(models)
    rows = []
    for p in load_prompts(args.prompts):
        ids = models["stock"].encode_prompt(p["prompt"])
        runs = {}
        for name, lm in models.items():
            greedy_generate(lm, ids, 4)  # warm-up
            runs[name] = greedy_generate(lm, ids, args.max_new_tokens)
        step_s = {k: statistics.fmean(s.seconds for s in r.steps[1:]) for k, r in runs.items()}
        same = all(r.tokens == runs["stock"].tokens for r in runs.values())
        rows.append(
            {
                "id": p["id"],
                "step_s": step_s,
                "same_tokens": same,
                "speedup": {k: step_s["stock"] / s for k, s in step_s.items() if k != "stock"},
            }
        )
        print(
            f"{p['id']:22s} "
            + "  ".join(f"{k} {1000 * s:5.1f} ms" for k, s in step_s.items())
            + f"  same tokens: {same}",
            flush=True,
        )
    sizes = (1, 2, 4, 8, 16, 32, 64, 128)
    curves = {name: measure_cost_curve(lm, sizes, repeats=5) for name, lm in models.items()}
    for name, c in curves.items():
        print(f"{name:17s} " + "  ".join(f"{p['tokens']}:{1000 * p['seconds']:.1f}ms" for p in c["points"]))
    result = {
        "command": "python -m scripts.kernels_bench " + " ".join(sys.argv[1:]),
        "max_new_tokens": args.max_new_tokens,
        "prompts": rows,
        "greedy_speedup_median": {k: statistics.median(r["speedup"][k] for r in rows) for k in rows[0]["speedup"]},
        "same_tokens": sum(r["same_tokens"] for r in rows),
        "cost_curves": curves,
    }
    print(
        "greedy step, median speed-up over stock: "
        + ", ".join(f"{k} {v:.2f}x" for k, v in result["greedy_speedup_median"].items())
        + f"; same tokens on {result['same_tokens']}/{len(rows)} prompts"
    )
    Path(args.out).write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
