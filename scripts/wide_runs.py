"""Memory of the server over wide live runs in a row: the figure SECURITY.md states.

    python -m scripts.wide_runs --runs 20 --max-new-tokens 32 --out assets/bench/wide-runs.json

Starts the app with its model (`python app.py`, one torch thread), makes `--runs` live races at the public maximum
(W=32 N=8 G=32) through `/generate`, one after another, on the benchmark prompts in turn, and reads the server's
resident memory after each. Reported: RSS after each run; the last against the run that ends the first pass over
the prompts (`last_over_cycle`: from there on every prompt's tensor shapes have been seen once, and nothing may pile
up; the test's bound is 5%), and, as before, against the fifth (`last_over_fifth`).
`--env NAME=VALUE` sets a variable for the server (MALLOC_ARENA_MAX=2, say) to compare allocators' settings.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from app.process import rss_mb, start_server

WIDE = (32, 8, 32)


# `python -c TRIMMED`: the app as `python app.py` starts it, each live run followed by `app.memory.trim()`
TRIMMED = (
    "import runpy, sys; from app import live, memory; work = live.LiveRun._work; "
    "live.LiveRun._work = lambda self, lock: (work(self, lock), memory.trim()); "
    "sys.argv = ['app.py'] + sys.argv[1:]; runpy.run_path('app.py', run_name='__main__')"
)


def wide_runs(url: str, pid: int, runs: int, max_new: int) -> dict:
    """`runs` wide races through /generate; RSS (MB) after each, and seconds."""
    from gradio_client import Client

    from lade_core.measure.prompts import load_prompts

    prompts = [p["prompt"] for p in load_prompts()]
    client = Client(url, verbose=False)
    client.predict("Hi", 3, 2, 2, 2, "prompt", api_name="/generate")  # the model loaded
    marks = {"before": round(rss_mb(pid), 1)}
    seconds = []
    for i in range(runs):
        t0 = time.perf_counter()
        out = client.predict(prompts[i % len(prompts)], *WIDE, max_new, "prompt", api_name="/generate")
        seconds.append(round(time.perf_counter() - t0, 2))
        assert out["done"], out
        marks[f"after_{i + 1}"] = round(rss_mb(pid), 1)
        print(f"run {i + 1}: {seconds[-1]} s, RSS {marks[f'after_{i + 1}']} MB", flush=True)
    cycle = len(prompts) if len(prompts) < runs else None
    fifth, last = marks.get("after_5"), marks[f"after_{runs}"]
    return {
        "rss_mb": marks,
        "seconds": seconds,
        "prompts": len(prompts),
        "last_over_cycle": round(last / marks[f"after_{cycle}"], 4) if cycle else None,
        "last_over_fifth": round(last / fifth, 4) if fifth else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the server")
    parser.add_argument(
        "--trim-after-run",
        action="store_true",
        help="the server calls app.memory.trim() after each live run (what live.py would do)",
    )
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    extra = dict(item.split("=", 1) for item in args.env)
    server, url = start_server(extra, ("--per-client", "0"), TRIMMED if args.trim_after_run else None)
    try:
        result = {
            "command": "python -m scripts.wide_runs " + " ".join(sys.argv[1:]),
            "date": time.strftime("%Y-%m-%d"),
            "load_average_at_start": round(os.getloadavg()[0], 2),
            "config": "W=32 N=8 G=32, one thread",
            "max_new_tokens": args.max_new_tokens,
            "server_env": extra,
            "trim_after_run": args.trim_after_run,
            **wide_runs(url, server.pid, args.runs, args.max_new_tokens),
        }
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(json.dumps(result, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
