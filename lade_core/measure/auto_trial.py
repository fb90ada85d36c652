"""Auto's last round: the best swept setting against adaptive sizes, both run here on this machine's curve.

A swept setting's speed-up is predicted from its compression, measured once with fixed sizes and 64 new tokens on the
sweep's eight code and chat prompts (the same on any machine), over its step cost read off this machine's curve.
Adaptive sizes cannot be swept that way: the curve chooses their steps. And 64 tokens is short for a method that learns
as it goes: at that budget adaptive sizes are predicted behind the best swept setting on three of the four curves
BENCHMARKS.md §19 shows, at 128 ahead on all four, and the bench measured them ahead, most on prompts whose answer
copies the prompt, which the sweep does not run (BENCHMARKS.md §19). So `duel` runs the best swept setting and adaptive
sizes (within the engine's default W, N, G) on every benchmark prompt (code, chat and copy-heavy) for `TOKENS` new
tokens each, on `curve`: two points of the sweep's shape, each with how many of its steps fed each number of tokens
(`fed_by_prompt`), so that `autoconfig.predict_point` weighs both the same way, by the mean cost of their steps.
Untimed: what it measures is the model's and the curve's, not this moment's load. It takes about a minute and a half at
one thread of a 2-core CPU, once per curve: the points are kept beside the curve (`machine.curve_file`) and run again
when the curve is measured again, the settings or the prompts' texts differ, or this rule changes.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from pathlib import Path

from ..config import LookaheadConfig
from ..lookahead import lookahead_generate
from ..machine import save_curve
from .costcurve import step_cost
from .prompts import load_prompts
from .sweep import sweep_point

VERSION = 1  # bump when the engine's steps (sizes.py, verification, the pool) change what a kept duel would say
TOKENS = 128


def kept_path(curve: dict) -> Path | None:
    """Where the duel run on `curve` is kept: beside the curve's own file (None: the curve is not kept)."""
    cached = curve.get("cached_at")
    return Path(cached).with_name(Path(cached).stem + "-duel.json") if cached else None


def measure(lm, curve: dict, config: LookaheadConfig, prompts: list[dict], max_new_tokens: int) -> dict:
    """`config` on each prompt ({id, prompt}) on `curve` (adaptive sizes weigh their steps by it): a sweep point
    (`sweep.sweep_point`) with, by prompt, how many of its steps fed each number of tokens."""
    cost = step_cost(curve) if config.adaptive else None
    runs = [
        lookahead_generate(lm, lm.encode_prompt(p["prompt"]), config, max_new_tokens, step_cost=cost) for p in prompts
    ]
    fed = {  # keys as JSON keeps them, so that a kept duel reads as a fresh one
        p["id"]: {str(n): k for n, k in sorted(Counter(s.n_input for s in r.steps[1:]).items())}
        for p, r in zip(prompts, runs)
    }
    point = sweep_point(config, [p["id"] for p in prompts], runs)
    return {**point, "adaptive": config.adaptive, "fed_by_prompt": fed, "max_new_tokens": max_new_tokens}


def duel(
    lm, curve: dict, best: dict, pool: str | None = None, prompts=None, tokens: int = TOKENS, **settings
) -> list[dict]:
    """The swept setting `best` and adaptive sizes (within the engine's default W, N, G, on `pool` if one is asked
    for, else the default one), both with `settings` (tree, lookup) if given, run on `prompts` (default: the
    benchmark prompts) for `tokens` new tokens on `curve`: kept, or run now and kept."""
    fixed = LookaheadConfig(best["window"], best["ngram"], best["guess"], pool=best["pool"], **settings)
    adaptive = LookaheadConfig(adaptive=True, **({"pool": pool} if pool else {}), **settings)
    prompts = load_prompts() if prompts is None else list(prompts)
    texts = hashlib.sha256(json.dumps([[p["id"], p["prompt"]] for p in prompts]).encode()).hexdigest()
    key = {
        "version": VERSION,
        "curve": curve.get("measured_at"),
        "settings": [fixed.to_dict(), adaptive.to_dict()],
        "prompts": texts,
        "tokens": tokens,
    }
    path = kept_path(curve)
    try:
        kept = json.loads(path.read_text(encoding="utf-8")) if path else None
    except (OSError, ValueError):
        kept = None
    if isinstance(kept, dict) and kept.get("key") == key and isinstance(kept.get("points"), list):
        return kept["points"]
    t0 = time.perf_counter()
    points = [measure(lm, curve, c, prompts, tokens) for c in (fixed, adaptive)]
    if path is not None:
        save_curve(path, {"key": key, "seconds": time.perf_counter() - t0, "points": points})
    return points
