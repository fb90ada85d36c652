"""What holding several layouts of the linear layers costs in memory: one process per choice, in a row.

    python -m scripts.layouts_memory --out out/layouts-memory.json

For each of `--cpu-kernels stock`, `packed`, `transposed` and `auto` (this machine's plan per width, which holds every
layout it runs), a fresh process loads the model at one thread, decodes 16 tokens greedily and 32 with lookahead
W=7 N=4 G=7 (so that every layout the plan uses has run), and reports its resident memory then and at its peak
(VmRSS, VmHWM). Written: the four, and the plan's cost over each single layout.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

CHOICES = ("stock", "packed", "transposed", "auto")
PROMPT = "Write a Python function that returns the n-th Fibonacci number."


def status_mb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return round(int(line.split()[1]) / 1024)
    return 0


def one(choice: str) -> dict:
    """In this process: load on `choice`, decode, and read the memory."""
    import gc

    import torch

    from lade_core import LookaheadConfig, autoregressive_generate, load_model, lookahead_generate

    torch.set_num_threads(1)
    lm = load_model(cpu_kernels=choice)
    ids = lm.encode_prompt(PROMPT)
    autoregressive_generate(lm, ids, 16)
    lookahead_generate(lm, ids, LookaheadConfig(7, 4, 7), 32)
    gc.collect()
    return {"choice": choice, "kernels": lm.kernels, "rss_mb": status_mb("VmRSS"), "peak_mb": status_mb("VmHWM")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="out/layouts-memory.json")
    ap.add_argument("--one", choices=CHOICES, help=argparse.SUPPRESS)  # the child process's part
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one)))
        return
    rows = []
    for choice in CHOICES:
        child = [sys.executable, "-m", "scripts.layouts_memory", "--one", choice]
        done = subprocess.run(child, capture_output=True, text=True, check=True)
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(rows[-1], flush=True)
    by = {r["choice"]: r for r in rows}
    result = {
        "command": "python -m scripts.layouts_memory --out " + args.out,
        "rows": rows,
        "plan_over_packed_mb": by["auto"]["rss_mb"] - by["packed"]["rss_mb"],
        "plan_over_stock_mb": by["auto"]["rss_mb"] - by["stock"]["rss_mb"],
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
