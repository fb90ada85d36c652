// @ts-check
// Line charts for the views and the speed lab (`Lade.charts.line`), drawn by the renderer itself in the page's own
// fonts and colours, so that stepping only moves a marker and the HTML export stays small.
//
// A chart has a title above it (never under its legend), a legend row, axis titles, readable ticks (linear, or log2
// with plain numbers), optional shaded ranges (`bands`, a prediction's low to high), marked points and vertical
// rules, and a hover read-out. For screen readers it is an image with a label the caller computes from the data
// (`summary`); the numbers behind it are in a table the caller may add.
const LadeCharts = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { h } = Lade.dom;
  const M = { left: 48, right: 14, top: 10, bottom: 36 };
  // a rule's label: a row of this height above the plot, about this wide a character (lade.css .rule-label)
  const RULE_ROW = 18,
    RULE_CHAR = 9; // 14 px bold measured 8.3 to 8.5 units a character; a little over, so that labels never touch

  /** @param {number} lo @param {number} hi @param {number} [count] */
  function niceTicks(lo, hi, count = 5) {
    if (hi <= lo) return [lo];
    const raw = (hi - lo) / count,
      mag = 10 ** Math.floor(Math.log10(raw));
    const step = [1, 2, 5, 10].map((f) => f * mag).find((s) => s >= raw) || raw;
    const ticks = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) ticks.push(+v.toFixed(10));
    return ticks;
  }

  /** @param {number} v */
  const label = (v) => (Math.abs(v) >= 1000 ? `${+(v / 1000).toFixed(1)}k` : String(+v.toFixed(3)));

  /**
   * @param {ChartSpec} spec
   * @returns {{node: HTMLElement, mark: (x: number | null) => void}}
   */
  function line(spec) {
    const width = spec.width || 560,
      height = spec.height || 200;
    const points = spec.series
      .flatMap((s) => s.points)
      .concat(
        (spec.extra || []).map((e) => [e.x, e.y]),
        (spec.bands || []).flatMap((b) =>
          b.points.flatMap((p) => [
            [p[0], p[1]],
            [p[0], p[2]],
          ]),
        ),
      );
    const tx = (/** @type {number} */ x) => (spec.logX ? Math.log2(Math.max(x, 1e-9)) : x);
    const xs = points.map((p) => tx(p[0])).concat((spec.rules || []).map((r) => tx(r.x)));
    const ys = points.map((p) => p[1]);
    const x0 = spec.logX ? Math.min(...xs) : Math.min(0, ...xs),
      x1 = Math.max(...xs, x0 + 1);
    const y0 = spec.yMin !== undefined ? spec.yMin : Math.min(0, ...ys),
      y1 = Math.max(...ys, y0 + 1) * 1.06;
    const W = width - M.left - M.right,
      H = height - M.top - M.bottom;
    const sx = (/** @type {number} */ x) => M.left + ((tx(x) - x0) / (x1 - x0)) * W;
    // rule labels above the plot, not over its lines: left to right, each on the first row where it overlaps no label
    // before it, turned to the left of its line where it would run past the chart (the batch chart's three servers'
    // examples were stacked over its band in small type)
    /** @type {number[]} the right edge of the last label on each row */
    const rows = [];
    const labels = [...(spec.rules || [])]
      .sort((a, b) => tx(a.x) - tx(b.x))
      .map((r) => {
        const x = sx(r.x),
          w = RULE_CHAR * r.label.length,
          flip = x + 3 + w > width - M.right;
        const left = flip ? x - 3 - w : x + 3,
          right = flip ? x - 3 : x + 3 + w;
        let row = rows.findIndex((edge) => edge + 6 < left);
        if (row < 0) row = rows.push(0) - 1;
        rows[row] = right;
        return { r, x, flip, row };
      });
    const top = M.top + RULE_ROW * rows.length,
      full = height + RULE_ROW * rows.length;
    const sy = (/** @type {number} */ y) => top + H - ((y - y0) / (y1 - y0)) * H;
    const svg = h("svg:svg", {
      viewBox: `0 0 ${width} ${full}`,
      class: "chart",
      role: "img",
      "aria-label": spec.summary || spec.title,
      preserveAspectRatio: "xMinYMin meet",
    });
    for (const v of niceTicks(y0, y1)) {
      svg.append(
        h("svg:line", { x1: M.left, x2: M.left + W, y1: sy(v), y2: sy(v), class: "grid" }),
        h("svg:text", { x: M.left - 6, y: sy(v) + 4, class: "tick", "text-anchor": "end" }, label(v)),
      );
    }
    const xticks = spec.logX
      ? niceTicks(x0, x1)
          .filter((v) => Number.isInteger(v))
          .map((v) => 2 ** v)
      : niceTicks(x0, x1, Math.max(2, Math.min(8, Math.floor(W / 60))));
    for (const v of xticks) {
      svg.append(h("svg:text", { x: sx(v), y: top + H + 14, class: "tick", "text-anchor": "middle" }, label(v)));
    }
    svg.append(
      h("svg:text", { x: M.left + W / 2, y: full - 4, class: "axis", "text-anchor": "middle" }, spec.xLabel),
      h(
        "svg:text",
        {
          x: 12,
          y: top + H / 2,
          class: "axis",
          "text-anchor": "middle",
          transform: `rotate(-90 12 ${top + H / 2})`,
        },
        spec.yLabel,
      ),
    );
    for (const b of spec.bands || []) {
      const top = b.points.map((p, i) => `${i ? "L" : "M"}${sx(p[0]).toFixed(1)},${sy(p[2]).toFixed(1)}`).join("");
      const bottom = [...b.points]
        .reverse()
        .map((p) => `L${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`)
        .join("");
      svg.append(h("svg:path", { d: `${top}${bottom}Z`, fill: b.color, opacity: 0.16, stroke: "none" }));
    }
    for (const { r, x, flip, row } of labels) {
      svg.append(
        h("svg:line", {
          x1: x,
          x2: x,
          y1: M.top + RULE_ROW * row + 4,
          y2: top + H,
          stroke: r.color,
          "stroke-width": 1.5,
          "stroke-dasharray": "2 3",
        }),
        h(
          "svg:text",
          {
            x: flip ? x - 3 : x + 3,
            y: M.top + RULE_ROW * row + 12,
            class: "rule-label",
            fill: r.color,
            "text-anchor": flip ? "end" : null,
          },
          r.label,
        ),
      );
    }
    for (const s of spec.series) {
      if (!s.points.length) continue;
      const d = s.points.map((p, i) => `${i ? "L" : "M"}${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`).join("");
      svg.append(
        h("svg:path", { d, fill: "none", stroke: s.color, "stroke-width": 2, "stroke-dasharray": s.dash || null }),
      );
    }
    for (const e of spec.extra || []) {
      svg.append(
        h(
          "svg:path",
          { d: `M${sx(e.x)},${sy(e.y) - 6}l6,6l-6,6l-6,-6z`, fill: e.color, stroke: "var(--bg)", "stroke-width": 1.5 },
          h("svg:title", {}, e.label),
        ),
        h("svg:text", { x: sx(e.x) + 8, y: sy(e.y) - 6, class: "tick", fill: e.color }, e.label),
      );
    }
    const marker = h("svg:line", { y1: top, y2: top + H, class: "marker", visibility: "hidden" });
    const guide = h("svg:line", { y1: top, y2: top + H, class: "guide", visibility: "hidden" });
    const tip = h("div", { class: "chart-tip", hidden: true, "aria-hidden": "true" });
    svg.append(marker, guide);
    const first = spec.series.find((s) => s.points.length);
    if (first) {
      const overlay = h("svg:rect", { x: M.left, y: top, width: W, height: H, fill: "transparent" });
      svg.append(overlay);
      overlay.addEventListener("mousemove", (/** @type {MouseEvent} */ ev) => {
        const box = svg.getBoundingClientRect(),
          px = ((ev.clientX - box.left) / box.width) * width;
        let best = first.points[0];
        for (const p of first.points) if (Math.abs(sx(p[0]) - px) < Math.abs(sx(best[0]) - px)) best = p;
        guide.setAttribute("x1", String(sx(best[0])));
        guide.setAttribute("x2", String(sx(best[0])));
        guide.setAttribute("visibility", "visible");
        tip.hidden = false;
        tip.textContent = spec.hover ? spec.hover(best[0]) : `${best[0]}: ${best[1]}`;
        tip.style.left = `${Math.min(box.width - 160, Math.max(0, (sx(best[0]) / width) * box.width + 8))}px`;
      });
      overlay.addEventListener("mouseleave", () => {
        guide.setAttribute("visibility", "hidden");
        tip.hidden = true;
      });
    }
    const legend = h(
      "div",
      { class: "chart-legend", "aria-hidden": "true" },
      spec.series
        .filter((s) => s.name)
        .map((s) =>
          h(
            "span",
            { class: "key" },
            h(
              "svg:svg",
              { width: 18, height: 8, viewBox: "0 0 18 8" },
              h("svg:line", {
                x1: 0,
                x2: 18,
                y1: 4,
                y2: 4,
                stroke: s.color,
                "stroke-width": 2.5,
                "stroke-dasharray": s.dash || null,
              }),
            ),
            s.name,
          ),
        ),
      (spec.bands || [])
        .filter((b) => b.name)
        .map((b) =>
          h("span", { class: "key" }, h("span", { class: "swatch", style: `background:${b.color}` }), b.name),
        ),
    );
    const node = h(
      "div",
      { class: "chart-box" },
      spec.title ? h("div", { class: "chart-title" }, spec.title) : null,
      legend,
      svg,
      tip,
    );
    /** @param {number | null} x */
    const mark = (x) => {
      if (x === null || x === undefined) {
        marker.setAttribute("visibility", "hidden");
        return;
      }
      marker.setAttribute("x1", String(sx(x)));
      marker.setAttribute("x2", String(sx(x)));
      marker.setAttribute("visibility", "visible");
    };
    mark(spec.marker === undefined ? null : spec.marker);
    return { node, mark };
  }

  return { line };
})();
window.Lade.charts = LadeCharts;
