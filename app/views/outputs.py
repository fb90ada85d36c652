"""View 1, side by side: the autoregressive and the lookahead output on one step clock, the counter, the chart.

At clock step k greedy decoding has run steps 0..k (k+1 tokens, the prefill included); lookahead has run the same
number of forward passes and usually emitted more. Lookahead tokens are coloured by the step that accepted them,
two hues alternating; tokens of steps that accepted several at once are bold and underlined.
"""

from __future__ import annotations

import html

import plotly.graph_objects as go

from lade_core import MethodRun, RunTrace

from .common import AR_COLOR, LA_COLOR, STEP_HUES, clock, last_step, small_layout, step_line, tokens_upto


def _spans(run: RunTrace, method: MethodRun, k: int, by_step: bool) -> str:
    """One <span> per token emitted up to clock step k; the current step's tokens carry the class `cur`."""
    upto = clock(method, k)
    sizes = {s.index: len(s.accepted) for s in method.steps}
    out = []
    for index, token in tokens_upto(method, upto):
        classes = ["tok"]
        if by_step:
            classes.append("multi" if sizes[index] > 1 else "single")
        if index == upto and k <= upto:
            classes.append("cur")
        hue = STEP_HUES[index % 2] if by_step else "transparent"
        title = f"step {index}: {sizes[index]} token{'s' if sizes[index] > 1 else ''}"
        text = html.escape(run.token_text.get(token, f"<{token}>"))
        out.append(f'<span class="{" ".join(classes)}" style="background:{hue}" title="{title}">{text}</span>')
    return "".join(out)


def _panel(title: str, status: str, body: str) -> str:
    return (f'<div class="tok-panel"><div class="tok-head"><b>{title}</b> <span class="muted">{status}</span></div>'
            f'<div class="tok-text">{body}</div></div>')


def _status(method: MethodRun, k: int) -> str:
    if not method.steps:
        return "(not started yet)"
    if k >= len(method.steps) - 1:
        return f"finished at step {len(method.steps) - 1} ({method.stop_reason})"
    return f"at step {k}"


def _ar_title(run: RunTrace) -> str:
    s = run.sampling
    return "Autoregressive (greedy)" if s.greedy else f"Autoregressive (sampling, T={s.temperature:g})"


def ar_output_html(run: RunTrace, k: int) -> str:
    """The autoregressive output after clock step k (greedy, or plain sampling in a sampled run): a token a step."""
    return _panel(_ar_title(run), _status(run.greedy, k), _spans(run, run.greedy, k, by_step=False))


def la_output_html(run: RunTrace, k: int) -> str:
    """The lookahead output after clock step k, coloured by accepting step."""
    legend = ('<div class="legend muted">colour = step that accepted the token; '
              '<span class="tok multi">bold underlined</span> = several tokens in one step</div>')
    return _panel("Lookahead", _status(run.lookahead, k), _spans(run, run.lookahead, k, by_step=True)) + legend


def method_numbers(method: MethodRun, k: int) -> dict:
    """Steps, tokens, measured seconds and rates of `method` after clock step k (prefill included)."""
    if not method.steps:
        return dict(steps=0, tokens=0, seconds=0.0, per_step=0.0, per_second=0.0)
    upto = method.steps[: clock(method, k) + 1]
    tokens = sum(len(s.accepted) for s in upto)
    seconds = sum(s.forward_s + s.overhead_s for s in upto)
    return dict(steps=len(upto), tokens=tokens, seconds=seconds, per_step=tokens / len(upto),
                per_second=tokens / seconds if seconds > 0 else 0.0)


def counter_text(run: RunTrace, k: int) -> str:
    """'Lookahead: steps=.. tokens=.. ... | Greedy: steps=.. tokens=.. ...' at clock step k ('Sampling' instead of
    'Greedy' for a sampled run: the plain method samples too)."""
    parts = []
    for name, method in (("Lookahead", run.lookahead), ("Greedy" if run.sampling.greedy else "Sampling", run.greedy)):
        n = method_numbers(method, k)
        parts.append(f"{name}: steps={n['steps']} tokens={n['tokens']} tokens/step={n['per_step']:.2f} "
                     f"time={n['seconds']:.2f}s ({n['per_second']:.1f} tok/s)")
    return " | ".join(parts)


def counter_html(run: RunTrace, k: int) -> str:
    rows = "".join(f'<div class="count-row">{html.escape(part)}</div>' for part in counter_text(run, k).split(" | "))
    return f'<div class="counter"><div class="muted">step {k} of {last_step(run)} (step 0 = prompt prefill)</div>{rows}</div>'


def _cumulative(method: MethodRun) -> list[int]:
    total, out = 0, []
    for s in method.steps:
        total += len(s.accepted)
        out.append(total)
    return out


def progress_figure(run: RunTrace, k: int) -> go.Figure:
    """Tokens emitted vs step for both methods; the current step is the vertical line `shapes[0]` (playback moves
    it in the browser instead of re-sending the figure)."""
    fig = go.Figure()
    plain = "greedy" if run.sampling.greedy else "sampling"
    for name, method, color in (("lookahead", run.lookahead, LA_COLOR), (plain, run.greedy, AR_COLOR)):
        ys = _cumulative(method)
        fig.add_trace(go.Scatter(x=list(range(len(ys))), y=ys, name=name, mode="lines+markers", marker=dict(size=3),
                                 line=dict(color=color, width=2), hovertemplate=f"{name}: %{{y}} tokens at step %{{x}}<extra></extra>"))
    fig.update_layout(shapes=[step_line(k)])
    fig.update_layout(**small_layout("Tokens emitted vs step", height=240), xaxis_title="step", yaxis_title="tokens")
    return fig
