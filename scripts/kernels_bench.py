"""Stock linear layers against oneDNN-packed ones (what `load_model` uses on a CPU in fp32), side by side, with
torch's `MkldnnLinear` (`torch.utils.mkldnn.to_mkldnn`, which converts every input and output) as a third path.

All copies of the model are loaded into one process; for every benchmark prompt greedy decoding runs on each in
turn, so the ratios are measured under the same machine load. Also checks that all produce the same tokens, and
times one forward at a few sizes on each (the cost curve's shape is what lookahead lives on; the curves are
measured one after the other, not interleaved, so read them as a shape more than a ratio). Writes one JSON file.

    python -m scripts.kernels_bench --max-new-tokens 64 --out assets/bench/kernels.json
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", default=None)
    ap.add_argument("--max-new-tokens", type=int, default=64)
    ap.add_argument("--out", default="assets/bench/kernels.json")
    args = ap.parse_args()
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
