"""Example prompts and the recorded runs shipped in assets/runs/ (what the page shows before anything is run).

Recorded runs are plain `RunTrace` JSON files written by `app/record_assets.py`; loading one needs no model.
"""

from __future__ import annotations

import json
from pathlib import Path

from lade_core import RunTrace, parse_run

ROOT = Path(__file__).resolve().parent.parent
RUNS_DIR = ROOT / "assets" / "runs"
PROMPTS_FILE = Path("/work/shared/bench/prompts.jsonl")

# Used when the shared bench file is not there (a deployed copy of the app).
FALLBACK_PROMPTS = [
    {"id": "code-fib", "kind": "code", "prompt": "Write a Python function fib(n) that returns the n-th Fibonacci "
     "number using iteration, with a docstring and two doctest examples."},
    {"id": "code-bsearch", "kind": "code", "prompt": "Implement binary search in Python: a function that takes a "
     "sorted list and a target and returns the index of the target or -1."},
    {"id": "code-class", "kind": "code", "prompt": "Write a Python class Stack with push, pop, peek and is_empty "
     "methods, and a short example of using it."},
    {"id": "chat-sleep", "kind": "chat", "prompt": "Give me five practical tips for sleeping better, one sentence each."},
    {"id": "chat-photosynthesis", "kind": "chat", "prompt": "Explain photosynthesis to a ten-year-old in a short paragraph."},
    {"id": "chat-list", "kind": "chat", "prompt": "List the planets of the solar system in order from the Sun, "
     "with one fact about each."},
]

# The runs shipped with the app: id of the prompt, and the settings they were recorded with. A run with a temperature
# samples (seeded, so re-recording it draws the same tokens); the pool is seeded from the prompt so that sampled
# drafts still get accepted several at a time.
RECORDED = [
    {"id": "code-fib", "window": 7, "ngram": 4, "guess": 7, "max_new_tokens": 96},
    {"id": "chat-sleep", "window": 7, "ngram": 4, "guess": 7, "max_new_tokens": 96},
    {"id": "code-fib", "window": 7, "ngram": 4, "guess": 7, "max_new_tokens": 64, "temperature": 0.7, "top_p": 1.0,
     "seed": 0, "pool_from_prompt": True},
]


def example_prompts() -> list[dict]:
    """[{id, kind, prompt}, ...]: the bench prompts if available, else a built-in copy."""
    if PROMPTS_FILE.exists():
        return [json.loads(line) for line in PROMPTS_FILE.read_text().splitlines() if line.strip()]
    return list(FALLBACK_PROMPTS)


def prompt_by_id(prompt_id: str) -> str:
    return next(p["prompt"] for p in example_prompts() if p["id"] == prompt_id)


def recorded_files() -> dict[str, Path]:
    """Display name -> JSON file of every shipped run, sorted by name."""
    return {p.stem: p for p in sorted(RUNS_DIR.glob("*.json"))}


def load_recorded(name: str) -> RunTrace:
    return parse_run(recorded_files()[name].read_text())
