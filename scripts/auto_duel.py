"""Auto's last round at two budgets: the best swept setting against adaptive sizes, run on the benchmark prompts on a
curve for 64 tokens (the sweep's budget) and 128 (the duel's), each with the speed-up predicted on that curve.

    python -m scripts.auto_duel --out out/auto-duel.json [--widths assets/bench/kernels-widths-3.json]
                                [--tokens 64,128] [--limit K]

The curve is this machine's (`calibrate.calibrated_curve`, at torch's thread count) and, with `--widths`, each thread
count's curve of another machine built from its `kernels_bench --widths` file: each width's forward on the layout
that machine's plan runs there. Adaptive sizes choose their steps from the curve and the tokens the model accepts,
not from this machine's clock, so running them here on another machine's curve gives the steps they would take
there (over a 64-token cache, not the race-like curve a machine measures for itself: an estimate of its choice).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from lade_core import load_model
from lade_core.kernel_choice import plan
from lade_core.measure import autoconfig
from lade_core.measure.auto_trial import duel
from lade_core.measure.costcurve import step_cost
from lade_core.measure.prompts import load_prompts


def curve_of(widths: dict) -> dict:
    """The curve of one thread count's entry of a kernels_bench --widths file: per width, its plan's layout's median."""
    median = widths["median_s"]
    chosen = plan(median)
    sizes = sorted(int(w) for w in median["stock"])
    points = [{"tokens": w, "seconds": median[chosen.at(w)][str(w)]} for w in sizes]
    return {"greedy_s": points[0]["seconds"], "points": points, "kernels": chosen.label}


def budgets(lm, curve: dict, sweeps: list[dict], tokens_list=(64, 128), limit: int | None = None) -> dict:
    """The duel on `curve` at each budget, on the benchmark prompts (the first `limit`): run, not kept, since the
    curve may be another machine's."""
    top = autoconfig.best(sweeps, curve)
    prompts = load_prompts()[:limit]
    out = {"kernels": curve.get("kernels"), "swept_choice": {k: top.get(k, False) for k in autoconfig.FIGURES}}
    for tokens in tokens_list:
        points = duel(lm, {**curve, "cached_at": None}, top, prompts=prompts, tokens=tokens)
        ranked = autoconfig.rank_configs(points, step_cost(curve))
        fixed, adaptive = (next(p for p in ranked if p["adaptive"] is a) for a in (False, True))
        out[str(tokens)] = {
            "fixed": {k: fixed[k] for k in autoconfig.FIGURES},
            "adaptive": {k: adaptive[k] for k in autoconfig.FIGURES},
            "compression_by_prompt": {
                c: p["compression_by_prompt"] for c, p in (("fixed", fixed), ("adaptive", adaptive))
            },
            "auto_picks": "adaptive" if ranked[0]["adaptive"] else "fixed",
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--widths", default=None, help="another machine's kernels_bench --widths file")
    parser.add_argument("--tokens", default="64,128", help="the budgets, comma-separated")
    parser.add_argument("--limit", type=int, default=None, help="the first K benchmark prompts only")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    trial = {"tokens_list": [int(t) for t in args.tokens.split(",")], "limit": args.limit}
    lm, sweeps = load_model(), autoconfig.load_sweeps()
    here = autoconfig.curve_for(lm)
    result = {
        "command": "python -m scripts.auto_duel " + " ".join(sys.argv[1:]),
        "date": time.strftime("%F"),
        "here": {"machine": here.get("machine_description"), **budgets(lm, here, sweeps, **trial)},
    }
    print(f"here: {json.dumps(result['here'])}", flush=True)
    if args.widths:
        source = json.loads(Path(args.widths).read_text(encoding="utf-8"))
        for threads, widths in source["threads"].items():
            result[f"{args.widths} {threads}t"] = budgets(lm, curve_of(widths), sweeps, **trial)
            print(f"{threads}t: {json.dumps(result[f'{args.widths} {threads}t'])}", flush=True)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
