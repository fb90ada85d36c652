"""View 2, the Jacobi window: the step's L x W grid of guesses with its new level, and the guesses' trajectory.

Window token (level l, column j) sits at position p + 1 + l + j; the model's output at the newest level is the new
level (the Jacobi update), whose token j guesses position p + L + 1 + j. Grid cells that changed since the previous
step are marked, and so are cells that match the final output at their position (a guess that will turn out right).
The trajectory chart puts each step's new level at the positions it guesses, so a student sees guesses settle
before decoding reaches them.
"""

from __future__ import annotations

import plotly.graph_objects as go

from lade_core import RunTrace, StepTrace

from .common import cell_text, clock, plain_cell, small_layout, step_at


def _final_at(run: RunTrace, position: int) -> int | None:
    """The output token at absolute `position` (prompt positions excluded), if the run got that far."""
    i = position - len(run.prompt_ids)
    tokens = run.lookahead.tokens
    return tokens[i] if 0 <= i < len(tokens) else None


def _cell(run: RunTrace, token: int, position: int, changed: bool, extra: str = "") -> str:
    classes = ["cell", extra] + (["changed"] if changed else []) + (["hit"] if _final_at(run, position) == token else [])
    title = f"position {position}"
    return f'<td class="{" ".join(c for c in classes if c)}" title="{title}">{cell_text(run, token)}</td>'


def _previous(run: RunTrace, step: StepTrace) -> tuple:
    prev = run.lookahead.steps[step.index - 1] if step.index > 0 else None
    return prev.levels_before if prev is not None else ()


def window_html(run: RunTrace, k: int) -> str:
    """The window of the lookahead step at clock step k, oldest level on top, the new level below it."""
    step = step_at(run, k)
    if step is None or not step.levels_before:
        return ('<div class="note">Step 0 is the prompt prefill: one causal forward over the prompt, no window yet. '
                'The window (level 0 drawn from prompt tokens) is used from step 1.</div>')
    L, W, p = len(step.levels_before), step.window, step.position
    prev = _previous(run, step)
    head = "".join(f"<th>col {j}</th>" for j in range(W))
    rows = []
    for l, level in enumerate(step.levels_before):
        label = f"level {l}" + (" (oldest, drops)" if l == 0 and L == step.ngram - 1 else "")
        cells = "".join(
            _cell(run, t, p + 1 + l + j, bool(prev) and l < len(prev) and prev[l][j] != t) for j, t in enumerate(level))
        rows.append(f"<tr><th>{label}</th>{cells}</tr>")
    new = "".join(_cell(run, t, p + L + 1 + j, False, "new") for j, t in enumerate(step.new_level))
    rows.append(f'<tr class="new-row"><th>new level (model output)</th>{new}</tr>')
    status = "warm-up: the window is still gaining levels" if step.kind == "warmup" else (
        f"each column now spells an {step.ngram}-gram (column top to new level) that goes into the pool")
    done = f" Lookahead finished at step {step.index}." if k > step.index else ""
    return (f'<div class="muted">Step {step.index}: x = <code>{cell_text(run, step.input_token)}</code> at position '
            f'p={p}; {status}.{done}</div><table class="grid"><tr><th></th>{head}</tr>{"".join(rows)}</table>'
            '<div class="legend muted"><span class="cell changed">changed</span> since the previous step · '
            '<span class="cell hit">✓</span> equals the final output at that position · '
            '<span class="cell new">new level</span></div>')


def trajectory_figure(run: RunTrace, k: int, span: int = 14) -> go.Figure:
    """Position x step: each step's new level drawn at the positions it guesses, green where the guess is right,
    blue where the step accepted tokens; the last `span` steps up to k."""
    upto = clock(run.lookahead, k)
    steps = [s for s in run.lookahead.steps[max(1, upto - span + 1) : upto + 1] if s.levels_before]
    cells: dict[tuple[int, int], tuple[int, str, str]] = {}
    for s in steps:
        L = len(s.levels_before)
        for j, t in enumerate(s.new_level):
            pos = s.position + L + 1 + j
            right = _final_at(run, pos) == t
            cells[(s.index, pos)] = (1 if right else 0, plain_cell(run, t), "right guess" if right else "wrong guess")
        for i, t in enumerate(s.accepted):
            cells[(s.index, s.position + 1 + i)] = (2, plain_cell(run, t), "accepted this step")
    fig = go.Figure()
    if cells:
        ys = sorted({y for y, _ in cells})
        xs = list(range(min(x for _, x in cells), max(x for _, x in cells) + 1))
        z = [[cells.get((y, x), (None,))[0] for x in xs] for y in ys]
        text = [[cells.get((y, x), (None, ""))[1] for x in xs] for y in ys]
        hover = [[cells.get((y, x), (None, "", ""))[2] for x in xs] for y in ys]
        offset = len(run.prompt_ids)
        fig.add_trace(go.Heatmap(
            x=[x - offset for x in xs], y=ys, z=z, text=text, customdata=hover, texttemplate="%{text}",
            textfont=dict(size=9), zmin=0, zmax=2, showscale=False, xgap=1, ygap=1,
            colorscale=[[0, "#fecaca"], [0.33, "#fecaca"], [0.34, "#bbf7d0"], [0.66, "#bbf7d0"], [0.67, "#93c5fd"], [1, "#93c5fd"]],
            hovertemplate="step %{y}, output token %{x}: %{text} (%{customdata})<extra></extra>"))
    fig.update_layout(**small_layout("Trajectory: new level guesses by position (green = right, red = wrong, "
                                     "blue = accepted)", height=300),
                      xaxis_title="output position (token index)", yaxis_title="step")
    fig.update_yaxes(autorange="reversed", dtick=1)
    return fig
