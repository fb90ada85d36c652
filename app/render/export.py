"""Standalone HTML replay of a recorded run: one file, plotly.js inlined, that opens from disk with the network off.

`render_html(run)` is pure: it packs what the page draws per step into a compact JSON payload (token ids per step,
the Jacobi window, the verification branch, plus the run's id -> text table) and fills `assets/replay_template.html`,
whose vanilla JS does the drawing. `export_html(trace, out)` loads a saved trace with the strict `parse_run` (a bad
file raises `TraceError`, a missing one `FileNotFoundError`) and writes the page. Left out: the attention mask and
the n-gram pool contents (the app shows those), sampling draws, and per-step timings beyond the cumulative chart.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from .trace import MethodRun, RunTrace, StepTrace, parse_run

TEMPLATE = Path(__file__).resolve().parents[1] / "assets" / "replay_template.html"
_SLOT = re.compile(r"\{\{(TITLE|PLOTLY_JS|PAYLOAD)\}\}")


def _step(s: StepTrace) -> dict:
    """One lookahead step, short keys: the page reads them as written here."""
    return {
        "k": s.kind, "pos": s.position, "x": s.input_token, "a": list(s.accepted),
        "lv": [list(r) for r in s.levels_before], "nl": list(s.new_level),
        "c": [list(r) for r in s.candidates], "p": [list(r) for r in s.predictions],
        "m": list(s.match_lengths), "w": s.winner, "pool": s.pool_size, "add": len(s.ngrams_added),
        "t": round(s.forward_s + s.overhead_s, 5),
    }


def _used_ids(run: RunTrace) -> set[int]:
    ids = set(run.greedy.tokens) | set(run.lookahead.tokens)
    for s in run.lookahead.steps:
        ids.add(s.input_token)
        for rows in (s.levels_before, s.candidates, s.predictions, (s.new_level,)):
            for row in rows:
                ids.update(row)
    return ids


def _method_meta(m: MethodRun) -> dict:
    return {"stop": m.stop_reason, "wall_s": round(m.wall_s, 4), "tokens": len(m.tokens), "steps": len(m.steps)}


def payload(run: RunTrace) -> dict:
    """Everything the page needs, as plain JSON data."""
    c = run.config
    return {
        "title": run.title or "Lookahead decoding replay",
        "model": run.model, "device": run.device, "dtype": run.dtype,
        "W": c.window, "N": c.ngram, "G": c.guess, "max_new_tokens": run.max_new_tokens,
        "greedy_sampling": run.sampling.greedy,
        "prompt": run.prompt,
        "tok": {str(t): run.token_text.get(t, f"<{t}>") for t in sorted(_used_ids(run))},
        "greedy": [list(s.accepted) for s in run.greedy.steps],
        "greedy_t": [round(s.forward_s + s.overhead_s, 5) for s in run.greedy.steps],
        "steps": [_step(s) for s in run.lookahead.steps],
        "meta": {"greedy": _method_meta(run.greedy), "lookahead": _method_meta(run.lookahead)},
        "identical": run.greedy.tokens == run.lookahead.tokens,
    }


def _script_json(data: dict) -> str:
    """JSON safe inside <script>: no `<`, `>` or `&` survives, so neither `</script>` nor `<!--` can appear."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_html(run: RunTrace) -> str:
    """The whole self-contained page for `run`."""
    from plotly.offline import get_plotlyjs

    slots = {
        "TITLE": html.escape(run.title or "Lookahead decoding replay"),
        "PLOTLY_JS": get_plotlyjs(),
        "PAYLOAD": _script_json(payload(run)),
    }
    # One pass: text inserted into a slot is never scanned for further slots.
    return _SLOT.sub(lambda m: slots[m[1]], TEMPLATE.read_text(encoding="utf-8"))


def export_html(trace_path: Path, out_path: Path) -> None:
    """Load the trace at `trace_path` and write its replay page to `out_path`."""
    run = parse_run(Path(trace_path).read_bytes())
    Path(out_path).write_text(render_html(run), encoding="utf-8")
