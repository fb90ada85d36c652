"""View 3, the n-gram pool: its state at step k, replayed from the trace, the step's lookup key and changes.

The pool is not stored per step; it is rebuilt by replaying every lookahead step's `ngrams_added` (the prefill's
are the prompt's n-grams when the run seeded its pool) through the engine's own `NGramPool`. The evictions this
replay makes are the recorded `ngrams_evicted`, and its size is the recorded `pool_size` (checked in tests).
"""

from __future__ import annotations

import plotly.graph_objects as go

from lade_core import RunTrace
from lade_core.pool import replay_pool

from .common import LA_COLOR, cell_text, clock, small_layout, step_at, step_line


def pool_at(run: RunTrace, k: int) -> dict[int, list[tuple[int, ...]]]:
    """key -> continuations (most recently used first) after lookahead clock step k, replayed with the engine's pool."""
    steps = run.lookahead.steps[: clock(run.lookahead, k) + 1]
    return replay_pool((s.ngrams_added for s in steps), run.config.guess).items()


def _chip(run: RunTrace, key: int, cont: tuple[int, ...], kind: str) -> str:
    text = " ".join(cell_text(run, t, 8) for t in (key, *cont))
    return f'<span class="chip {kind}">{text}</span>'


def pool_html(run: RunTrace, k: int, max_keys: int = 10) -> str:
    """The pool after the step: the lookup key's n-grams, then the keys this step touched."""
    step = step_at(run, k)
    if step is None or step.kind == "prefill":
        return '<div class="note">Step 0 is the prompt prefill: the pool is empty until the window fills.</div>'
    pool = pool_at(run, step.index)
    before = pool_at(run, step.index - 1)
    x = step.input_token
    added = {tuple(n) for n in step.ngrams_added}
    evicted = [tuple(n) for n in step.ngrams_evicted]
    keys = [x] + [key for key in dict.fromkeys(n[0] for n in (*step.ngrams_added, *evicted)) if key != x]
    rows = []
    for key in keys[:max_keys]:
        chips = [_chip(run, key, c, "added" if (key, *c) in added and c not in before.get(key, []) else "")
                 for c in pool.get(key, [])]
        chips += [_chip(run, key, n[1:], "evicted") for n in evicted if n[0] == key]
        label = "lookup key x" if key == x else "key"
        cls = ' class="lookup"' if key == x else ""
        rows.append(f'<tr{cls}><th>{label} <code>{cell_text(run, key)}</code></th>'
                    f'<td>{"".join(chips) or "<span class=muted>nothing stored</span>"}</td></tr>')
    more = len(keys) - max_keys
    found = len(before.get(x, []))
    return (f'<div class="muted">After step {step.index}: <b>{sum(len(v) for v in pool.values())}</b> n-grams under '
            f'{len(pool)} keys (at most G={run.config.guess} per key). Lookup under x = <code>{cell_text(run, x)}</code> '
            f'found {found} candidate{"s" if found != 1 else ""} for this step; the step added {len(step.ngrams_added)} '
            f'n-grams (new ones in green) and evicted {len(evicted)} (red).</div>'
            f'<table class="pool">{"".join(rows)}</table>'
            + (f'<div class="muted">… and {more} more keys touched this step</div>' if more > 0 else ""))


def pool_size_figure(run: RunTrace, k: int) -> go.Figure:
    """Pool size after each lookahead step; the current step is the vertical line `shapes[0]`."""
    steps = run.lookahead.steps
    fig = go.Figure(go.Scatter(x=[s.index for s in steps], y=[s.pool_size for s in steps], mode="lines+markers",
                               marker=dict(size=3), line=dict(color=LA_COLOR, width=2), name="pool size",
                               hovertemplate="step %{x}: %{y} n-grams<extra></extra>"))
    fig.update_layout(**small_layout("Pool size (n-grams) after each step", height=220), showlegend=False,
                      xaxis_title="step", yaxis_title="n-grams", shapes=[step_line(k)])
    return fig
