"""View 4, the verification branch: the step's candidates checked against the model's own predictions.

Candidate c = (c_0 .. c_{N-2}) came from the pool under x. Token c_i is accepted if every token before it was and it
equals the model's prediction at the token before it (at x for c_0). The winner is the candidate with the longest
accepted prefix; the step emits that prefix plus the model's prediction after it, the bonus token.

A sampled step (`step.draws` non-empty, lade_core/verify.py `verify_sampled`) is shown as its draws instead: each
offered draft token with its probability p under the (residual) target, the uniform draw u and the verdict u < p,
then the token drawn from what is left. The model's argmax row is left out there: sampling does not compare with it.
"""

from __future__ import annotations

import html

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
    last = "the drawn token" if step.draws else "the bonus token"
    parts = []
    for i, t in enumerate(step.accepted):
        bonus = i == matched
        title = ("drawn by the model after the accepted drafts" if step.draws else "bonus token: the model's own next "
                 "token") if bonus else "from the winning candidate"
        parts.append(f'<span class="chip {"bonus" if bonus else "added"}" title="{title}">{cell_text(run, t, 14)}</span>')
    return (f'<div class="accepted">Accepted this step: {"".join(parts)} <span class="muted">({len(step.accepted)} '
            f'token{"s" if len(step.accepted) != 1 else ""}: {matched} from the winning candidate + {last})'
            f'</span></div>')


SAMPLING_RULE = ("Rule: accept a draft token with probability p; after a rejection the token is removed and the rest "
                 "renormalised; if no offer survives, draw from what is left: the output distribution is exactly the "
                 "model's.")


def percent(p: float) -> str:
    """A probability as shown in the draws table."""
    return "<0.01%" if 0 < p < 0.00005 else f"{100 * p:.2f}%"


def _draw_verdict(step: StepTrace, c: int, i: int) -> tuple[str, str]:
    """Colour and title of token i of candidate c in a sampled step."""
    for d in step.draws:
        if (d.candidate, d.position) == (c, i):
            return (MATCH, "accepted (u &lt; p)") if d.accepted else (MISS, "rejected (u ≥ p)")
    if i < step.match_lengths[c]:
        return MATCH, "accepted (the same token as the accepted offer)"
    return UNCHECKED, "not offered"


def _draws_table(run: RunTrace, step: StepTrace) -> str:
    rows = []
    for n, d in enumerate(step.draws, 1):
        verdict = "accepted" if d.accepted else "rejected"
        rows.append(f'<tr class="draw {verdict}"><td>{n}</td><td>c{d.candidate + 1}</td><td>{d.position}</td>'
                    f'<td class="token">{cell_text(run, d.token, 14)}</td>'
                    f'<td class="p">{html.escape(percent(d.prob))}</td>'
                    f'<td class="u">{d.uniform:.3f}</td><td style="background:{MATCH if d.accepted else MISS}">'
                    f'{"u &lt; p: accepted" if d.accepted else "u ≥ p: rejected"}</td>'
                    f'<td>{html.escape(percent(d.residual_mass))}</td></tr>')
    head = ("<tr><th>offer</th><th>candidate</th><th>position</th><th>token</th><th>p</th><th>u</th><th>verdict</th>"
            "<th>mass left before</th></tr>")
    return f'<table class="verify draws">{head}{"".join(rows)}</table>'


def _final_draw(run: RunTrace, step: StepTrace) -> str:
    last = step.draws[-1]
    where = ("from the target distribution after the fully accepted candidate" if last.accepted else
             f"from the residual at position {last.position} (the target without the rejected tokens, renormalised)")
    token = f'<span class="chip bonus">{cell_text(run, step.accepted[-1], 14)}</span>'
    return f'<div class="final-draw">Then drawn {where}: {token}</div>'


def _sampled_html(run: RunTrace, step: StepTrace) -> str:
    """Candidates coloured by their draws, the draws table, the final draw and the rule."""
    rows = []
    for c, cand in enumerate(step.candidates):
        cells = "".join(f'<td style="background:{_draw_verdict(step, c, i)[0]}" title="{_draw_verdict(step, c, i)[1]}">'
                        f'{cell_text(run, t)}</td>' for i, t in enumerate(cand))
        rows.append(f'<tr class="{"winner" if c == step.winner else ""}"><th>{"★ " if c == step.winner else ""}'
                    f'candidate {c + 1} <span class="muted">(c{c + 1})</span></th>{cells}</tr>')
    cols = "".join(f"<th>c<sub>{i}</sub></th>" for i in range(step.ngram - 1))
    s = run.sampling
    intro = (f'<div class="muted">Sampling at temperature {s.temperature:g}, top-p {s.top_p:g}, seed {s.seed}: '
             f'{len(step.draws)} offer{"s" if len(step.draws) != 1 else ""} verified.</div>')
    return (intro + f'<table class="verify"><tr><th></th>{cols}</tr>{"".join(rows)}</table>' + _draws_table(run, step)
            + _final_draw(run, step) + f'<div class="muted rule">{SAMPLING_RULE}</div>' + _accepted_line(run, step))


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
    if step.draws:
        return head + _sampled_html(run, step)
    cols = "".join(f"<th>c<sub>{i}</sub></th>" for i in range(step.ngram - 1)) + "<th>after</th>"
    rows = "".join(_candidate_rows(run, step, c) for c in range(len(step.candidates)))
    winner = (f"candidate {step.winner + 1} wins with {step.n_accepted_from_candidate} matched token(s)"
              if step.winner >= 0 else "no candidate matched: the step emits the model's next token only")
    return (head + f'<table class="verify"><tr><th></th><th></th>{cols}</tr>{rows}</table>'
            f'<div class="muted">{winner}.</div>' + _accepted_line(run, step))
