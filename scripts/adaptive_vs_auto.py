"""Adaptive sizes against the best swept setting and greedy decoding, side by side in one run, with greedy's own noise.

    python -m scripts.adaptive_vs_auto --max-new-tokens 128 --out assets/bench/adaptive-vs-auto.json

For each benchmark prompt, in turn and after an untimed warm-up: greedy decoding, lookahead with adaptive sizes (W, N, G
as bounds; this device's cost curve), lookahead with the best swept setting on that curve (Auto's first round,
`autoconfig.best`: what Auto ran before its duel), and greedy decoding again. The two greedy runs give the noise of the
machine at that moment (their time ratio); each method's speed-up is against the faster of the two. Tokens are checked
identical to greedy for both methods.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from lade_core import LookaheadConfig, greedy_generate, load_model, lookahead_generate
from lade_core.measure import autoconfig
from lade_core.measure.bench import sizes_used
from lade_core.measure.costcurve import step_cost
from lade_core.measure.prompts import load_prompts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--window", "-W", type=int, default=7)
    parser.add_argument("--ngram", "-N", type=int, default=4)
    parser.add_argument("--guess", "-G", type=int, default=7)
    parser.add_argument("--prompts", default=None)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    lm = load_model()
    curve = autoconfig.curve_for(lm)
    cost = step_cost(curve)
    choice = autoconfig.best(autoconfig.load_sweeps(), curve)
    auto = autoconfig.auto_config(choice)
    adaptive = LookaheadConfig(args.window, args.ngram, args.guess, adaptive=True)
    rows = []
    for p in load_prompts(args.prompts):
        ids = lm.encode_prompt(p["prompt"])
        lookahead_generate(lm, ids, adaptive, 8, step_cost=cost)  # warm-up, untimed
        g1 = greedy_generate(lm, ids, args.max_new_tokens)
        ad = lookahead_generate(lm, ids, adaptive, args.max_new_tokens, step_cost=cost)
        au = lookahead_generate(lm, ids, auto, args.max_new_tokens)
        g2 = greedy_generate(lm, ids, args.max_new_tokens)
        greedy_s = min(g1.wall_s, g2.wall_s)
        row = {
            "id": p["id"],
            "kind": p["kind"],
            "greedy_noise": max(g1.wall_s, g2.wall_s) / greedy_s,
            "exact": ad.tokens == g1.tokens == au.tokens == g2.tokens,
            "adaptive": {"speedup": greedy_s / ad.wall_s, "compression": ad.compression, "sizes": sizes_used(ad)},
            "auto": {"speedup": greedy_s / au.wall_s, "compression": au.compression, "sizes": sizes_used(au)},
        }
        rows.append(row)
        print(
            f"{p['id']:22s} greedy noise {row['greedy_noise']:.2f}  adaptive {row['adaptive']['speedup']:.2f}x "
            f"({ad.compression:.2f} tokens/step, {row['adaptive']['sizes']['mean_tokens_fed']:.1f} fed)  auto "
            f"{row['auto']['speedup']:.2f}x ({au.compression:.2f}, {row['auto']['sizes']['mean_tokens_fed']:.1f} fed)"
            f"{'' if row['exact'] else '  NOT EXACT'}",
            flush=True,
        )

    def summary(key):
        speeds = [r[key]["speedup"] for r in rows]
        return {
            "median": statistics.median(speeds),
            "min": min(speeds),
            "max": max(speeds),
            "compression_mean": statistics.fmean(r[key]["compression"] for r in rows),
        }

    result = {
        "command": "python -m scripts.adaptive_vs_auto " + " ".join(sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d"),
        "model": lm.name,
        "device": str(lm.device),
        "kernels": lm.kernels,
        "adaptive": adaptive.to_dict(),
        "auto": {
            **auto.to_dict(),
            "predicted_speedup_median": choice["predicted_speedup_median"],
            "predicted_speedup_range": choice["predicted_speedup_range"],
        },
        "max_new_tokens": args.max_new_tokens,
        "prompts": rows,
        "summary": {
            "adaptive": summary("adaptive"),
            "auto": summary("auto"),
            "greedy_noise_max": max(r["greedy_noise"] for r in rows),
            "all_exact": all(r["exact"] for r in rows),
        },
    }
    s = result["summary"]
    print(
        f"adaptive: median {s['adaptive']['median']:.2f}x (min {s['adaptive']['min']:.2f}x); auto: median "
        f"{s['auto']['median']:.2f}x (min {s['auto']['min']:.2f}x); greedy noise up to {s['greedy_noise_max']:.2f}"
    )
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
