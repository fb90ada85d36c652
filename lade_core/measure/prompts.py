"""The benchmark prompts: a JSONL file of {id, kind, prompt} rows (default: assets/prompts.jsonl: code, chat, and
grounded prompts whose answer copies or edits the prompt)."""

from __future__ import annotations

import json
from pathlib import Path

from ..paths import PROMPTS


def load_prompts(path: str | Path | None = None) -> list[dict]:
    """[{id, kind, prompt}, ...] from `path`; ValueError naming the line if one is not a prompt row."""
    path = Path(path or PROMPTS)
    rows = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            raise ValueError(f"{path}: line {i + 1} is not JSON") from None
        if not isinstance(row, dict) or not isinstance(row.get("prompt"), str):
            raise ValueError(f"{path}: line {i + 1} needs a 'prompt' string")
        rows.append({"id": str(row.get("id", f"p{i}")), "kind": str(row.get("kind", "")), "prompt": row["prompt"]})
    return rows
