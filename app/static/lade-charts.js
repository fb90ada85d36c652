// Small SVG line charts for the step views (tokens against step, pool size against step, cost against tokens).
//
// Drawn by the renderer itself, so that stepping at 20 steps/s only moves a marker (`chart.mark(k)`) and the HTML
// export stays small; the speed lab's larger charts are Plotly figures. A chart has a legend, axis titles, readable
// ticks (linear, or log2 with plain numbers) and a hover read-out of every series at the nearest x.
(() => {
  "use strict";
  const Lade = (window.Lade = window.Lade || {});
  const { h } = Lade;
  const M = { left: 46, right: 12, top: 26, bottom: 34 };

  function niceTicks(lo, hi, count = 5) {
    if (hi <= lo) return [lo];
    const raw = (hi - lo) / count, mag = 10 ** Math.floor(Math.log10(raw));
    const step = [1, 2, 5, 10].map((f) => f * mag).find((s) => s >= raw) || raw;
    const ticks = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) ticks.push(+v.toFixed(10));
    return ticks;
  }

  // lineChart(node, {series: [{name, color, dash, points: [[x, y], ...]}], xLabel, yLabel, logX, height,
  //   marker: x, markerLabel, yMin, hover: (x) -> text, extra: [{x, y, label, color, shape}]}) -> {mark(x)}
  Lade.lineChart = function lineChart(node, spec) {
    const width = Math.max(280, node.clientWidth || 560), height = spec.height || 200;
    const all = spec.series.flatMap((s) => s.points).concat((spec.extra || []).map((e) => [e.x, e.y]));
    const tx = (x) => (spec.logX ? Math.log2(Math.max(x, 1e-9)) : x);
    const xs = all.map((p) => tx(p[0])), ys = all.map((p) => p[1]);
    const x0 = Math.min(...xs, spec.logX ? 0 : 0), x1 = Math.max(...xs, x0 + 1);
    const y0 = spec.yMin !== undefined ? spec.yMin : Math.min(0, ...ys), y1 = Math.max(...ys, y0 + 1) * 1.05;
    const W = width - M.left - M.right, H = height - M.top - M.bottom;
    const sx = (x) => M.left + ((tx(x) - x0) / (x1 - x0)) * W;
    const sy = (y) => M.top + H - ((y - y0) / (y1 - y0)) * H;
    const svg = h("svg:svg", { viewBox: `0 0 ${width} ${height}`, width, height, class: "chart", role: "img",
      "aria-label": spec.title || spec.yLabel || "chart" });
    for (const v of niceTicks(y0, y1)) {
      svg.append(h("svg:line", { x1: M.left, x2: M.left + W, y1: sy(v), y2: sy(v), class: "grid" }),
        h("svg:text", { x: M.left - 6, y: sy(v) + 4, class: "tick", "text-anchor": "end" }, String(v)));
    }
    const xticks = spec.logX ? niceTicks(x0, x1).filter((v) => Number.isInteger(v)).map((v) => 2 ** v)
      : niceTicks(x0, x1, Math.max(2, Math.min(8, Math.floor(W / 60))));
    for (const v of xticks) {
      svg.append(h("svg:text", { x: sx(v), y: M.top + H + 14, class: "tick", "text-anchor": "middle" }, String(v)));
    }
    svg.append(h("svg:text", { x: M.left + W / 2, y: height - 4, class: "axis", "text-anchor": "middle" }, spec.xLabel),
      h("svg:text", { x: 12, y: M.top + H / 2, class: "axis", "text-anchor": "middle",
        transform: `rotate(-90 12 ${M.top + H / 2})` }, spec.yLabel));
    for (const s of spec.series) {
      if (!s.points.length) continue;
      const d = s.points.map((p, i) => `${i ? "L" : "M"}${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`).join("");
      svg.append(h("svg:path", { d, fill: "none", stroke: s.color, "stroke-width": 2, "stroke-dasharray": s.dash || null }));
    }
    for (const e of spec.extra || []) {
      svg.append(h("svg:circle", { cx: sx(e.x), cy: sy(e.y), r: 5, fill: e.color, stroke: "#fff", "stroke-width": 1.5 },
        h("svg:title", {}, e.label)));
      svg.append(h("svg:text", { x: sx(e.x) + 7, y: sy(e.y) - 6, class: "tick", fill: e.color }, e.label));
    }
    // legend, top right
    let lx = M.left + 4;
    for (const s of spec.series.filter((s) => s.name)) {
      svg.append(h("svg:line", { x1: lx, x2: lx + 16, y1: 10, y2: 10, stroke: s.color, "stroke-width": 2,
        "stroke-dasharray": s.dash || null }), h("svg:text", { x: lx + 20, y: 14, class: "legend" }, s.name));
      lx += 28 + 6.5 * s.name.length;
    }
    const marker = h("svg:line", { y1: M.top, y2: M.top + H, class: "marker", visibility: "hidden" });
    const guide = h("svg:line", { y1: M.top, y2: M.top + H, class: "guide", visibility: "hidden" });
    const tip = h("div", { class: "chart-tip", hidden: true });
    svg.append(marker, guide);
    const overlay = h("svg:rect", { x: M.left, y: M.top, width: W, height: H, fill: "transparent" });
    svg.append(overlay);
    overlay.addEventListener("mousemove", (ev) => {
      const box = svg.getBoundingClientRect(), px = ((ev.clientX - box.left) / box.width) * width;
      let best = null;
      for (const p of spec.series[0].points) if (!best || Math.abs(sx(p[0]) - px) < Math.abs(sx(best[0]) - px)) best = p;
      if (!best) return;
      guide.setAttribute("x1", sx(best[0])); guide.setAttribute("x2", sx(best[0]));
      guide.setAttribute("visibility", "visible");
      tip.hidden = false;
      tip.textContent = spec.hover ? spec.hover(best[0]) : `${best[0]}: ${best[1]}`;
      tip.style.left = `${Math.min(box.width - 160, Math.max(0, (sx(best[0]) / width) * box.width + 8))}px`;
    });
    overlay.addEventListener("mouseleave", () => { guide.setAttribute("visibility", "hidden"); tip.hidden = true; });
    Lade.fill(node, h("div", { class: "chart-box" }, spec.title ? h("div", { class: "chart-title" }, spec.title) : null,
      svg, tip));
    const chart = {
      mark(x) {
        if (x === null || x === undefined) { marker.setAttribute("visibility", "hidden"); return; }
        marker.setAttribute("x1", sx(x)); marker.setAttribute("x2", sx(x));
        marker.setAttribute("visibility", "visible");
      },
    };
    chart.mark(spec.marker);
    return chart;
  };
})();
