"""View 7, where the speed comes from: the device's cost curve and the compression sweep (the paper's scaling figure).

Both are measurements saved by the CLI (`python -m lade_core costcurve`, `python -m lade_core sweep`) and shipped in
assets/, so they show at once. The cost curve is forward latency against tokens per forward, drawn as a multiple of
a greedy step; the current run's average step is marked on it. The sweep is compression against log2 of the tokens
a step may feed, one line per N, like Figure 5 of the paper; with a prompt-seeded sweep beside it, dashed lines show
what seeding the pool with the prompt's n-grams adds.
"""

from __future__ import annotations

import json
from pathlib import Path

import plotly.graph_objects as go

from lade_core import RunTrace

from .common import AR_COLOR, LA_COLOR, small_layout

ASSETS = Path(__file__).resolve().parents[2] / "assets"
TWO_LINE_TITLE = dict(l=48, r=12, t=84, b=38)  # room for a two-line title above the legend
N_COLORS = {2: "#94a3b8", 3: "#60a5fa", 4: "#2563eb", 5: "#7c3aed", 6: "#db2777", 7: "#ea580c", 8: "#16a34a"}


def load_measurement(name: str) -> dict | None:
    """A shipped measurement (e.g. 'costcurve-cpu', 'sweep'), or None if it was never recorded."""
    path = ASSETS / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def cost_curve_figure(curve: dict | None, run: RunTrace | None = None) -> go.Figure:
    """Forward time as a multiple of a greedy step, against tokens per forward; the run's mean step marked."""
    fig = go.Figure()
    if not curve:
        return fig.update_layout(**small_layout("No cost curve recorded: run python -m lade_core costcurve"))
    base = curve["greedy_s"]
    xs = [p["tokens"] for p in curve["points"]]
    fig.add_scatter(x=xs, y=[p["seconds"] / base for p in curve["points"]], mode="lines+markers", name="one forward",
                    line=dict(color=LA_COLOR), hovertemplate="%{x} tokens: %{y:.2f}x a greedy step<extra></extra>")
    fig.add_scatter(x=[xs[0], xs[-1]], y=[1, 1], mode="lines", name="greedy step (1 token)",
                    line=dict(color=AR_COLOR, dash="dash"), hoverinfo="skip")
    if run is not None:
        steps = [s for s in run.lookahead.steps if s.kind != "prefill"]
        greedy = [s for s in run.greedy.steps if s.kind != "prefill"]
        if steps and greedy:
            fed = sum(s.n_input for s in steps) / len(steps)
            ratio = (sum(s.forward_s for s in steps) / len(steps)) / (sum(s.forward_s for s in greedy) / len(greedy))
            fig.add_scatter(x=[fed], y=[ratio], mode="markers", name="this run's mean step",
                            marker=dict(size=11, color="#dc2626", symbol="diamond"),
                            hovertemplate="%{x:.0f} tokens fed on average: %{y:.2f}x a greedy step<extra></extra>")
    kernels = f", {curve['kernels']} kernels" if curve.get("kernels") else ""
    title = f"Cost of one forward pass on {curve['device']}<br>{curve['model']}, {curve['dtype']}{kernels}"
    return fig.update_layout(**small_layout(title, height=320, margin=TWO_LINE_TITLE,
                                            xaxis=dict(title="tokens per forward", type="log"),
                                            yaxis=dict(title="x greedy step", rangemode="tozero")))


def sweep_figure(sweep: dict | None, seeded: dict | None = None) -> go.Figure:
    """Compression against log2(tokens per step), one line per N, with G = W; `seeded` (the same sweep with
    prompt-seeded pools) adds one dashed line per N."""
    fig = go.Figure()
    if not sweep:
        return fig.update_layout(**small_layout("No sweep recorded: run python -m lade_core sweep"))
    for data, dash, suffix in ((sweep, "solid", ""), (seeded, "dash", ", seeded pool")):
        for n in sorted({p["ngram"] for p in data["points"]} if data else ()):
            pts = sorted((p for p in data["points"] if p["ngram"] == n), key=lambda p: p["window"])
            fig.add_scatter(x=[p["log2_tokens_per_step"] for p in pts], y=[p["compression"] for p in pts],
                            mode="lines+markers", name=f"N={n}{suffix}", legendgroup=f"N={n}", showlegend=not suffix,
                            line=dict(color=N_COLORS.get(n, "#334155"), dash=dash),
                            text=[f"W=G={p['window']}" for p in pts],
                            hovertemplate=f"N={n}{suffix}, %{{text}}: compression %{{y:.2f}}<extra></extra>")
    seeded_note = "; dashed: prompt-seeded pool" if seeded else ""
    widest = f" (seeded: W ≤ {max(p['window'] for p in seeded['points'])})" if seeded else ""
    title = (f"Compression over W and N (G = W){seeded_note}<br>{sweep['model']}, {len(sweep['prompts'])} prompts, "
             f"{sweep['max_new_tokens']} tokens{widest}")
    return fig.update_layout(**small_layout(title, height=320, margin=TWO_LINE_TITLE,
                                            xaxis=dict(title="log2(tokens per step)"),
                                            yaxis=dict(title="tokens per step")))
