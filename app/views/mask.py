"""View 5, the attention mask of one step: `step.layout.mask()`, the very matrix the model used, as a heatmap.

Rows are queries and columns keys among the step's new tokens: x, the window levels, then each candidate. A visible
cell is coloured by the branch of its key; the hover says why the cell is visible or not (`layout.reason`). Every
token also sees the KV cache (the committed text), which is not drawn. The figure depends on the step's layout only
(levels, W, candidates, N-1), so playback re-sends it only when the layout changes.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import plotly.graph_objects as go

from lade_core import RunTrace
from lade_core.layout import StepLayout

from .common import small_layout, step_at

# Hover text per cell costs q*q strings; past this size the hover shows the labels only.
MAX_REASON_CELLS = 150 * 150
HIDDEN, SEES_X, SEES_WINDOW, SEES_CAND = 0, 1, 2, 3
COLORS = [[0, "#f8fafc"], [0.25, "#f8fafc"], [0.25, "#1e293b"], [0.5, "#1e293b"], [0.5, "#2563eb"], [0.75, "#2563eb"],
          [0.75, "#f59e0b"], [1, "#f59e0b"]]


@lru_cache(maxsize=64)
def _grid(layout: StepLayout) -> tuple[np.ndarray, tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """z (q, q) coloured by key branch, the labels, and the per-cell reasons (empty when too many cells)."""
    mask = layout.mask()
    q = layout.size
    branch = np.full(q, SEES_WINDOW)
    branch[0] = SEES_X
    branch[layout.cand_start :] = SEES_CAND
    z = np.where(mask, branch[None, :], HIDDEN)
    reasons = ()
    if q * q <= MAX_REASON_CELLS:
        reasons = tuple(tuple(layout.reason(i, j) for j in range(q)) for i in range(q))
    return z, tuple(layout.labels()), reasons


def mask_figure(run: RunTrace, k: int) -> go.Figure:
    """Heatmap of the boolean attention mask of the lookahead step at clock step k (q = 1 + L*W + g*(N-1))."""
    step = step_at(run, k)
    fig = go.Figure()
    if step is None or step.kind == "prefill":
        fig.add_annotation(text="Step 0 is the prompt prefill: an ordinary causal mask over the prompt.",
                           showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
        fig.update_layout(**small_layout("Attention mask", height=200))
        return fig
    return layout_figure(step.layout)


def layout_figure(layout: StepLayout) -> go.Figure:
    """The mask figure depends on the layout only (not on the tokens), so two steps with one layout share it."""
    z, labels, reasons = _grid(layout)
    hover = [list(row) for row in reasons] if reasons else None
    fig = go.Figure(go.Heatmap(z=z, x=list(labels), y=list(labels), text=hover, hoverinfo="text" if hover else "x+y",
                               zmin=0, zmax=3, colorscale=COLORS, showscale=False, xgap=1, ygap=1))
    q = layout.size
    side = min(760, max(360, 14 * q + 120))
    fig.update_layout(**small_layout(f"Attention mask: {q} x {q} = x, {layout.levels} window level(s) of "
                                     f"W={layout.window}, {layout.candidates} candidate(s) of {layout.cand_len} "
                                     f"(dark: sees x, blue: window, orange: candidate)", height=side))
    fig.update_xaxes(side="top", tickangle=-90, tickfont=dict(size=9), type="category")
    fig.update_yaxes(autorange="reversed", tickfont=dict(size=9), type="category")
    fig.update_layout(margin=dict(l=60, r=12, t=90, b=10))
    return fig
