"""The paper's measured speed-ups beside the roofline's predictions for the same device, size and W/N/G, and what
this project's engine measured at most.

The paper gives no step compression for its rows, so each prediction needs one measured here, with another
(135M) model on other prompts; two are set side by side, each saying which it is: the 64-token sweep at the swept
setting nearest the blog's, and the 128-token bench at the blog's exact setting where one was run (the paper's
pool: the window alone). A step feeds its full 1 + (W+G)(N-1) tokens: the blog's extra FLOPs per step (120x for
7B) count all of them. Rows keep the device count the paper ran on (the 70B row: two A100s, pipeline parallel).
Left out: the paper's own body, known here only through secondary summaries (assets/lab/paper.json, "unverified").
"""

from __future__ import annotations

import json
import math
import statistics

from ..paths import ASSETS, BENCH
from .autoconfig import load_sweeps
from .roofline import ASSUME, Assumptions
from .stepcost import spread, step_cost, target

PAPER = ASSETS / "lab" / "paper.json"


def paper_figures(path=PAPER) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def benches(folder=BENCH) -> list[dict]:
    """Every greedy lookahead bench on file with fixed sizes: its setting, compression and per-prompt spread."""
    found = []
    for path in sorted(folder.glob("bench-*.json")):
        d = json.loads(path.read_text(encoding="utf-8"))
        c = d.get("config") or {}
        if d.get("method") != "lookahead" or c.get("adaptive") or d.get("sampling", {}).get("temperature", 0):
            continue
        rows = d["prompts"]
        found.append(
            {
                "file": f"assets/bench/{path.name}",
                "window": c["window"],
                "ngram": c["ngram"],
                "guess": c["guess"],
                "pool": c["pool"],
                "max_new_tokens": d["max_new_tokens"],
                "compression": statistics.fmean(r["compression"] for r in rows),
                "mean_tokens_fed": statistics.fmean(r["sizes"]["mean_tokens_fed"] for r in rows)
                if all("sizes" in r for r in rows)
                else None,
                "compression_by_prompt": {r["id"]: r["compression"] for r in rows},
            }
        )
    return found


def _nearest(points: list[dict], setting: dict) -> dict | None:
    """The swept point nearest a setting: same N first, then W and G on a log scale; the paper's pool if swept."""
    pool = [p for p in points if p.get("pool") == "paper"] or points
    return min(
        pool,
        default=None,
        key=lambda p: (
            abs(p["ngram"] - setting["ngram"]),
            abs(math.log2(p["window"] / setting["window"])),
            abs(math.log2((p["guess"] + 1) / (setting["guess"] + 1))),
        ),
    )


def _candidates(setting: dict, points, bench_rows, given) -> list[dict]:
    """The compressions a row can be predicted from: given, the nearest sweep point, the exact-setting bench."""
    key = (setting["window"], setting["ngram"], setting["guess"])
    if given is not None:
        return [{"source": "given", "compression": given[key], "by_prompt": {}}] if key in given else []
    out, near = [], _nearest(points, setting)
    if near is not None:
        exact = (near["window"], near["ngram"], near["guess"]) == key
        out.append(
            {
                "source": "sweep",
                "file": f"assets/sweep-{near.get('pool')}.json",
                "max_new_tokens": 64,
                "pool": near.get("pool"),
                "setting": {k: near[k] for k in ("window", "ngram", "guess")},
                "exact_setting": exact,
                "compression": near["compression"],
                "by_prompt": near.get("compression_by_prompt", {}),
            }
        )
    for b in bench_rows:
        if (b["window"], b["ngram"], b["guess"]) == key and b["pool"] == "paper":
            out.append(
                {
                    "source": "bench",
                    "file": b["file"],
                    "max_new_tokens": b["max_new_tokens"],
                    "pool": "paper",
                    "setting": {"window": key[0], "ngram": key[1], "guess": key[2]},
                    "exact_setting": True,
                    "compression": b["compression"],
                    "by_prompt": b["compression_by_prompt"],
                }
            )
    return out


def _predicted(row: dict, setting: dict, candidate: dict, context: int, a: Assumptions) -> dict:
    fed = 1 + (setting["window"] + setting["guess"]) * (setting["ngram"] - 1)
    cost = step_cost(setting, fed, target(row["device"], row["model_size"], context, a), 1)
    mid, (low, high), c = cost["step_cost"], cost["step_cost_range"], candidate["compression"]
    band = spread([v / mid for v in candidate["by_prompt"].values()] or [c / mid])
    predicted = c / mid
    return {
        **{k: v for k, v in candidate.items() if k != "by_prompt"},
        "kind": "model",
        "step_cost": mid,
        "step_cost_range": [low, high],
        "predicted_speedup": predicted,
        "predicted_speedup_range": [band[0] * mid / high, band[1] * mid / low],
        "range_parts": {"compression": band, "assumptions": [c / high, c / low]},
        "gap": row["speedup"] / predicted,
    }


def paper_comparison(
    compression_by_setting=None, points=None, context: int = 512, a: Assumptions = ASSUME, bench_rows=None
) -> list[dict]:
    """The paper's measured rows, each with `predictions` (one per compression source, see the module docstring;
    `compression_by_setting` {(W, N, G): compression} replaces both) and, at top level, the prediction from the
    128-token exact-setting bench where there is one, else from the sweep, with its gap (measured / predicted)."""
    paper = paper_figures()
    configs = {c["model_size"]: c for c in paper["configs"]}
    points = load_sweeps() if points is None else points
    bench_rows = benches() if bench_rows is None else bench_rows
    rows = []
    for raw in paper["rows"]:
        row = {**paper["rows_defaults"], **raw, "measured_speedup": raw["speedup"]}
        setting = configs.get(row["model_size"])
        if setting is None:
            rows.append(
                {
                    **row,
                    "predicted_speedup": None,
                    "gap": None,
                    "predictions": [],
                    "compression_source": "the paper's W, N, G for this size were not found",
                }
            )
            continue
        setting = {k: setting[k] for k in ("window", "ngram", "guess")}
        predictions = [
            _predicted(row, setting, c, context, a)
            for c in _candidates(setting, points, bench_rows, compression_by_setting)
        ]
        best = next((p for p in predictions if p["source"] == "bench"), predictions[0] if predictions else None)
        rows.append(
            {
                **row,
                **setting,
                "predictions": predictions,
                "kind": "model",
                "predicted_speedup": best and best["predicted_speedup"],
                "gap": best and best["gap"],
                "compression": best and best["compression"],
                "compression_source": best and best["source"],
            }
        )
    return rows


def engine_best(points=None, bench_rows=None) -> dict:
    """The most tokens per step this project's engine measured, each figure with the measurement it comes from:
    the best prompt-set mean among the 128-token benches and among the 64-token sweeps, and the best single
    prompt of any bench."""
    points = load_sweeps() if points is None else points
    bench_rows = benches() if bench_rows is None else bench_rows
    bench = max(bench_rows, key=lambda b: b["compression"])
    sweep = max(points, key=lambda p: p["compression"])
    prompt, value, where = max(
        ((p, v, b) for b in bench_rows for p, v in b["compression_by_prompt"].items()), key=lambda x: x[1]
    )
    setting = lambda d: f"W={d['window']} N={d['ngram']} G={d['guess']}, {d['pool']} pool"  # noqa: E731
    return {
        "bench_mean": {
            "compression": bench["compression"],
            "file": bench["file"],
            "setting": setting(bench),
            "max_new_tokens": bench["max_new_tokens"],
        },
        "sweep_mean": {
            "compression": sweep["compression"],
            "file": f"assets/sweep-{sweep['pool']}.json",
            "setting": setting(sweep),
            "max_new_tokens": 64,
        },
        "best_prompt": {
            "compression": value,
            "prompt": prompt,
            "file": where["file"],
            "setting": setting(where),
            "max_new_tokens": where["max_new_tokens"],
        },
    }
