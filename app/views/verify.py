"""View 4, the verification branch: the step's candidates checked against the model's own predictions.

Candidate c = (c_0 .. c_{N-2}) came from the pool under x. Token c_i is accepted if every token before it was and it
equals the model's prediction at the token before it (at x for c_0). The winner is the candidate with the longest
accepted prefix; the step emits that prefix plus the model's prediction after it, the bonus token.
"""

from __future__ import annotations

from lade_core import RunTrace, StepTrace

from .common import BONUS, MATCH, MISS, UNCHECKED, cell_text, step_at


def _verdict(i: int, matched: int) -> tuple[str, str]:
    if i < matched:
        return MATCH, "matched"
    return (MISS, "mismatch") if i == matched else (UNCHECKED, "not checked (an earlier token missed)")


def _candidate_rows(run: RunTrace, step: StepTrace, c: int) -> str:
    cand, pred, m = step.candidates[c], step.predictions[c], step.match_lengths[c]
    won = c == step.winner
    cells = "".join(
        f'<td style="background:{_verdict(i, m)[0]}" title="{_verdict(i, m)[1]}">{cell_text(run, t)}</td>'
        for i, t in enumerate(cand))
    preds = "".join(
        f'<td class="pred{" bonus" if won and i == m else ""}"'
        f'{f" style=background:{BONUS}" if won and i == m else ""}>{cell_text(run, t)}</td>' for i, t in enumerate(pred))
    name = f"{'★ ' if won else ''}candidate {c + 1}"
    return (f'<tr class="{"winner" if won else ""}"><th rowspan="2">{name}<br><span class="muted">{m} of '
            f'{len(cand)} matched</span></th><td class="muted">guess</td>{cells}<td></td></tr>'
            f'<tr class="{"winner" if won else ""}"><td class="muted">model says</td>{preds}</tr>')


def _accepted_line(run: RunTrace, step: StepTrace) -> str:
    matched = step.n_accepted_from_candidate
    parts = []
    for i, t in enumerate(step.accepted):
        bonus = i == matched
        title = "bonus token: the model's own next token" if bonus else "from the winning candidate"
        parts.append(f'<span class="chip {"bonus" if bonus else "added"}" title="{title}">{cell_text(run, t, 14)}</span>')
    return (f'<div class="accepted">Accepted this step: {"".join(parts)} <span class="muted">({len(step.accepted)} '
            f'token{"s" if len(step.accepted) != 1 else ""}: {matched} from the winning candidate + the bonus token)'
            f'</span></div>')


def verify_html(run: RunTrace, k: int) -> str:
    """Candidates of the lookahead step at clock step k, each token marked matched / mismatch / not checked."""
    step = step_at(run, k)
    if step is None:
        return '<div class="note">No lookahead step recorded yet.</div>'
    if step.kind == "prefill":
        return (f'<div class="note">Step 0 is the prompt prefill: its only output is the first new token '
                f'<code>{cell_text(run, step.accepted[0]) if step.accepted else ""}</code>.</div>')
    head = (f'<div class="muted">Step {step.index}: x = <code>{cell_text(run, step.input_token)}</code>; '
            f'{len(step.candidates)} candidate{"s" if len(step.candidates) != 1 else ""} from the pool (G={run.config.guess}).'
            f'{" Lookahead finished at step %d." % step.index if k > step.index else ""}</div>')
    if not step.candidates:
        why = "the pool has no n-gram starting with x" if step.kind == "lookahead" else "the pool is still empty (warm-up)"
        return head + f'<div class="note">No candidates: {why}, so the step emits only the model\'s next token.</div>' + \
            _accepted_line(run, step)
    cols = "".join(f"<th>c<sub>{i}</sub></th>" for i in range(step.ngram - 1)) + "<th>after</th>"
    rows = "".join(_candidate_rows(run, step, c) for c in range(len(step.candidates)))
    winner = (f"candidate {step.winner + 1} wins with {step.n_accepted_from_candidate} matched token(s)"
              if step.winner >= 0 else "no candidate matched: the step emits the model's next token only")
    return (head + f'<table class="verify"><tr><th></th><th></th>{cols}</tr>{rows}</table>'
            f'<div class="muted">{winner}.</div>' + _accepted_line(run, step))
