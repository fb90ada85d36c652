"""What a gallery caption may say about its run: every number and every claim word computed from the run (`facts`).

A caption is a template written by hand (assets/gallery.json); it may use only these facts, so a re-recorded run
keeps a true caption. Claim words are predicates too: "its code parses" is `ast.parse` of the answer's Python block
(never run), "identical" compares the two lanes' tokens, and "faster", "slower" or "about as fast" is the project's
one noise rule (`app.speed`).
"""

from __future__ import annotations

import ast
import json
import re
import statistics
from functools import lru_cache

from lade_core import RunTrace
from lade_core.config import METHOD_NAMES
from lade_core.measure.prompts import load_prompts
from lade_core.paths import BENCH

from . import speed

_FENCE = re.compile(r"```(?:python|py)\s*\n(.*?)(?:```|\Z)", re.S)


def text_of(run: RunTrace) -> str:
    return run.text(run.parallel.tokens)


def repetition(run: RunTrace) -> dict:
    """The output's most repeated whole line (stripped, at least 3 characters): how often it appears as a line, and
    the step at which its first whole-line copy began (where a repetition loop takes over)."""
    starts, text = [], ""
    for step in run.parallel.steps:
        for token in step.accepted:
            starts.append((len(text), step.index))
            text += run.token_text.get(token, "")
    lines, offset = [], 0
    for line in text.split("\n"):
        lines.append((line.strip(), offset + len(line) - len(line.lstrip())))
        offset += len(line) + 1
    counts: dict[str, int] = {}
    for line, _ in lines:
        if len(line) >= 3:
            counts[line] = counts.get(line, 0) + 1
    if not counts or max(counts.values()) < 3:
        return {"loop_count": None, "loop_step": None, "loop_line": None}  # no loop: a caption may not claim one
    line = max(counts, key=counts.get)
    first = next(at for text_line, at in lines if text_line == line)
    step = next((s for at, s in reversed(starts) if at <= first), None)
    return {"loop_count": counts[line], "loop_step": step, "loop_line": line}


def repeat_share(run: RunTrace, n: int = 4) -> float:
    """The share of output tokens that end an n-gram the text already had (the prompt included)."""
    seen, text, repeated = set(), list(run.prompt_ids), 0
    for i in range(len(text) - n + 1):
        seen.add(tuple(text[i : i + n]))
    for token in run.parallel.tokens:
        text.append(token)
        gram = tuple(text[-n:])
        repeated += gram in seen
        seen.add(gram)
    return repeated / max(len(run.parallel.tokens), 1)


def python_parses(run: RunTrace) -> bool | None:
    """Whether the answer's first Python code block parses (None: the answer has none). Parsed, never run."""
    found = _FENCE.search(text_of(run))
    if not found:
        return None
    try:
        ast.parse(found.group(1))
    except (SyntaxError, ValueError):
        return False
    return True


@lru_cache(maxsize=1)
def _bench_rows() -> tuple[tuple[dict, dict], ...]:
    rows = []
    for path in sorted(BENCH.glob("bench-*.json")):
        data = json.loads(path.read_text())
        rows += [(data, row) for row in data.get("prompts", [])]
    return tuple(rows)


def bench_speedups(run: RunTrace) -> list[float]:
    """Every bench row's speed-up for this run's prompt and settings (assets/bench/bench-*.json), measured on the
    run's own machine, threads and layouts (a row from another machine or setting is never set beside the run)."""
    prompts = {p["prompt"]: p["id"] for p in load_prompts()}
    wanted = prompts.get(run.prompt)
    c = run.config
    setting = {
        "window": c.window,
        "ngram": c.ngram,
        "guess": c.guess,
        "pool": c.pool,
        "tree": c.tree,
        "adaptive": c.adaptive,
    }
    found = [
        row["speedup"]
        for data, row in _bench_rows()
        if (data.get("machine"), data.get("threads"), data.get("kernels"))
        == (run.machine.description, run.machine.threads, run.machine.kernels)
        and wanted
        and row.get("id") == wanted
        and data.get("method", "lookahead") == run.method
        and data.get("sampling", {}).get("temperature") == run.sampling.temperature
        and all(data.get("config", {}).get(k) == v for k, v in setting.items())
    ]
    return found


def facts(run: RunTrace) -> dict:
    """The numbers and words a caption may use, read off the run."""
    p, b = run.parallel, run.baseline
    mean_step = speed.mean_step_s
    bench, parses = bench_speedups(run), python_parses(run)
    ratio, judged = speed.speedup(run), speed.band(run)
    verdict = speed.against_greedy([ratio, *bench], judged["ratio"]) if judged else ""
    m = run.machine
    where = f"{m.description}, {m.threads} thread{'' if m.threads == 1 else 's'}" if m.recorded else "an unrecorded CPU"
    on_cpu = (
        f"{ratio:.2f}x greedy's speed"
        + (f"; the bench measured this prompt and setting at {', '.join(f'{v:.2f}x' for v in bench)}" if bench else "")
        + (
            f", so on the CPU it was recorded on ({where}) it is {verdict} ({speed.band_words(judged)})"
            if judged
            else f" on {where}"
        )
    )
    return {
        "compression": round(p.compression, 2),
        "tokens": len(p.tokens),
        "steps": len(p.steps),
        "baseline_steps": len(b.steps),
        "speedup": round(ratio, 2),
        "step_cost": round(mean_step(p) / mean_step(b), 2) if mean_step(b) else 0.0,
        "identical": "identical to" if p.tokens == b.tokens else "different from",
        "W": run.config.window,
        "N": run.config.ngram,
        "G": run.config.guess,
        "pool": run.config.pool,
        "temperature": run.sampling.temperature,
        "device": run.device,
        "repeat_pct": round(100 * repeat_share(run)),
        **repetition(run),
        "tokens_per_forward": run.config.tokens_per_forward,
        "verdict": verdict,
        "on_cpu": on_cpu,
        "parses": {True: "parses", False: "does not parse", None: "is not there"}[parses],
        "window_pct": round(100 * sum(1 for s in p.steps[1:] if s.window) / max(len(p.steps) - 1, 1)),
        "mean_fed": round(statistics.fmean(s.n_input for s in p.steps[1:]), 1) if len(p.steps) > 1 else 0.0,
        **jacobi_tally(run),
        "lanes_summary": lanes_summary(run),
        "main_name": lane_name(run.method, run.config),
    }


POOL_WORDS = {
    "paper": "the paper's lookahead (its window's n-grams only)",
    "output": "lookahead (its window's n-grams and the answer's)",
    "prompt": "lookahead (its window's n-grams and the prompt's)",
}


def lane_name(method: str, config) -> str:
    """A lane's method in words, naming what its candidates come from: a lookahead lane that also verifies prompt
    lookup's copies is a hybrid and is called one."""
    if method != "lookahead":
        return METHOD_NAMES[method]
    if config.lookup:
        return "lookahead with prompt lookup's copies among its candidates"
    return POOL_WORDS[config.pool]


def lanes_summary(run: RunTrace) -> str:
    """The race's other lanes in words: each one's tokens per step, and whether every text equals greedy's."""
    parts = [f"{lane_name(lane.method, lane.config)} {lane.run.compression:.2f}" for lane in run.lanes]
    same = all(m.tokens == run.baseline.tokens for m in (run.parallel, *(lane.run for lane in run.lanes)))
    texts = (
        ("every text identical to greedy's" if same else "the texts differ")
        if run.sampling.greedy
        else "each lane samples its own text"
    )
    return (f"{', '.join(parts)} tokens per step; " if parts else "") + texts


def jacobi_tally(run: RunTrace) -> dict:
    """Over a Jacobi run's steps: the fed guesses right for their position, and how many of them the steps kept."""
    out, right, kept = run.parallel.tokens, 0, 0
    for s in run.parallel.steps[1:]:
        if s.kind != "jacobi":
            continue
        for j, token in enumerate(s.levels_before[0]):
            i = s.position + 1 + j - len(run.prompt_ids)
            right += 0 <= i < len(out) and out[i] == token
        kept += s.n_accepted_from_candidate
    return {"right_fed": right, "kept_fed": kept, "stranded": right - kept}
