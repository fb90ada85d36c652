"""The sweep: compression over W and N with G = W, the paper's scaling figure, on the benchmark prompts.

The paper plots compression against log2 of the tokens a step may feed, 1 + (W+G)(N-1): for a given N, compression
grows roughly linearly in log2(W), and a larger N pays off once W is large. Compression depends only on the tokens
produced, not on timing, so the sweep is reproducible on a busy machine. Saved sweeps (assets/sweep-<pool>.json)
feed Auto's choice, the speed lab's predictions, and its simulation of Lookahead Parallelism.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable

from ..autoregressive import autoregressive_generate
from ..config import LookaheadConfig
from ..lookahead import lookahead_generate


def sweep_point(config: LookaheadConfig, prompt_ids: list[str], runs) -> dict:
    """What a sweep keeps of `config` run on each prompt: its sizes, the tokens its steps fed (mean, after the
    prompt's own forward) and its compression (mean over prompts, and by prompt)."""
    fed = [s.n_input for r in runs for s in r.steps[1:]]
    return {
        "window": config.window,
        "ngram": config.ngram,
        "guess": config.guess,
        "pool": config.pool,
        "tokens_per_forward": config.tokens_per_forward,
        "log2_tokens_per_forward": math.log2(config.tokens_per_forward),
        "mean_tokens_fed": statistics.fmean(fed) if fed else 1.0,
        "compression": statistics.fmean(len(r.tokens) / len(r.steps) for r in runs),
        "compression_by_prompt": {i: len(r.tokens) / len(r.steps) for i, r in zip(prompt_ids, runs)},
    }


def sweep(
    lm,
    prompts: list[dict],
    windows,
    ngrams,
    max_new_tokens: int,
    pool: str = "paper",
    on_point: Callable[[dict], None] | None = None,
) -> dict:
    """One point per (N, W): mean compression over `prompts` (and per prompt), tokens fed, exactness."""
    encoded = [lm.encode_prompt(p["prompt"]) for p in prompts]
    reference = [autoregressive_generate(lm, ids, max_new_tokens).tokens for ids in encoded]
    points = []
    for n in ngrams:
        for w in windows:
            config = LookaheadConfig(window=w, ngram=n, guess=w, pool=pool)
            runs = [lookahead_generate(lm, ids, config, max_new_tokens) for ids in encoded]
            point = sweep_point(config, [p["id"] for p in prompts], runs)
            point["exact"] = all(r.tokens == ref for r, ref in zip(runs, reference))
            points.append(point)
            if on_point:
                on_point(point)
    return {
        "model": lm.name,
        "max_new_tokens": max_new_tokens,
        "prompts": [p["id"] for p in prompts],
        "pool": pool,
        "points": points,
    }
