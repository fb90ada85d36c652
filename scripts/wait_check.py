"""Does the expected wait bound the race it predicts? The server's own pieces, in one process, on this machine.

    python -m scripts.wait_check --out out/wait-check.json

Loads the model as the app does (`app.model.SharedModel`: the process's cost curve measured the way a race runs,
then the start-up race of every method), then for each of ten races of different settings (methods, W/N/G, prompts,
token budgets) takes the bound the sidebar would show for it alone (`wait.predict_race` at `MODEL.pace` now), runs the
race (`record_run`) and times it on the wall clock. Then a second process keeps every CPU busy for `--load-s`
seconds, and the bound for the first setting is asked again while it runs. Written: each race's bound, its measured
time and their ratio, how many bounds held, and the bound at rest and under the load with the load averages.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from app import limits, wait
from app.model import SharedModel
from lade_core import LookaheadConfig, record_run
from lade_core.measure.prompts import load_prompts

# (methods, W, N, G, max new tokens, prompt index)
RACES = [
    (["lookahead"], 7, 4, 7, 48, 0),
    (["lookahead"], 4, 2, 4, 64, 1),
    (["lookahead"], 15, 5, 15, 32, 2),
    (["lookahead", "jacobi"], 5, 3, 5, 32, 3),
    (["lookahead", "pld"], 7, 4, 7, 48, 8),
    (["pld"], 7, 4, 7, 64, 9),
    (["early-exit"], 7, 4, 7, 32, 4),
    (["lookahead", "pld", "early-exit"], 5, 3, 5, 24, 10),
    (["jacobi"], 7, 2, 0, 32, 5),
    (["lookahead"], 3, 2, 3, 96, 6),
]
BUSY = "import os, time\nend = time.monotonic() + {s}\nwhile time.monotonic() < end:\n    pass\n"


def bound(model: SharedModel, specs, prompt_tokens: int, max_new: int) -> float:
    curve = model.cost_curve()
    return wait.predict_race(specs, prompt_tokens, max_new, curve, wait.Pace(*model.pace(curve))).seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="out/wait-check.json")
    parser.add_argument("--load-s", type=float, default=90.0, help="how long the second process loads the CPUs")
    parser.add_argument("--races", type=int, default=len(RACES), help=f"only the first K of the {len(RACES)} races")
    args = parser.parse_args()
    model = SharedModel()
    model.get()
    model.cost_curve()
    model._calibrate()
    lm, prompts = model.get(), load_prompts()
    rows = []
    for methods, w, n, g, max_new, which in RACES[: args.races]:
        config = LookaheadConfig(window=w, ngram=n, guess=g) if g else LookaheadConfig(window=w, ngram=2, guess=0)
        specs = limits.check_methods(methods, config)
        prompt = prompts[which % len(prompts)]["prompt"]
        promised = bound(model, specs, len(lm.encode_prompt(prompt)), max_new)
        t0 = time.perf_counter()
        run = record_run(lm, prompt, specs, max_new)
        took = time.perf_counter() - t0
        model.observe(run)
        rows.append(
            {
                "methods": methods,
                "setting": [w, n, g],
                "max_new_tokens": max_new,
                "bound_s": round(promised, 3),
                "took_s": round(took, 3),
                "bound_over_took": round(promised / took, 3),
                "held": promised >= took,
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    first = limits.check_methods(RACES[0][0], LookaheadConfig(*RACES[0][1:4]))
    tokens = len(lm.encode_prompt(prompts[0]["prompt"]))
    at_rest = {"bound_s": round(bound(model, first, tokens, RACES[0][4]), 3), "load": os.getloadavg()[0]}
    cores = len(os.sched_getaffinity(0))
    busy = [subprocess.Popen([sys.executable, "-c", BUSY.format(s=args.load_s)]) for _ in range(cores)]
    try:
        time.sleep(args.load_s * 2 / 3)  # the 1-minute load average needs time to rise
        loaded = {"bound_s": round(bound(model, first, tokens, RACES[0][4]), 3), "load": os.getloadavg()[0]}
    finally:
        for p in busy:
            p.wait()
    result = {
        "command": "python -m scripts.wait_check " + " ".join(sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d"),
        "machine": model.cost_curve()["machine_description"],
        "races": rows,
        "held": sum(r["held"] for r in rows),
        "most_over": max(r["bound_over_took"] for r in rows),
        "at_rest": at_rest,
        "under_load": {**loaded, "busy_processes": cores},
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("held", "most_over", "at_rest", "under_load")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
