"""The gallery: recorded runs shipped in assets/runs/, each captioned with the one thing it shows.

`assets/gallery.json` lists each run's name, title, the `lade trace` arguments that recorded it, its role in the
lesson (if any) and a caption template. Captions are written by hand, but every number in them is computed from the
run (`facts`), so a re-recorded run keeps true captions. `python -m app.gallery` re-records every run with the shipped
command line (`--only NAME` just one); loading one needs no model.
"""

from __future__ import annotations

import argparse
import json
import statistics
from functools import lru_cache

from lade_core import RunTrace, parse_run
from lade_core.paths import GALLERY, RUNS

SPEC = GALLERY


@lru_cache(maxsize=1)
def spec() -> tuple[dict, ...]:
    return tuple(json.loads(SPEC.read_text(encoding="utf-8")))


def names() -> list[str]:
    return [entry["name"] for entry in spec()]


def entry(name: str) -> dict | None:
    return next((e for e in spec() if e["name"] == name), None)


@lru_cache(maxsize=32)
def load(name: str) -> RunTrace:
    """A gallery run by name (KeyError if there is none)."""
    if entry(name) is None:
        raise KeyError(name)
    return parse_run((RUNS / f"{name}.json").read_bytes())


def role(name: str) -> str | None:
    return (entry(name) or {}).get("role")


def by_role(wanted: str) -> str | None:
    return next((e["name"] for e in spec() if e.get("role") == wanted), None)


def repetition(run: RunTrace) -> dict:
    """The output's most repeated line (stripped, at least 3 characters): how often it appears, and the step at
    which its second copy began (where a repetition loop takes over)."""
    tokens, starts, text = run.parallel.tokens, [], ""
    for step in run.parallel.steps:
        for token in step.accepted:
            starts.append((len(text), step.index))
            text += run.token_text.get(token, "")
    lines = [line.strip() for line in text.split("\n")]
    counts = {line: lines.count(line) for line in set(lines) if len(line) >= 3}
    if not counts or max(counts.values()) < 3 or not tokens:
        return {"loop_count": 0, "loop_step": None, "loop_line": ""}
    line = max(counts, key=counts.get)
    second = text.find(line, text.find(line) + len(line))
    step = next((s for offset, s in reversed(starts) if offset <= second), None)
    return {"loop_count": counts[line], "loop_step": step, "loop_line": line}


def repeat_share(run: RunTrace, n: int = 4) -> float:
    """The share of output tokens that end an n-gram the text already had (the prompt included): how much of the
    output repeats what came before, which is what a pool of n-grams guesses best."""
    seen, text, repeated = set(), list(run.prompt_ids), 0
    for i in range(len(text) - n + 1):
        seen.add(tuple(text[i: i + n]))
    for token in run.parallel.tokens:
        text.append(token)
        gram = tuple(text[-n:])
        repeated += gram in seen
        seen.add(gram)
    return repeated / max(len(run.parallel.tokens), 1)


def facts(run: RunTrace) -> dict:
    """The numbers a caption may use, read off the run."""
    p, b = run.parallel, run.baseline

    def mean_step(method):
        steps = method.steps[1:]
        return statistics.fmean(s.forward_s + s.overhead_s for s in steps) if steps else 0.0

    time = lambda m: sum(s.forward_s + s.overhead_s for s in m.steps)  # noqa: E731
    return {
        "compression": round(p.compression, 2), "tokens": len(p.tokens), "steps": len(p.steps),
        "baseline_steps": len(b.steps), "speedup": round(time(b) / time(p), 2) if time(p) else 0.0,
        "step_cost": round(mean_step(p) / mean_step(b), 2) if mean_step(b) else 0.0,
        "identical": p.tokens == b.tokens, "W": run.config.window, "N": run.config.ngram, "G": run.config.guess,
        "pool": run.config.pool, "temperature": run.sampling.temperature, "device": run.device,
        "repeat_pct": round(100 * repeat_share(run)), "tokens_per_forward": run.config.tokens_per_forward,
        "faster_or_slower": "faster than" if time(p) < time(b) else "slower than", **repetition(run),
        "window_pct": round(100 * sum(1 for s in p.steps[1:] if s.window) / max(len(p.steps) - 1, 1)),
        "mean_fed": round(statistics.fmean(s.n_input for s in p.steps[1:]), 1) if len(p.steps) > 1 else 0.0,
    }


def caption(name: str) -> str:
    """The run's caption with its numbers filled in from the run."""
    return entry(name)["caption"].format(**facts(load(name)))


def listing() -> list[dict]:
    """What the page shows of each gallery run: name, title, caption, method."""
    return [{"name": e["name"], "title": e["title"], "caption": caption(e["name"]), "method": load(e["name"]).method}
            for e in spec()]


def main() -> None:
    from lade_core.cli import main as lade

    parser = argparse.ArgumentParser(description="Re-record the gallery's runs with the shipped command line.")
    parser.add_argument("--only", default=None, help="record only the run with this name")
    args = parser.parse_args()
    if args.only and entry(args.only) is None:
        parser.error(f"no gallery run is called {args.only!r}")
    for e in spec():
        if args.only in (None, e["name"]):
            status = lade(["trace", *e["args"], "--title", e["name"], "--out", str(RUNS / f"{e['name']}.json")])
            if status:
                raise SystemExit(status)
    load.cache_clear()
    for e in spec():
        if args.only in (None, e["name"]):
            print(f"{e['name']}: {caption(e['name'])}")


if __name__ == "__main__":
    main()
