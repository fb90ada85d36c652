"""`python -m lade_core bench`: greedy against lookahead on a prompt set, measured side by side, one prompt at a time.

For each prompt (chat template applied): one untimed warm-up, then greedy and lookahead alternately `--repeat`
times, keeping each one's fastest run. Reported per prompt: compression (new tokens / lookahead steps, prefill and
warm-up steps included), exactness against greedy (and the first diverging token if any), wall times, the split
of lookahead time into forward passes and engine overhead, and the cost of a lookahead step over a greedy step.
Ratios come from the same process and the same minute, so a noisy shared machine moves both sides alike.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from .config import LookaheadConfig, Sampling
from .greedy import greedy_generate
from .lookahead import lookahead_generate
from .trace import MethodRun

DEFAULT_PROMPTS = Path(__file__).resolve().parents[1] / "assets" / "prompts.jsonl"


def load_prompts(path: str | Path | None) -> list[dict]:
    rows = []
    for i, line in enumerate(Path(path or DEFAULT_PROMPTS).read_text(encoding="utf-8").splitlines()):
        if line.strip():
            row = json.loads(line)
            if not isinstance(row, dict) or not isinstance(row.get("prompt"), str):
                raise ValueError(f"{path}: line {i + 1} needs a 'prompt' string")
            rows.append({"id": row.get("id", f"p{i}"), "kind": row.get("kind", ""), "prompt": row["prompt"]})
    return rows


def _decode_step_s(run: MethodRun) -> float:
    """Mean time of a decoding step (the prefill excluded)."""
    steps = run.steps[1:]
    return sum(s.forward_s + s.overhead_s for s in steps) / max(len(steps), 1)


def first_divergence(a, b) -> int | None:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def bench_prompt(lm, prompt_ids, config: LookaheadConfig, max_new_tokens: int, repeat: int = 1,
                 sampling: Sampling | None = None) -> dict:
    lookahead_generate(lm, prompt_ids, config, min(8, max_new_tokens), sampling=sampling)  # warm-up, untimed
    best_ar = best_la = None
    for _ in range(max(repeat, 1)):
        ar = greedy_generate(lm, prompt_ids, max_new_tokens, sampling=sampling)
        la = lookahead_generate(lm, prompt_ids, config, max_new_tokens, sampling=sampling)
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
        "overhead_share": la.overhead_s / max(la.forward_s + la.overhead_s, 1e-12),
        "lookahead_step_s": la_step,
        "greedy_step_s": ar_step,
        "step_cost_ratio": la_step / max(ar_step, 1e-12),
        "speedup": ar.wall_s / la.wall_s,
        "greedy_tokens": len(ar.tokens),
    }


def summarize(rows: list[dict]) -> dict:
    def mean_of(kind=None, key="compression"):
        vals = [r[key] for r in rows if kind is None or r["kind"] == kind]
        return statistics.fmean(vals) if vals else None

    return {
        "compression_mean": mean_of(),
        "compression_mean_code": mean_of("code"),
        "compression_mean_chat": mean_of("chat"),
        "speedup_median": statistics.median(r["speedup"] for r in rows),
        "speedup_min": min(r["speedup"] for r in rows),
        "step_cost_ratio_mean": mean_of(key="step_cost_ratio"),
        "overhead_share_max": max(r["overhead_share"] for r in rows),
        "all_exact": all(r["exact"] for r in rows),
        "exact_count": sum(r["exact"] for r in rows),
    }


def run_bench(args) -> dict:
    from .cli import _settings
    from .loading import load_model

    lm = load_model(args.model, args.device, args.dtype)
    config, sampling = _settings(args, lm)
    rows = []
    print(f"bench: {lm.name} on {lm.device} ({str(lm.dtype).removeprefix('torch.')}), W={config.window} "
          f"N={config.ngram} G={config.guess}{' +prompt pool' if config.pool_from_prompt else ''}, "
          f"{args.max_new_tokens} new tokens, temperature {sampling.temperature}")
    print(f"{'prompt':22s} {'tokens':>6s} {'steps':>5s} {'compr':>6s} {'exact':>5s} {'step x':>6s} "
          f"{'ovh %':>5s} {'greedy s':>8s} {'lookahead s':>11s} {'speed-up':>8s}")
    for item in load_prompts(args.prompts):
        ids = lm.encode_prompt(item["prompt"])
        row = {"id": item["id"], "kind": item["kind"],
               **bench_prompt(lm, ids, config, args.max_new_tokens, args.repeat, sampling)}
        rows.append(row)
        print(f"{row['id']:22s} {row['new_tokens']:6d} {row['steps']:5d} {row['compression']:6.2f} "
              f"{'yes' if row['exact'] else 'NO':>5s} {row['step_cost_ratio']:6.2f} {100 * row['overhead_share']:5.1f} "
              f"{row['greedy_s']:8.2f} {row['lookahead_s']:11.2f} {row['speedup']:7.2f}x")
        sys.stdout.flush()
    summary = summarize(rows)
    print(f"mean compression {summary['compression_mean']:.2f} (code {summary['compression_mean_code'] or 0:.2f}, "
          f"chat {summary['compression_mean_chat'] or 0:.2f}); median speed-up {summary['speedup_median']:.2f}x "
          f"(min {summary['speedup_min']:.2f}x); step cost {summary['step_cost_ratio_mean']:.2f}x greedy; "
          f"overhead at most {100 * summary['overhead_share_max']:.1f}%; exact on {summary['exact_count']}/{len(rows)}")
    result = {
        "model": lm.name, "device": str(lm.device), "dtype": str(lm.dtype).removeprefix("torch."),
        "kernels": lm.kernels,
        "config": config.to_dict(), "sampling": sampling.to_dict(), "max_new_tokens": args.max_new_tokens,
        "command": "python -m lade_core " + " ".join(sys.argv[1:]), "prompts": rows, "summary": summary,
    }
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1), encoding="utf-8")
    return result
