"""Bench: autoregressive decoding against a method (lookahead, Jacobi, prompt lookup, early exit, a draft model) on a
prompt set, side by side, one prompt at a time.

For each prompt (chat template applied): one untimed warm-up, then greedy and the parallel method alternately
`repeat` times, keeping each one's fastest run. Reported per prompt: compression (new tokens / steps, prefill and
warm-up steps included), exactness against greedy (and the first diverging token if any), wall times, the split of
the method's time into forward passes and engine overhead, the cost of its step over a greedy step, and the sizes
its steps used (for adaptive runs), and the practitioners' acceptance metrics (`metrics.py`). Summaries are over
all prompts and per prompt class (`kind`: code, chat, grounded). Ratios come from the same process and the same
minute, so a noisy shared machine moves both sides alike. (`lookahead_s` is the method's time, whatever the method:
the field kept its first name.)
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from ..autoregressive import autoregressive_generate
from ..config import Sampling
from ..layout import StepLayout
from ..methods import MethodSpec, decode
from ..metrics import run_metrics
from ..trace import MethodRun

CLASSES = ("code", "chat", "grounded")  # the prompt classes summaries report apart


def _decode_step_s(run: MethodRun) -> float:
    """Mean time of a decoding step (the prefill excluded)."""
    steps = run.steps[1:]
    return sum(s.seconds for s in steps) / max(len(steps), 1)


def first_divergence(a, b) -> int | None:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def sizes_used(run: MethodRun) -> dict:
    """What the decoding steps fed: mean window, candidates, tokens, the share of steps that used a window, and the
    verification rows per step as fed and as a token tree would feed the same candidates."""
    steps = run.steps[1:]
    n = max(len(steps), 1)
    tree_rows = sum(StepLayout.tree(0, 0, s.candidates).nodes for s in steps if s.kind in ("lookahead", "warmup"))
    return {
        "mean_window": sum(s.window for s in steps) / n,
        "mean_candidates": sum(len(s.candidates) for s in steps) / n,
        "mean_tokens_fed": sum(s.n_input for s in steps) / n,
        "window_share": sum(1 for s in steps if s.window) / n,
        "verify_rows": sum(s.layout.nodes for s in steps if s.kind in ("lookahead", "warmup")) / n,
        "verify_rows_as_tree": tree_rows / n,
    }


def bench_prompt(
    lm, prompt_ids, spec: MethodSpec, max_new_tokens: int, repeat: int = 1, sampling: Sampling | None = None
) -> dict:
    def parallel(n):
        return decode(lm, prompt_ids, spec, n, sampling)

    parallel(min(8, max_new_tokens))  # warm-up, untimed
    best_ar = best_la = None
    for _ in range(max(repeat, 1)):
        ar = autoregressive_generate(lm, prompt_ids, max_new_tokens, sampling=sampling)
        la = parallel(max_new_tokens)
        best_ar = ar if best_ar is None or ar.wall_s < best_ar.wall_s else best_ar
        best_la = la if best_la is None or la.wall_s < best_la.wall_s else best_la
    ar, la = best_ar, best_la
    la_step, ar_step = _decode_step_s(la), _decode_step_s(ar)
    return {
        "new_tokens": len(la.tokens),
        "steps": len(la.steps),
        "compression": len(la.tokens) / len(la.steps),
        "exact": la.tokens == ar.tokens,
        "first_divergence": first_divergence(la.tokens, ar.tokens),
        "lookahead_s": la.wall_s,
        "greedy_s": ar.wall_s,
        "forward_s": la.forward_s,
        "overhead_s": la.overhead_s,
        "draft_s": la.draft_s,
        "draft_passes": sum(s.draft_passes for s in la.steps),
        "overhead_share": la.overhead_s / max(sum(s.seconds for s in la.steps), 1e-12),
        "lookahead_step_s": la_step,
        "greedy_step_s": ar_step,
        "step_cost_ratio": la_step / max(ar_step, 1e-12),
        "speedup": ar.wall_s / la.wall_s,
        "ms_per_token": 1000 * la.wall_s / max(len(la.tokens), 1),
        "greedy_ms_per_token": 1000 * ar.wall_s / max(len(ar.tokens), 1),
        "greedy_tokens": len(ar.tokens),
        "sizes": sizes_used(la),
        "metrics": run_metrics(la),
    }


def by_class(rows: list[dict]) -> dict:
    """Per prompt class present: prompts, mean compression, median ms per token (method and greedy), median
    speed-up, mean acceptance length."""
    out = {}
    for kind in dict.fromkeys(r["kind"] for r in rows):
        part = [r for r in rows if r["kind"] == kind]
        out[kind] = {
            "prompts": len(part),
            "compression_mean": statistics.fmean(r["compression"] for r in part),
            "ms_per_token_median": statistics.median(r["ms_per_token"] for r in part),
            "greedy_ms_per_token_median": statistics.median(r["greedy_ms_per_token"] for r in part),
            "speedup_median": statistics.median(r["speedup"] for r in part),
            "mean_acceptance_length": statistics.fmean(r["metrics"]["mean_acceptance_length"] for r in part),
        }
    return out


def summarize(rows: list[dict]) -> dict:
    def mean_of(kind=None, key="compression"):
        vals = [r[key] for r in rows if kind is None or r["kind"] == kind]
        return statistics.fmean(vals) if vals else None

    return {
        "compression_mean": mean_of(),
        **{f"compression_mean_{kind}": mean_of(kind) for kind in CLASSES},
        "by_class": by_class(rows),
        "speedup_median": statistics.median(r["speedup"] for r in rows),
        "speedup_min": min(r["speedup"] for r in rows),
        "speedup_max": max(r["speedup"] for r in rows),
        "step_cost_ratio_mean": mean_of(key="step_cost_ratio"),
        "overhead_share_max": max(r["overhead_share"] for r in rows),
        "ms_per_token_mean": mean_of(key="ms_per_token"),
        "all_exact": all(r["exact"] for r in rows),
        "exact_count": sum(r["exact"] for r in rows),
    }


def bench(
    lm,
    prompts: list[dict],
    spec: MethodSpec,
    max_new_tokens: int,
    repeat: int = 1,
    sampling: Sampling | None = None,
    on_row: Callable[[dict], None] | None = None,
) -> dict:
    """Every prompt of `prompts` benched against `spec`'s method; `on_row(row)` gets each prompt's row as it is
    done."""
    sampling = sampling or Sampling()
    rows = []
    for item in prompts:
        ids = lm.encode_prompt(item["prompt"])
        row = {"id": item["id"], "kind": item["kind"], **bench_prompt(lm, ids, spec, max_new_tokens, repeat, sampling)}
        rows.append(row)
        if on_row:
            on_row(row)
    import torch

    from ..machine import identity

    return {
        "model": lm.name,
        "device": str(lm.device),
        "dtype": str(lm.dtype).removeprefix("torch."),
        "kernels": lm.kernels,
        "machine": identity(str(lm.device))["description"],  # with the threads: a bench row is of this machine only
        "threads": torch.get_num_threads(),
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "method": spec.method,
        "config": spec.config.to_dict(),
        "draft": spec.draft.to_dict(),
        "sampling": sampling.to_dict(),
        "max_new_tokens": max_new_tokens,
        "prompts": rows,
        "summary": summarize(rows),
    }
