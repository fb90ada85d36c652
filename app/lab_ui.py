"""The speed lab tab: this CPU's measured cost curve, a roofline model of a GPU's, what they predict for the run on
screen, the paper's measurements beside the model's predictions, and Lookahead Parallelism simulated.

Figures are Plotly (drawn in the browser by Gradio's plot component) from `lade_core.measure.lab`; every GPU number is
labelled a model's prediction or a simulation, with its assumptions beside it, and every prediction has a range.
`lesson_data()` is the part of it the lesson's chapter 7 shows.
"""

from __future__ import annotations

import json
import math

import gradio as gr
import plotly.graph_objects as go

from lade_core.measure import autoconfig, lab
from lade_core.measure.costcurve import curve_path, load_curve_file
from lade_core.paths import BENCH

from .stage import Held

DEVICES = ("a100-80gb", "h100", "h200")
SIZES = ("135M", "360M", "1.7B", "7B", "13B", "34B", "70B")
CURVE_SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
LAYOUT = dict(template="none", height=330, margin=dict(l=56, r=16, t=56, b=46), paper_bgcolor="white",
              plot_bgcolor="white", font=dict(family="system-ui, Arial, sans-serif", size=12, color="#334155"),
              legend=dict(orientation="h", y=1.02, x=0, yanchor="bottom"))
AXIS = dict(gridcolor="#eef2f7", zeroline=False, linecolor="#cbd5e1")


def cpu_curve() -> list[list[float]]:
    """This CPU's measured curve, [tokens, cost relative to one token] (empty if none was saved)."""
    curve = load_curve_file(curve_path("cpu"))
    if not curve:
        return []
    return [[p["tokens"], p["seconds"] / curve["greedy_s"]] for p in curve["points"]]


def lesson_data(device: str = "h100", size: str = "7B") -> dict:
    """What chapter 7 of the lesson draws: the CPU's measured curve, one GPU's modelled curve, and the median
    speed-ups the bench measured on this CPU at W=7 and W=15 (assets/bench/bench-7-4-7.json, bench-15-5-15.json)."""
    gpu = [[p["tokens"], p["relative"]] for p in lab.cost_curve(device, size, CURVE_SIZES)]
    data = {"cpu": cpu_curve(), "gpu": {"device": device, "model": size, "points": gpu}}
    narrow, wide = BENCH / "bench-7-4-7.json", BENCH / "bench-15-5-15.json"
    if narrow.exists() and wide.exists():
        median = lambda path: json.loads(path.read_text())["summary"]["speedup_median"]  # noqa: E731
        data["cpu_choice"] = {"narrow": median(narrow), "wide": median(wide)}
    return data


def cost_figure(device: str, size: str, run_result: dict | None) -> go.Figure:
    """Forward cost against tokens fed: this CPU (measured) and the chosen GPU and model (roofline model)."""
    fig = go.Figure()
    cpu = cpu_curve()
    if cpu:
        fig.add_scatter(x=[p[0] for p in cpu], y=[p[1] for p in cpu], name="this CPU, SmolLM2-135M (measured)",
                        mode="lines+markers", line=dict(color="#64748b"))
    gpu = lab.cost_curve(device, size, CURVE_SIZES)
    fig.add_scatter(x=[p["tokens"] for p in gpu], y=[p["relative"] for p in gpu], mode="lines+markers",
                    name=f"{device}, {size} (model)", line=dict(color="#2563eb", dash="dash"),
                    customdata=[p["bound"] for p in gpu], hovertemplate="%{x} tokens: %{y:.2f}x (%{customdata}-bound)"
                    "<extra></extra>")
    if run_result:
        fig.add_scatter(x=[run_result["tokens_fed"]], y=[run_result["step_cost"]], mode="markers+text",
                        name="the run on screen", marker=dict(size=12, color="#b91c1c", symbol="diamond"),
                        text=["run on screen"], textposition="top right")
    fig.update_layout(**LAYOUT, title=dict(text="Cost of one forward pass, relative to a one-token forward", x=0.01))
    ticks = [2**i for i in range(0, 10)]
    fig.update_xaxes(**AXIS, type="log", title="tokens fed in one forward pass", tickvals=ticks,
                     ticktext=[str(t) for t in ticks])
    fig.update_yaxes(**AXIS, title="× a one-token forward", rangemode="tozero")
    return fig


def scaling_figure(device: str, size: str) -> tuple[go.Figure, str]:
    """Lookahead Parallelism, simulated from the sweeps' measured compression: speed-up against devices."""
    points = autoconfig.load_sweeps()
    fig = go.Figure()
    if not points:
        return fig.update_layout(**LAYOUT, title="No sweep saved: run python -m lade_core sweep"), ""
    sim = lab.simulate_parallelism(points, device, size)
    rows = sim["curve"]
    xs = [r["devices"] for r in rows]
    fig.add_scatter(x=xs, y=[r["predicted_speedup"] for r in rows], mode="lines+markers", name="simulated speed-up",
                    line=dict(color="#2563eb"), error_y=dict(type="data", symmetric=False,
                    array=[r["predicted_speedup_range"][1] - r["predicted_speedup"] for r in rows],
                    arrayminus=[r["predicted_speedup"] - r["predicted_speedup_range"][0] for r in rows]),
                    text=[f"W={r['window']} N={r['ngram']} G={r['guess']}, compression {r['compression']:.2f}"
                          for r in rows],
                    hovertemplate="%{x} devices: %{y:.2f}x (%{text})<extra></extra>")
    fig.add_scatter(x=[1, max(xs)], y=[1, 1], mode="lines", name="greedy on one device", line=dict(color="#94a3b8",
                    dash="dot"), hoverinfo="skip")
    fig.update_layout(**LAYOUT, title=dict(text=f"Lookahead Parallelism on {device}, {size}: a simulation", x=0.01))
    fig.update_xaxes(**AXIS, title="devices (each with a whole model copy)", dtick=1)
    fig.update_yaxes(**AXIS, title="speed-up over greedy on one device", rangemode="tozero")
    top = rows[-1]
    needed = 4 * top["step_cost"]
    best = max(p["compression"] for p in points)
    text = (f"**A simulation, not a measurement.** On {top['devices']} devices the best swept setting "
            f"(W={top['window']},"
            f" N={top['ngram']}, G={top['guess']}) costs {top['step_cost']:.2f}x a one-token step per device, so it "
            f"would run at {top['predicted_speedup']:.2f}x. Where the 4x comes from: at that cost a 4x speed-up needs "
            f"about {needed:.1f} tokens per step. The engine measured at most {best:.2f} on this project's prompts "
            f"with this 135M model (the sweeps, 64 new tokens each); the paper's 4x is on code completion with 7B "
            f"to 34B code models, at compression this small model does not reach on these prompts. Each device "
            f"carries its share "
            f"of the window and candidates and the devices exchange tokens once a step ({top['comm_s'] * 1e6:.0f} us "
            f"assumed).")
    return fig, text


def prediction_text(result: dict) -> str:
    """The prediction in plain sentences (`lab.describe`), headed by what kind of number it is."""
    kind = "A simulation" if result["kind"] == "simulation" else "A model's prediction"
    return f"**{kind}, not a measurement.** " + lab.describe(result).replace("\n", " ")


def paper_table() -> str:
    rows = lab.paper_comparison(points=autoconfig.load_sweeps())
    lines = ["| model | dataset | device | W/N/G | paper measured | model predicts | paper / model |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        pred = r.get("predicted_speedup")
        wng = "/".join(str(r.get(k, "?")) for k in ("window", "ngram", "guess"))
        predicted = f"{pred:.2f}x" if pred else "–"
        gap = f"{r['gap']:.2f}" if pred else "–"
        lines.append(f"| {r.get('model', '')} {r.get('model_size', '')} | {r.get('dataset', '')} | "
                     f"{r.get('device', '')} | "
                     f"{wng} | {r['speedup']:.2f}x | {predicted} | {gap} |")
    return "\n".join(lines)


def update(device: str, size: str, devices: int, held: Held):
    """Every figure and sentence of the lab for these choices and the run the page holds."""
    result = None
    try:
        run = held.run()
        result = lab.predict_run(run, device, size, int(devices))
    except (ValueError, KeyError) as exc:
        return cost_figure(device, size, None), f"No prediction: {exc}", *scaling_figure(device, size)
    single = lab.predict_run(run, device, size, 1)
    fig = cost_figure(device, size, single if math.isfinite(single["step_cost"]) else None)
    return fig, prediction_text(result), *scaling_figure(device, size)


def build(held_state) -> dict:
    """The lab's components (a column shown in the page's speed-lab mode); its parts by name."""
    c = {}
    with gr.Column(elem_id="lab", elem_classes=["lade-lab-only"]) as c["column"]:
        with gr.Row():
            c["device"] = gr.Dropdown(DEVICES, value="h100", label="Accelerator (modelled)", elem_id="lab-device")
            c["size"] = gr.Dropdown(SIZES, value="7B", label="Model size", elem_id="lab-size")
            c["devices"] = gr.Slider(1, 8, value=1, step=1, label="Devices (Lookahead Parallelism, simulated)",
                                     elem_id="lab-devices")
        c["prediction"] = gr.Markdown(elem_id="lab-prediction")
        with gr.Row():
            c["cost"] = gr.Plot(elem_id="lab-cost", show_label=False)
            c["scaling"] = gr.Plot(elem_id="lab-scaling", show_label=False)
        c["scaling_text"] = gr.Markdown(elem_id="lab-scaling-text")
        gr.Markdown("#### The paper's measurements beside the model's predictions\n" + paper_table() +
                    "\n\nPaper figures: the authors' LMSYS blog (Figure 7, A100, fp16); where this project measured no "
                    "compression for that model, the prediction uses this project's compression at the nearest swept "
                    "setting, on other prompts and a much smaller model. Sources and what could not be found: "
                    "`assets/lab/paper.json`.", elem_id="lab-paper")
    inputs = [c["device"], c["size"], c["devices"], held_state]
    outputs = [c["cost"], c["prediction"], c["scaling"], c["scaling_text"]]
    c["wire"] = lambda: gr.on([c["device"].change, c["size"].change, c["devices"].change], update, inputs, outputs,
                              show_progress="hidden")
    c["inputs"], c["outputs"] = inputs, outputs
    return c
