// @ts-check
// The attention mask the model used at a step (`views["mask-view"]`): the engine's own boolean matrix (its bits are
// in the payload), drawn as one SVG with one path per kind of cell, each kind told apart by more than colour (solid
// x in the text's colour, solid blue window, hatched amber candidates, faint hidden, in either theme). Hover a cell for why it is visible or not; the
// same facts are in a table for screen readers and keyboards, built when it is opened. On a slide (an embed) a mask
// too dense to read is zoomed in, not shrunk: the same bits for x, the first columns of each level and the first
// candidate (a principal submatrix: each token kept sees exactly what it saw), at a size whose labels can be read.
const LadeMask = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { h, plural, memo, maskBits, scroller } = Lade.dom;
  const { render: views, legends, frame, note, muted } = Lade.views;
  const KIND = ["x", "window level 0", "window level ≥ 1", "candidate"];

  /** @param {Run} _run @param {LayoutRow} layout */
  function summary(_run, layout) {
    return (
      `The ${layout.size} × ${layout.size} attention mask: x, ${plural(layout.levels, "window level")} of ${layout.window}` +
      ` tokens and ${plural(layout.nodes, "verification token")}. Each window token sees x, level 0 up to its own column and its ` +
      "own column above it; each verification token sees x and its own earlier tokens; neither branch sees the other."
    );
  }

  // A slide's mask: cells of ZOOM_CELL with labels of ZOOM_FONT (a slide's type), all of it where it has at most
  // ZOOM_MOST tokens, else the first ZOOM_COLUMNS columns of each level and the first candidate.
  const ZOOM_MOST = 15,
    ZOOM_COLUMNS = 3,
    ZOOM_CELL = 18,
    ZOOM_FONT = 14;

  /** The tokens a slide's mask keeps (indices into the layout). @param {LayoutRow} layout */
  function zoomed(layout) {
    const every = layout.labels.map((_, i) => i);
    if (layout.size <= ZOOM_MOST) return every;
    return every.filter((i) => {
      const label = layout.labels[i],
        win = /^L\d+\.(\d+)$/.exec(label);
      return label === "x" || (win ? +win[1] < ZOOM_COLUMNS : label.startsWith("c1."));
    });
  }

  /** The SVG of a layout (or of the tokens `keep` of it, zoomed in), built once per layout and choice.
   * @param {Run} run @param {LayoutRow} layout @param {number[] | null} [keep] */
  function drawing(run, layout, keep = null) {
    return memo(layout, keep ? "svg-zoomed" : "svg", () => {
      const index = keep || layout.labels.map((_, i) => i),
        q = index.length,
        all = /** @type {(r: number, c: number) => boolean} */ (maskBits(layout)),
        bit = (/** @type {number} */ r, /** @type {number} */ c) => all(index[r], index[c]),
        labels = index.map((i) => layout.labels[i]),
        kinds = index.map((i) => layout.kinds[i]);
      const cell = keep ? ZOOM_CELL : Math.max(4, Math.min(16, Math.floor(560 / q))),
        pad = keep ? 50 : 46,
        size = pad + q * cell;
      /** @type {Record<string, string>} */
      const paths = { x: "", win: "", ver: "", off: "" };
      const kindOf = (/** @type {number} */ k) => (k === 0 ? "x" : k === 3 ? "ver" : "win");
      for (let r = 0; r < q; r++)
        for (let c = 0; c < q; c++) {
          paths[bit(r, c) ? kindOf(kinds[c]) : "off"] +=
            `M${pad + c * cell},${pad + r * cell}h${cell - 1}v${cell - 1}h${1 - cell}z`;
        }
      const svg = h(
        "svg:svg",
        {
          viewBox: `0 0 ${size} ${size}`,
          class: keep ? "mask zoomed" : "mask",
          ...(keep ? { width: size, height: size } : {}),
          role: "img",
          "aria-label": summary(run, layout) + (q < layout.size ? ` Shown: ${labels.join(", ")}.` : ""),
        },
        h(
          "svg:defs",
          {},
          h(
            "svg:pattern",
            { id: "lade-hatch", width: 4, height: 4, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" },
            h("svg:rect", { width: 4, height: 4, class: "m-ver-bg" }),
            h("svg:line", { x1: 0, y1: 0, x2: 0, y2: 4, class: "m-ver-line" }),
          ),
        ),
        h("svg:path", { d: paths.off, class: "m-off" }),
        h("svg:path", { d: paths.x, class: "m-x" }),
        h("svg:path", { d: paths.win, class: "m-win" }),
        h("svg:path", { d: paths.ver, class: "m-ver", fill: "url(#lade-hatch)" }),
      );
      const font = keep ? ZOOM_FONT : Math.min(10, cell);
      if (cell >= 7)
        labels.forEach((label, i) => {
          svg.append(
            h(
              "svg:text",
              { x: pad - 3, y: pad + i * cell + cell - 2, class: "mlabel", "text-anchor": "end", "font-size": font },
              label,
            ),
            h(
              "svg:text",
              {
                x: pad + i * cell + cell - 2,
                y: pad - 3,
                class: "mlabel",
                "font-size": font,
                transform: `rotate(-90 ${pad + i * cell + cell - 2} ${pad - 3})`,
              },
              label,
            ),
          );
        });
      const band = h("svg:rect", { x: pad, width: q * cell, height: cell, class: "band", visibility: "hidden" });
      svg.append(band);
      const tip = h("div", { class: "chart-tip", hidden: true, "aria-hidden": "true" });
      svg.addEventListener("mousemove", (/** @type {MouseEvent} */ ev) => {
        const box = svg.getBoundingClientRect(),
          scale = size / box.width;
        const c = Math.floor(((ev.clientX - box.left) * scale - pad) / cell),
          r = Math.floor(((ev.clientY - box.top) * scale - pad) / cell);
        if (r < 0 || c < 0 || r >= q || c >= q) {
          tip.hidden = true;
          band.setAttribute("visibility", "hidden");
          return;
        }
        tip.hidden = false;
        tip.textContent = reason(run, layout, index[r], index[c], bit(r, c));
        tip.style.left = `${Math.min(box.width - 220, ev.clientX - box.left + 12)}px`;
        tip.style.top = `${ev.clientY - box.top + 12}px`;
        band.setAttribute("y", String(pad + r * cell));
        band.setAttribute("visibility", "visible");
      });
      svg.addEventListener("mouseleave", () => {
        tip.hidden = true;
        band.setAttribute("visibility", "hidden");
      });
      return h("div", { class: "mask-wrap" }, svg, tip);
    });
  }

  /** Why cell (r, c) is visible or hidden, in the engine's own words. @param {Run} run @param {LayoutRow} layout
   * @param {number} r @param {number} c @param {boolean} visible */
  function reason(run, layout, r, c, visible) {
    const code = run.d.rules[layout.kinds[r]][layout.kinds[c]][visible ? 1 : 0];
    const why = (run.d.reasons[code] || "").replace("{q}", layout.labels[r]).replace("{k}", layout.labels[c]);
    return `${layout.labels[r]} (position p+${layout.positions[r]}) → ${layout.labels[c]} (p+${layout.positions[c]}): ${why}`;
  }

  /** The mask as a table (rows: the token that looks; cells: what it sees), built when it is opened. */
  function table(/** @type {Run} */ _run, /** @type {LayoutRow} */ layout) {
    const box = h("details", { class: "mask-table" }, h("summary", {}, "The mask as a table"));
    box.addEventListener("toggle", () => {
      if (!box.open || box.querySelector("table")) return;
      const bit = /** @type {(r: number, c: number) => boolean} */ (maskBits(layout));
      const rows = layout.labels.map((label, r) =>
        h(
          "tr",
          {},
          h("th", { scope: "row" }, `${label} (${KIND[layout.kinds[r]]})`),
          h("td", {}, layout.labels.filter((_, c) => bit(r, c)).join(", ")),
        ),
      );
      box.append(
        scroller(
          "the mask as a table",
          h(
            "table",
            { class: "verify" },
            h("caption", {}, "Each token and the tokens it may see"),
            h("tr", {}, h("th", { scope: "col" }, "token"), h("th", { scope: "col" }, "sees")),
            rows,
          ),
        ),
      );
    });
    return box;
  }

  views["mask-view"] = ({ run, k, compact }) => {
    const step = run.step(k),
      layout = run.layout(k),
      title = "The attention mask";
    if (!step || !layout)
      return h(
        "div",
        {},
        frame(title, note("Step 0 reads the prompt under an ordinary causal mask; the step masks start at step 1.")),
      );
    // its first sentence is the chapter's own on a chapter's slide (lade.css leaves it out there)
    const head = muted(
      h(
        "span",
        { class: "summary" },
        `Step ${step.index}'s attention mask: ${layout.size} × ${layout.size} tokens = x, ${plural(layout.levels, "window level")} of `,
        `W=${layout.window}, ${plural(layout.nodes, "verification token")}${step.tree && layout.nodes ? " (a token tree: shared prefixes fed once)" : ""}. `,
      ),
      "Row = the token that looks, column = the token it may see. This is the matrix the model used.",
    );
    if (!maskBits(layout))
      return h(
        "div",
        {},
        frame(title, head, note("This layout's bits were left out (the run's masks are over the size budget).")),
      );
    if (!compact)
      return h("div", {}, frame(title, head, drawing(run, layout), legends.mask(layout), table(run, layout)));
    const keep = zoomed(layout),
      candidate = keep.some((i) => layout.labels[i].startsWith("c1.")) ? ", candidate 1" : "";
    const zoom =
      keep.length < layout.size &&
      muted(
        `Zoomed in: ${keep.length} of the ${layout.size} tokens (x, columns 0 to ${ZOOM_COLUMNS - 1} of each `,
        `level${candidate}) as the model used them; the app shows all ${layout.size}.`,
      );
    return h(
      "div",
      {},
      frame(
        title,
        h(
          "div",
          { class: "mask-zoomed" },
          drawing(run, layout, keep),
          h("div", {}, head, zoom || null, legends.mask(layout)),
        ),
        table(run, layout),
      ),
    );
  };

  return { summary, reason };
})();
window.Lade.mask = LadeMask;
