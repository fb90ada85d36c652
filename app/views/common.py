"""Small helpers shared by the views: the step clock, token text for HTML cells, colours, a compact figure layout."""

from __future__ import annotations

import html

from lade_core import MethodRun, RunTrace, StepTrace

# Two alternating hues for the steps that accepted tokens, and the verdict colours.
STEP_HUES = ("#dbeafe", "#fde68a")
MATCH, MISS, UNCHECKED, BONUS = "#bbf7d0", "#fecaca", "#f1f5f9", "#c7d2fe"
LA_COLOR, AR_COLOR = "#2563eb", "#9ca3af"


def last_index(method: MethodRun) -> int:
    return len(method.steps) - 1


def clock(method: MethodRun, k: int) -> int:
    """The step of `method` shown at clock step k: k itself, or its last step once the method has finished."""
    return max(0, min(k, last_index(method)))


def last_step(run: RunTrace) -> int:
    """Last step on the shared clock: the longer of the two methods."""
    return max(last_index(run.lookahead), last_index(run.greedy), 0)


def step_at(run: RunTrace, k: int) -> StepTrace | None:
    """The lookahead step shown at clock step k (None before anything was recorded)."""
    steps = run.lookahead.steps
    return steps[clock(run.lookahead, k)] if steps else None


def tokens_upto(method: MethodRun, k: int) -> list[tuple[int, int]]:
    """(step index, token) of every token emitted in steps 0..k."""
    return [(s.index, t) for s in method.steps[: k + 1] for t in s.accepted]


def piece(run: RunTrace, token: int) -> str:
    return run.token_text.get(int(token), f"<{int(token)}>")


def cell_text(run: RunTrace, token: int, limit: int = 10) -> str:
    """A token for a grid cell: visible whitespace, cut to `limit` characters, HTML-escaped."""
    text = piece(run, token).replace(" ", "␣").replace("\n", "↵").replace("\t", "⇥") or "∅"
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return html.escape(text)


def plain_cell(run: RunTrace, token: int, limit: int = 8) -> str:
    """Like `cell_text` but not escaped, for Plotly text (Plotly escapes itself)."""
    text = piece(run, token).replace(" ", "␣").replace("\n", "↵").replace("\t", "⇥") or "∅"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def small_layout(title: str, height: int = 260, **extra) -> dict:
    """Layout of the small charts: tight margins, legend on top."""
    # template="none" with explicit styling: a named template is deep-copied into every figure (~15 ms each).
    axis = dict(gridcolor="#e8edf3", zeroline=False, linecolor="#cbd5e1", automargin=True)
    layout = dict(
        title=dict(text=title, font=dict(size=13), x=0.01, y=0.97),
        height=height, margin=dict(l=48, r=12, t=40, b=38), template="none", paper_bgcolor="white",
        plot_bgcolor="white", font=dict(family="Inter, Arial, sans-serif", size=11, color="#334155"),
        xaxis=dict(axis), yaxis=dict(axis), modebar=dict(orientation="v"),
        legend=dict(orientation="h", y=1.02, x=1, xanchor="right", yanchor="bottom", font=dict(size=11)),
    )
    layout.update(extra)
    return layout


def step_line(k: int) -> dict:
    """The dotted vertical line that marks the current step in the small charts (always `shapes[0]`)."""
    return dict(type="line", xref="x", yref="paper", x0=k, x1=k, y0=0, y1=1, line=dict(color="#dc2626", dash="dot", width=1.5))
