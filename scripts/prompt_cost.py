"""What one live request's prompt costs the engine: seconds and peak memory of a race (W=32 N=8 G=32, the public
maximum) on a prompt of N tokens after the chat template, each in a fresh process with one thread.

    python -m scripts.prompt_cost --tokens 512,2048,8030 --max-new-tokens 1 --out assets/bench/prompt-cost.json
    python -m scripts.prompt_cost --tokens 1024 --methods lookahead,jacobi,pld --max-new-tokens 512 --out out/cost.json

The race is the app's own: the methods as `app.limits.check_methods` makes them from W=32 N=8 G=32, run as a
`LiveRun` with the app's engine budget (`limits.RUN_BUDGET_S`; a run past it ends with stop_reason "budget"). The
app admits a race by lanes x prompt tokens (`limits.check_cost`); this script measures any size, admitted or not.

The prompt is digits (about one token each, the case that held the engine for a minute at 8,030 tokens), cut to
the asked number of tokens. Reported per size: the race's wall seconds, the process's resident memory after the
model loaded and at its peak during the race (VmHWM, reset before it), and the difference. One run each; as
measured on this machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from app.limits import RUN_BUDGET_S
from lade_core.paths import ROOT


def _status(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(field)


def one(tokens: int, max_new: int, methods: list[str]) -> dict:
    """In this process: the race of `methods` and greedy decoding on a prompt of `tokens` tokens, as the app runs it."""
    import torch

    from app import limits
    from app.live import LiveRun
    from lade_core import LookaheadConfig, load_model

    torch.set_num_threads(1)
    lm = load_model()
    digits = "0123456789" * 2000
    low, high = 1, len(digits)
    while low < high:  # the longest prefix of digits whose prompt is at most `tokens` tokens
        mid = (low + high + 1) // 2
        if len(lm.encode_prompt(digits[:mid])) <= tokens:
            low = mid
        else:
            high = mid - 1
    prompt = digits[:low]
    n = len(lm.encode_prompt(prompt))
    base = _status("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # the peak (VmHWM) from here on, not the model's loading
    specs = limits.check_methods(methods, LookaheadConfig(window=32, ngram=8, guess=32))
    live = LiveRun(lm, prompt, specs, max_new, abandon_after=float("inf"), budget_s=limits.RUN_BUDGET_S)
    t0 = time.perf_counter()
    live.start()
    live.wait(timeout=3600)
    seconds = time.perf_counter() - t0
    peak = _status("VmHWM")
    if live.error is not None:
        raise live.error
    run = live.result
    return {
        "methods": methods,
        "lanes": len(specs) + 1,
        "admitted": limits.MAX_LANE_TOKENS >= (len(specs) + 1) * n,
        "stop_reasons": sorted(
            {m.stop_reason for m in (run.parallel, run.baseline, *(lane.run for lane in run.lanes))}
        ),
        "new_tokens": len(run.parallel.tokens),
        "prompt_tokens": n,
        "prompt_chars": len(prompt),
        "max_new_tokens": max_new,
        "seconds": round(seconds, 2),
        "rss_after_load_mb": round(base, 1),
        "peak_rss_mb": round(peak, 1),
        "peak_over_load_mb": round(peak - base, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", default="512,2048,8030")
    parser.add_argument("--max-new-tokens", type=int, default=1)
    parser.add_argument("--methods", default="lookahead", help="the raced methods, as the app names them")
    parser.add_argument("--out", default=None)
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(one(args.one, args.max_new_tokens, args.methods.split(","))))
        return 0
    env = dict(os.environ, OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1")
    rows = []
    for tokens in (int(t) for t in args.tokens.split(",")):
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "scripts.prompt_cost",
                "--one",
                str(tokens),
                "--max-new-tokens",
                str(args.max_new_tokens),
                "--methods",
                args.methods,
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]), flush=True)
    result = {
        "command": "python -m scripts.prompt_cost " + " ".join(sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d"),
        "load_average": os.getloadavg()[0],
        "config": f"{args.methods} at W=32 N=8 G=32 against greedy, one thread, budget {RUN_BUDGET_S:g} s",
        "runs": rows,
    }
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
