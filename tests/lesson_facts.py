"""Python's own reading of the lesson's facts and answers from a trace: what each chapter's sentences and questions
must say about the run on screen (app/static/lade-lesson.js computes them in the browser; the browser tests compare).
An independent second reading on purpose: if the page's sentence and this disagree, one of them misreads the trace."""

from __future__ import annotations

import statistics

from lade_core import RunTrace
from lade_core.pool import replay_pool


def clock(run: RunTrace, lane: str, k: int) -> int:
    return max(0, min(k, len(getattr(run, lane).steps) - 1))


def final_at(run: RunTrace, pos: int):
    i = pos - len(run.prompt_ids)
    return run.parallel.tokens[i] if 0 <= i < len(run.parallel.tokens) else None


def right(run: RunTrace, step) -> int:
    L = len(step.levels_before)
    return sum(final_at(run, step.position + L + 1 + j) == t for j, t in enumerate(step.new_level))


def mean_step(method) -> float:
    steps = method.steps[1:]
    return statistics.fmean(s.forward_s + s.overhead_s for s in steps) if steps else 0.0


def kept(step) -> int:
    matched = step.match_lengths[step.winner] if step.winner >= 0 else 0
    return min(matched, len(step.accepted))


def jacobi_misses(run: RunTrace) -> dict:
    right_guesses = kept_total = misplaced = 0
    for s in run.parallel.steps[1:]:
        for j, t in enumerate(s.levels_before[0] if s.levels_before else ()):
            pos = s.position + 1 + j
            if final_at(run, pos) == t:
                right_guesses += 1
            elif any(final_at(run, pos + d) == t or final_at(run, pos - d) == t for d in (1, 2, 3)):
                misplaced += 1
        kept_total += s.match_lengths[0] if s.match_lengths else 0
    return {"stranded": right_guesses - kept_total, "misplaced": misplaced}


def cost_at(points, tokens: float) -> float:
    """Linear between the points, along the last segment past them (as the lesson's chart reads the lab's curve)."""
    if tokens <= points[0][0]:
        return points[0][1]
    for (a, ca), (b, cb) in zip(points, points[1:]):
        if tokens <= b:
            return ca + (tokens - a) * (cb - ca) / (b - a)
    (a, ca), (b, cb) = points[-2], points[-1]
    return cb + (tokens - b) * (cb - ca) / (b - a)


def facts(chapter: int, run: RunTrace, k: int, lab: dict | None = None) -> dict:
    """name -> value of every fact chapter `chapter` states about `run` at step `k` (floats to compare loosely)."""
    step = run.parallel.steps[clock(run, "parallel", k)]
    if chapter == 1:
        steps = run.baseline.steps[: clock(run, "baseline", k) + 1]
        return {"baseline_tokens": sum(len(s.accepted) for s in steps), "baseline_steps": len(steps),
                "baseline_step_ms": 1000 * mean_step(run.baseline)}
    if chapter == 2:
        out = {"jacobi_window": run.config.window, "jacobi_steps": len(run.parallel.steps),
               "jacobi_tokens": len(run.parallel.tokens), "jacobi_compression": run.parallel.compression,
               **jacobi_misses(run)}
        if step.kind == "jacobi":
            out.update(step_right=right(run, step), step_kept=step.match_lengths[0])
        return out
    if chapter == 3:
        return {"W": run.config.window, "N": run.config.ngram, "levels": len(step.levels_before),
                "new_right": right(run, step)}
    if chapter == 4:
        pool = replay_pool((s.ngrams_added for s in run.parallel.steps[: step.index + 1]), run.config.guess)
        return {"pool_size": len(pool), "pool_keys": pool.keys, "found": len(step.candidates),
                "added": len(step.ngrams_added), "evicted": len(step.ngrams_evicted)}
    if chapter == 5:
        out = {"emitted": len(step.accepted)}
        if step.winner >= 0:
            out.update(winner=step.winner + 1, matched=kept(step))
        if run.sampling.greedy:
            out["identical"] = "identical" if run.parallel.tokens == run.baseline.tokens else "different"
        return out
    if chapter == 6:
        layout = step.layout
        return {"fed": layout.size, "levels": layout.levels, "W": layout.window, "nodes": layout.nodes}
    if chapter == 7:
        later = run.parallel.steps[1:]
        time = lambda m: sum(s.forward_s + s.overhead_s for s in m.steps)  # noqa: E731
        fed = statistics.fmean(s.n_input for s in later) if later else 1.0
        out = {"compression": run.parallel.compression, "fed": fed,
               "step_cost": mean_step(run.parallel) / mean_step(run.baseline),
               "speedup": time(run.baseline) / max(time(run.parallel), 1e-9)}
        if lab and lab.get("gpu"):
            gpu = cost_at(lab["gpu"]["points"], fed)
            out.update(gpu_cost=gpu, gpu_speedup=run.parallel.compression / gpu)
        return out
    return {}


def bucket(n: float, edges) -> int:
    return next((i for i, e in enumerate(edges) if n <= e), len(edges))


def answer(chapter: int, run: RunTrace, k: int, lab: dict | None = None) -> int | None:
    """The option the trace makes right for chapter `chapter`'s question asked at step `k`."""
    nxt = run.parallel.steps[min(k + 1, len(run.parallel.steps) - 1)]
    if chapter == 1:
        count = lambda j: sum(len(s.accepted) for s in run.baseline.steps[: clock(run, "baseline", j) + 1])  # noqa
        more = count(k + 10) - count(k)
        return 0 if more <= 7 else 1 if more <= 14 else 2
    if chapter == 2:
        return bucket(len(nxt.accepted), (1, 2))
    if chapter == 3:
        return bucket(right(run, nxt) if nxt.new_level else 0, (1, 3))
    if chapter == 4:
        return bucket(len(nxt.candidates), (0, 3))
    if chapter == 5:
        return bucket(len(nxt.accepted), (1, 2))
    if chapter == 6:
        return bucket(nxt.layout.size if nxt.kind not in ("prefill", "autoregressive") else 1, (19, 40))
    if chapter == 7:
        if not lab or "cpu_choice" not in lab:
            return -1  # the page says no bench result is shipped
        return 0 if lab["cpu_choice"]["wide"] > lab["cpu_choice"]["narrow"] else 1
    return None
