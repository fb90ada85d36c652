"""`python -m lade_core sweep`: compression over W and N with G = W, the paper's scaling figure.

The paper plots compression against log2 of the tokens a step feeds: for a given N, compression grows roughly
linearly in log2(W), and a larger N pays off once W is large. Compression depends only on the tokens produced, not
on timing, so the sweep is reproducible on a busy machine. The app draws the saved file (`assets/sweep.json`).
`--pool-from-prompt` sweeps with prompt-seeded pools instead (`assets/sweep-seeded.json`); `--auto` ranks
both.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path

from .bench import load_prompts
from .config import LookaheadConfig
from .greedy import greedy_generate
from .lookahead import lookahead_generate


def sweep(lm, prompts: list[dict], windows, ngrams, max_new_tokens: int, log=print,
          pool_from_prompt: bool = False) -> dict:
    encoded = [lm.encode_prompt(p["prompt"]) for p in prompts]
    reference = [greedy_generate(lm, ids, max_new_tokens).tokens for ids in encoded]
    points = []
    for n in ngrams:
        for w in windows:
            config = LookaheadConfig(window=w, ngram=n, guess=w, pool_from_prompt=pool_from_prompt)
            runs = [lookahead_generate(lm, ids, config, max_new_tokens) for ids in encoded]
            fed = [s.layout.size for r in runs for s in r.steps[1:]]
            point = {
                "window": w, "ngram": n, "guess": w, "pool_from_prompt": pool_from_prompt,
                "tokens_per_step": config.tokens_per_forward,
                "log2_tokens_per_step": math.log2(config.tokens_per_forward),
                "mean_tokens_fed": statistics.fmean(fed) if fed else 1.0,
                "compression": statistics.fmean(len(r.tokens) / len(r.steps) for r in runs),
                "compression_by_prompt": {p["id"]: len(r.tokens) / len(r.steps) for p, r in zip(prompts, runs)},
                "exact": all(r.tokens == ref for r, ref in zip(runs, reference)),
            }
            points.append(point)
            log(f"N={n} W={w:2d} G={w:2d}: {point['tokens_per_step']:4d} tokens/step max, "
                f"{point['mean_tokens_fed']:6.1f} fed on average, compression {point['compression']:.2f}"
                f"{'' if point['exact'] else '  (NOT exact)'}")
    return {"model": lm.name, "max_new_tokens": max_new_tokens, "prompts": [p["id"] for p in prompts],
            "pool_from_prompt": pool_from_prompt, "points": points}


def run_sweep(args) -> dict:
    from .loading import load_model

    lm = load_model(args.model, args.device, args.dtype)
    windows = [int(w) for w in args.windows.split(",")]
    ngrams = [int(n) for n in args.ngrams.split(",")]
    result = sweep(lm, load_prompts(args.prompts), windows, ngrams, args.max_new_tokens,
                   log=lambda s: (print(s), sys.stdout.flush()), pool_from_prompt=args.pool_from_prompt)
    result["command"] = "python -m lade_core " + " ".join(sys.argv[1:])
    out = args.out or ("assets/sweep-seeded.json" if args.pool_from_prompt else "assets/sweep.json")
    Path(out).write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(f"wrote {out}")
    return result
