"""Greedy against lookahead on a CUDA device, fp32 and bf16, in one command; writes one JSON file.

    python -m scripts.gpu_bench --out gpu_bench.json [--model PATH_OR_ID] [--max-new-tokens 128]

For each dtype: the cost curve (forward latency against tokens per forward, where a GPU shows its flat region),
then the benchmark prompts at a few (W, N, G), each prompt measured side by side (greedy, then lookahead, fastest of
`--repeat`). fp32 must be exact; bf16 is reported as measured (batched kernels may flip near-tied tokens there).
The CPU stays the tested default: this script is not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

from lade_core import LookaheadConfig, MethodSpec, load_model
from lade_core.measure.bench import bench_prompt, summarize
from lade_core.measure.costcurve import measure_cost_curve
from lade_core.measure.prompts import load_prompts

CONFIGS = [(15, 5, 15), (7, 4, 7), (31, 5, 31), (63, 5, 63)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="gpu_bench.json")
    parser.add_argument("--model", default=None)
    parser.add_argument("--prompts", default=None)
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--dtypes", default="float32,bfloat16")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("error: no CUDA device here; this script benchmarks a GPU", file=sys.stderr)
        return 2
    prompts = load_prompts(args.prompts)
    report = {
        "device_name": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "date": time.strftime("%Y-%m-%d"),
        "command": "python -m scripts.gpu_bench " + " ".join(sys.argv[1:]),
        "kind": "measured",
        "runs": [],
    }
    for dtype in args.dtypes.split(","):
        t0 = time.perf_counter()
        lm = load_model(args.model, "cuda", dtype)
        entry = {
            "dtype": dtype,
            "model": lm.name,
            "load_s": time.perf_counter() - t0,
            "costcurve": measure_cost_curve(lm),
            "configs": [],
        }
        for wng in CONFIGS:
            config = LookaheadConfig(*wng)
            rows = []
            for p in prompts:
                ids = lm.encode_prompt(p["prompt"])
                rows.append(
                    {
                        "id": p["id"],
                        "kind": p["kind"],
                        **bench_prompt(lm, ids, MethodSpec(config=config), args.max_new_tokens, args.repeat),
                    }
                )
            summary = summarize(rows)
            entry["configs"].append({"config": config.to_dict(), "prompts": rows, "summary": summary})
            print(
                f"{dtype} W={wng[0]} N={wng[1]} G={wng[2]}: compression {summary['compression_mean']:.2f}, "
                f"median speed-up {summary['speedup_median']:.2f}x, step cost {summary['step_cost_ratio_mean']:.2f}x, "
                f"exact {summary['exact_count']}/{len(rows)}",
                flush=True,
            )
        report["runs"].append(entry)
        del lm
        torch.cuda.empty_cache()
    Path(args.out).write_text(json.dumps(report, indent=1))
    best = max((c for r in report["runs"] for c in r["configs"]), key=lambda c: c["summary"]["speedup_median"])
    print(f"wrote {args.out}; best median speed-up {best['summary']['speedup_median']:.2f}x at {best['config']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
