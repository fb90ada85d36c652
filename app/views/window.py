"""View 2, the Jacobi window: the step's L x W grid of guesses with its new level, and the guesses' trajectory.

Window token (level l, column j) sits at position p + 1 + l + j; the model's output at the newest level is the new
level (the Jacobi update), whose token j guesses position p + L + 1 + j. Each level is one step (one Jacobi iteration)
older than the next, and cell (l-1, j+1) holds the previous iteration's guess for the position of cell (l, j); a cell
is marked "changed" where the guess differs from that one, so unmarked cells are guesses that have settled. Cells that
match the final output at their position (a guess that will turn out right) carry a check mark.
The trajectory table puts each step's new level at the positions it guesses, so a student sees guesses settle
before decoding reaches them.
"""

from __future__ import annotations

from lade_core import RunTrace

from .common import cell_text, clock, step_at


def _final_at(run: RunTrace, position: int) -> int | None:
    """The output token at absolute `position` (prompt positions excluded), if the run got that far."""
    i = position - len(run.prompt_ids)
    tokens = run.lookahead.tokens
    return tokens[i] if 0 <= i < len(tokens) else None


def _cell(run: RunTrace, token: int, position: int, changed: bool, extra: str = "") -> str:
    classes = ["cell", extra] + (["changed"] if changed else []) + (["hit"] if _final_at(run, position) == token else [])
    title = f"position {position}"
    return f'<td class="{" ".join(c for c in classes if c)}" title="{title}">{cell_text(run, token)}</td>'


def _changed(rows: list[tuple[int, ...]], l: int, j: int) -> bool:
    """Does cell (l, j) differ from the previous iteration's guess for its position, cell (l-1, j+1)?"""
    return l >= 1 and j + 1 < len(rows[l - 1]) and rows[l - 1][j + 1] != rows[l][j]


def window_html(run: RunTrace, k: int) -> str:
    """The window of the lookahead step at clock step k, oldest level on top, the new level below it."""
    step = step_at(run, k)
    if step is None or not step.levels_before:
        return ('<div class="note">Step 0 is the prompt prefill: one causal forward over the prompt, no window yet. '
                'The window (level 0 drawn from prompt tokens) is used from step 1.</div>')
    L, W, p = len(step.levels_before), step.window, step.position
    rows_all = [*step.levels_before, step.new_level]
    head = "".join(f"<th>col {j}</th>" for j in range(W))
    rows = []
    for l, level in enumerate(step.levels_before):
        label = f"level {l}" + (" (oldest, drops)" if l == 0 and L == step.ngram - 1 else "")
        cells = "".join(
            _cell(run, t, p + 1 + l + j, _changed(rows_all, l, j)) for j, t in enumerate(level))
        rows.append(f"<tr><th>{label}</th>{cells}</tr>")
    new = "".join(_cell(run, t, p + L + 1 + j, _changed(rows_all, L, j), "new") for j, t in enumerate(step.new_level))
    rows.append(f'<tr class="new-row"><th>new level (model output)</th>{new}</tr>')
    status = "warm-up: the window is still gaining levels" if step.kind == "warmup" else (
        f"each column now spells a {step.ngram}-gram (column top to new level) that goes into the pool")
    done = f" Lookahead finished at step {step.index}." if k > step.index else ""
    return (f'<div class="muted">Step {step.index}: x = <code>{cell_text(run, step.input_token)}</code> at position '
            f'p={p}; {status}.{done}</div><table class="grid"><tr><th></th>{head}</tr>{"".join(rows)}</table>'
            '<div class="legend muted"><span class="cell changed">changed</span>: differs from the previous step\'s guess '
            'for the same position (the cell above and to the right) · '
            '<span class="cell hit">✓</span> equals the final output at that position · '
            '<span class="cell new">new level</span></div>')


def _trajectory_cells(run: RunTrace, upto: int, span: int) -> dict[tuple[int, int], tuple[str, str]]:
    """(step, position) -> (css class, title) for the last `span` lookahead steps up to `upto`."""
    cells = {}
    for s in run.lookahead.steps[max(1, upto - span + 1) : upto + 1]:
        if not s.levels_before:
            continue
        L = len(s.levels_before)
        for j, t in enumerate(s.new_level):
            pos = s.position + L + 1 + j
            right = _final_at(run, pos) == t
            cells[(s.index, pos)] = ("right" if right else "wrong", t)
        for i, t in enumerate(s.accepted):
            cells[(s.index, s.position + 1 + i)] = ("acc", t)
    return cells


def trajectory_html(run: RunTrace, k: int, span: int = 12) -> str:
    """Position x step: each step's new level drawn at the positions it guesses (green right, red wrong) and the
    tokens the step accepted (blue); the last `span` steps up to clock step k, newest at the bottom."""
    upto = clock(run.lookahead, k)
    cells = _trajectory_cells(run, upto, span)
    if not cells:
        return '<div class="note">The trajectory starts at step 1, the first step with a window.</div>'
    steps = sorted({y for y, _ in cells})
    positions = range(min(x for _, x in cells), max(x for _, x in cells) + 1)
    offset = len(run.prompt_ids)
    head = "".join(f"<th>{x - offset}</th>" for x in positions)
    rows = []
    for y in steps:
        row = []
        for x in positions:
            kind, token = cells.get((y, x), ("", None))
            text = cell_text(run, token, 6) if token is not None else ""
            row.append(f'<td class="{kind}">{text}</td>')
        rows.append(f'<tr><th>step {y}</th>{"".join(row)}</tr>')
    return ('<div class="muted">Trajectory: the new level of each step, placed at the output positions it guesses '
            '(columns), step by step (rows). <span class="chip right">right guess</span><span class="chip wrong">wrong '
            'guess</span><span class="chip acc">accepted this step</span></div>'
            f'<div class="traj-wrap"><table class="traj"><tr><th>position</th>{head}</tr>{"".join(rows)}</table></div>')
