"""Auto's last round: the best swept setting against adaptive sizes, both run here on this machine's curve.

A swept setting's speed-up is predicted from its compression, measured once with fixed sizes and 64 new tokens (the same
on any machine), over its step cost read off this machine's curve. Adaptive sizes cannot be swept that way: the curve
chooses their steps. And 64 tokens is short for a method that learns as it goes: at that budget adaptive sizes are
predicted behind the best swept setting on both CPUs this project measured, at 128 (the CLI's default) the two come
close or change places (BENCHMARKS.md §19). So `duel` runs the best swept setting and adaptive sizes (within the
engine's default W, N, G) on the sweep's prompts for `TOKENS` new tokens each, on `curve`: two points of the sweep's
shape, the adaptive one with how many of its steps fed each number of tokens (`fed_by_prompt`, from which
`autoconfig.predict_point` reads its mean step cost). Untimed, so what it measures is the model's and the curve's, not
this moment's load. It takes about a minute at one thread of a 2-core CPU, once per curve: the points are kept beside
the curve (`machine.curve_file`) and run again when the curve is measured again, the setting differs, or this rule
changes (`VERSION`).
"""

from __future__ import annotations

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

VERSION = 1  # bump when AdaptiveSizes or this trial changes what a kept duel would say
TOKENS = 128


def kept_path(curve: dict) -> Path | None:
    """Where the duel run on `curve` is kept: beside the curve's own file (None: the curve is not kept)."""
    cached = curve.get("cached_at")
    return Path(cached).with_name(Path(cached).stem + "-duel.json") if cached else None


def measure(lm, curve: dict, config: LookaheadConfig, prompt_ids: list[str], max_new_tokens: int) -> dict:
    """`config` on each of the benchmark prompts named, on `curve` (adaptive sizes weigh their steps by it): a sweep
    point (`sweep.sweep_point`) with, by prompt, how many of its steps fed each number of tokens."""
    by_id = {p["id"]: p for p in load_prompts()}
    missing = [i for i in prompt_ids if i not in by_id]
    if missing:
        raise ValueError(f"the sweep's prompts {', '.join(missing)} are not among the benchmark prompts")
    cost = step_cost(curve) if config.adaptive else None
    runs = [
        lookahead_generate(lm, lm.encode_prompt(by_id[i]["prompt"]), config, max_new_tokens, step_cost=cost)
        for i in prompt_ids
    ]
    fed = {  # keys as JSON keeps them, so that a kept duel reads as a fresh one
        i: {str(n): k for n, k in sorted(Counter(s.n_input for s in r.steps[1:]).items())}
        for i, r in zip(prompt_ids, runs)
    }
    point = {**sweep_point(config, prompt_ids, runs), "max_new_tokens": max_new_tokens, "source": "run here"}
    return {**point, "adaptive": True, "fed_by_prompt": fed} if config.adaptive else point


def duel(lm, curve: dict, best: dict, pool: str | None = None, prompt_ids=None, tokens: int = TOKENS) -> list[dict]:
    """The swept setting `best` and adaptive sizes (within the engine's default W, N, G, on `pool` if one is asked
    for, else the default one), run on `prompt_ids` (default: `best`'s, the sweep's) for `tokens` new tokens on
    `curve`: kept, or run now and kept."""
    fixed = LookaheadConfig(best["window"], best["ngram"], best["guess"], pool=best["pool"])
    adaptive = LookaheadConfig(adaptive=True, **({"pool": pool} if pool else {}))
    prompt_ids = list(prompt_ids or best["compression_by_prompt"])
    key = {
        "version": VERSION,
        "curve": curve.get("measured_at"),
        "settings": [fixed.to_dict(), adaptive.to_dict()],
        "prompts": prompt_ids,
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
    points = [measure(lm, curve, c, prompt_ids, tokens) for c in (fixed, adaptive)]
    if path is not None:
        save_curve(path, {"key": key, "seconds": time.perf_counter() - t0, "points": points})
    return points
