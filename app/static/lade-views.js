// @ts-check
// The views of a run at clock step k, each a function of (run, k) that returns a node (`Lade.views`): the two
// outputs, the counter, the progress and pool plots, and the legends every view shares. The step's own views (window,
// trajectory, pool, verification) are in lade-step-views.js, the mask in lade-mask.js.
//
// View ids are the page's element ids (outside checks rely on them): ar-output, la-output, counter, progress-plot,
// window-view, trajectory-view, pool-view, pool-plot, verify-view, mask-view. Colours follow one legend (the CSS
// classes right / wrong / bonus / unchecked / win / ver), and every colour is paired with a glyph, an outline or
// words. Sentences that state a number read it off the run; each view has a text alternative computed from it.
const LadeViews = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { h, tok, plural, fmt, pct, memo, scroller, COLORS } = Lade.dom;
  /** @type {Record<string, ViewFn>} */
  const views = {};

  /** @param {string} label @param {string} cls @param {string} [icon] */
  const key = (label, cls, icon) =>
    h("span", { class: `key ${cls}` }, icon ? h("b", { "aria-hidden": "true" }, icon) : null, label);
  const legends = {
    tokens: () =>
      h(
        "div",
        { class: "legend" },
        key("a step that accepted several tokens (bold)", "multi"),
        key("the step shown (outlined)", "now"),
        "Whitespace: ␣ space, ↵ newline, ⇥ tab; ⟨U+…⟩ an invisible character.",
      ),
    window: () =>
      h(
        "div",
        { class: "legend" },
        key("right guess: the final text has it there", "right", "✓"),
        key("changed since the last guess for that position", "changed", "•"),
        key("new level: the model's output", "win new", "▸"),
        "#n: the output token the cell guesses (#0 is the first new token).",
      ),
    verify: () =>
      h(
        "div",
        { class: "legend" },
        key("accepted", "right", "✓"),
        key("rejected", "wrong", "✗"),
        key("not checked", "unchecked", "·"),
        key("the model's own next token (bonus)", "bonus", "+"),
      ),
    /** The mask's marks, those this layout has: no candidate key on a step that fed no candidates.
     * @param {{levels: number, nodes: number}} layout */
    mask: (layout) =>
      h(
        "div",
        { class: "legend" },
        key("sees x (solid, the colour of the text)", "m-x"),
        layout.levels ? key("sees a window token (solid blue)", "m-win") : null,
        layout.nodes ? key("sees a candidate token (hatched amber)", "m-ver") : null,
        key("hidden (faint)", "m-off"),
        "Everything also sees the committed text (the KV cache).",
      ),
  };

  /** A view's frame: a heading, then its parts. @param {string} title @param {...Kid} parts */
  const frame = (title, ...parts) => [h("h3", { class: "view-title" }, title), ...parts];
  /** @param {...Kid} children */
  const note = (...children) => h("p", { class: "note" }, ...children);
  /** @param {...Kid} children */
  const muted = (...children) => h("p", { class: "muted" }, ...children);

  // -- side by side ----------------------------------------------------------------------------------------------
  /** The text a lane wrote, every token a span; built once per run version, then shown up to step k.
   * @param {Run} run @param {string} lane */
  function outputSpans(run, lane) {
    return memo(
      run,
      `out:${lane}`,
      () => {
        const steps = run.lane(lane).steps,
          spans = /** @type {HTMLSpanElement[]} */ ([]);
        steps.forEach((s, i) => {
          s.accepted.forEach((id) => {
            const multi = lane === "parallel" && s.accepted.length > 1;
            const span = tok(run, id, `${multi ? "multi " : ""}${lane === "parallel" ? "g" + (i % 2) : ""}`, 0, true);
            span.dataset.step = String(i);
            span.title = `step ${i}: ${plural(s.accepted.length, "token")} · token ${id}`;
            spans.push(span);
          });
        });
        return {
          spans,
          box: h(
            "div",
            { class: "tok-text", tabindex: 0, role: "region", "aria-label": `${run.laneName(lane)} output` },
            spans,
          ),
        };
      },
      run.version,
    );
  }

  /** @param {ViewContext} ctx @param {string} lane */
  function outputPanel({ run, k }, lane) {
    const { spans, box } = outputSpans(run, lane);
    const upto = run.clock(lane, k),
      done = run.finished(lane, k),
      steps = run.lane(lane).steps.length;
    for (const span of spans) {
      const s = +(span.dataset.step || 0);
      span.hidden = s > upto;
      span.classList.toggle("now", s === upto && k <= upto && !done);
    }
    const n = run.numbers(lane, k);
    const status = !steps
      ? "not started yet"
      : done
        ? `${run.laneName(lane)} ${Lade.raceWords.laneEnd(run, lane)}; steps 0 to ${steps - 1}.`
        : `after step ${upto}: ${plural(n.tokens, "token")}`;
    requestAnimationFrame(() => {
      if (box.scrollHeight - box.scrollTop - box.clientHeight < 60) box.scrollTop = box.scrollHeight;
    });
    const title =
      lane === "baseline"
        ? run.greedy
          ? "Autoregressive decoding (greedy)"
          : `Autoregressive decoding (sampling, T=${run.t.sampling.temperature})`
        : `${run.laneName("parallel")} decoding`;
    return h(
      "div",
      { class: `panel lane-${lane}` },
      frame(
        title,
        lane === "parallel" ? badge(run) : null,
        muted(status),
        box,
        lane === "parallel" ? legends.tokens() : null,
      ),
    );
  }

  /** The text against greedy's once both lanes of a greedy run have ended, compared over the tokens both wrote
   * (`Run.against`): identical, the same as far as a lane cut short got (no success mark: it did not finish), or
   * where they differ. @param {Run} run */
  function badge(run) {
    if (!run.greedy || run.running("parallel") || run.running("baseline")) return null;
    const t = run.against("parallel"),
      dtype = ` (${run.t.dtype})`;
    if (t.verdict === "identical")
      return h("p", { class: "badge same" }, `✓ Identical to greedy decoding: all ${t.n} tokens${dtype}.`);
    if (t.verdict === "differs")
      return h("p", { class: "badge differs" }, `≠ Differs from greedy decoding from token #${t.part} on${dtype}.`);
    const cut = ["parallel", "baseline"]
      .filter((l) => run.ended(l) === "stopped")
      .map(
        (l) =>
          `${run.laneWord(l)} ${Lade.raceWords.laneHow(run, l)} after ${plural(run.lane(l).tokens.length, "token")}`,
      )
      .join(", ");
    return h(
      "p",
      { class: "badge partial" },
      t.verdict === "agrees"
        ? `= The same as greedy decoding over the ${plural(t.n, "token")} both wrote${dtype}; ${cut}.`
        : `No token both lanes wrote to compare; ${cut}.`,
    );
  }

  views["ar-output"] = (ctx) => outputPanel(ctx, "baseline");
  views["la-output"] = (ctx) => outputPanel(ctx, "parallel");

  /** The lanes a view shows: the chapter's, else all. @param {Run} run @param {string[] | null | undefined} only */
  const shownLanes = (run, only) => run.lanes().filter((l) => !only || only.includes(l.id));

  views.counter = ({ run, k, lanes }) => {
    const rows = shownLanes(run, lanes).map((lane) => {
      const n = run.numbers(lane.id, k);
      return h(
        "tr",
        { class: `lane-${lane.id}` },
        h("th", { scope: "row" }, run.laneName(lane.id)),
        h("td", {}, String(n.steps)),
        h("td", {}, String(n.tokens)),
        h("td", { class: "big" }, fmt(n.perStep)),
        h("td", {}, fmt(n.seconds)),
        h("td", {}, fmt(n.perSecond, 1)),
      );
    });
    return h(
      "div",
      { class: "counter" },
      frame(
        "The counter",
        muted(
          `Clock step ${k} of ${run.lastStep()}: one step is one `,
          "forward pass; step 0 reads the prompt and writes the first token, so after step k a lane has made k + 1 steps.",
        ),
        scroller(
          "the counter's numbers",
          h(
            "table",
            {},
            h("caption", { class: "sr-only" }, "Steps, tokens and time of each method"),
            h(
              "tr",
              {},
              ["method", "steps", "tokens", "tokens/step", "seconds", "tokens/s"].map((t) =>
                h("th", { scope: "col" }, t),
              ),
            ),
            rows,
          ),
        ),
      ),
    );
  };

  /** One colour and one dash per lane, so lanes differ in more than colour.
   * @type {Record<string, {color: string, dash: string | null}>} */
  const LANE_STYLE = {
    parallel: { color: COLORS.parallel, dash: null },
    baseline: { color: COLORS.baseline, dash: "5 3" },
    lane0: { color: COLORS.bonus, dash: "2 2" },
    lane1: { color: COLORS.right, dash: "8 3 2 3" },
  };
  /** @param {Run} run @param {string} lane */
  const cumulative = (run, lane) => run.totals(lane).tokens.map((t, i) => [i, t]);

  views["progress-plot"] = ({ run, k, lanes }) => {
    const chart = memo(
      run,
      `progress:${lanes || "all"}`,
      () => {
        const series = shownLanes(run, lanes).map((lane) => ({
          name: run.laneName(lane.id).toLowerCase(),
          ...LANE_STYLE[lane.id],
          points: cumulative(run, lane.id),
        }));
        const summary =
          "Tokens written against steps: " +
          shownLanes(run, lanes)
            .map(
              (l) =>
                `${run.laneName(l.id).toLowerCase()} ` +
                `${run.lane(l.id).tokens.length} tokens in ${plural(run.lane(l.id).steps.length, "step")}`,
            )
            .join("; ") +
          ".";
        return Lade.charts.line({
          series,
          xLabel: "step (forward passes)",
          yLabel: "tokens",
          summary,
          title: "Tokens written against steps",
          height: 190,
          hover: (x) =>
            series.map((s) => `${s.name}: ${(s.points[Math.min(x, s.points.length - 1)] || [0, 0])[1]}`).join(" · ") +
            ` at step ${x}`,
        });
      },
      run.version,
    );
    chart.mark(k);
    return h("div", {}, h("h3", { class: "view-title sr-only" }, "Progress"), chart.node);
  };

  views["pool-plot"] = ({ run, k }) => {
    if (run.method !== "lookahead")
      return h("div", {}, frame("Pool size", note(`${run.laneName("parallel")} decoding keeps no n-gram pool.`)));
    const chart = memo(
      run,
      "pool",
      () => {
        const points = run.d.steps.map((d, i) => [i, d.pool ? d.pool.size : 0]);
        const last = points.length ? points[points.length - 1][1] : 0;
        return Lade.charts.line({
          series: [{ name: "pool size", color: COLORS.verify, points }],
          xLabel: "step",
          yLabel: "n-grams",
          title: "n-grams in the pool after each step",
          height: 170,
          summary: `The pool holds ${last} n-grams after the last step.`,
          hover: (x) => `step ${x}: ${(points[x] || [0, 0])[1]} n-grams`,
        });
      },
      run.version,
    );
    chart.mark(run.clock("parallel", k));
    return h("div", {}, h("h3", { class: "view-title sr-only" }, "Pool size"), chart.node);
  };

  // -- the relatives: what each method needs, and the metrics practitioners read ---------------------------------
  const NEEDS = {
    greedy: "nothing: one token per forward pass",
    sampling: "nothing: one token per forward pass",
    lookahead: "nothing but the model (its own guesses and the n-grams it keeps)",
    [Lade.dom.HYBRID]:
      "nothing but the model; where the answer repeats the text, prompt lookup's copies of it as extra candidates",
    jacobi: "nothing but the model (its own guesses)",
    pld: "an answer that copies the prompt or the text",
    "early-exit":
      "the model's own first layers (no extra weights; a model trained to exit early has more of its guesses kept)",
    draft: "a second, smaller model held and run beside it (here with the same tokenizer)",
  };

  /** What the metrics `ids` measure, in the register's words, as one line (none where the register lacks one).
   * @param {MetricTerm[]} terms @param {string[]} ids */
  function defined(terms, ids) {
    const found = ids.map((id) => terms.find((t) => t.id === id));
    if (found.some((t) => !t)) return null;
    return muted(
      /** @type {MetricTerm[]} every one found */ (found).map((t, i) => [
        i ? "; " : "",
        h("b", {}, t.label),
        `: ${t.ours}`,
      ]),
      ". The two count different steps.",
    );
  }

  views["relatives-view"] = ({ run, k, compact }) => {
    const m = run.d.metrics || {},
      base = run.meanStep("baseline"),
      terms = run.d.metric_terms || [];
    const label = (/** @type {string} */ id, /** @type {string} */ plain) =>
      (terms.find((t) => t.id === id) || { label: plain }).label;
    // the columns: [heading, cell of a lane, shown on a slide]; a slide (an embed) keeps the four read from the back
    // row, the page has all eight
    /** @type {[string, (lane: ReturnType<Run["lanes"]>[number]) => Node, boolean][]} */
    const columns = [
      ["needs", (lane) => h("td", { class: "needs" }, Object.hasOwn(NEEDS, lane.kind) ? NEEDS[lane.kind] : ""), false],
      [label("tokens_per_step", "tokens/step"), (lane) => h("td", {}, fmt(run.compression(lane.id))), true],
      [
        label("mean_acceptance_length", "acceptance length"),
        (lane) => {
          const x = m[lane.id];
          return h("td", {}, x && x.drafted_tokens ? fmt(x.mean_acceptance_length) : "– (nothing drafted)");
        },
        false,
      ],
      [
        label("draft_acceptance_rate", "drafted tokens kept"),
        (lane) => {
          const x = m[lane.id];
          return h("td", {}, x && x.drafted_tokens ? pct(x.draft_acceptance_rate) : "– (nothing drafted)");
        },
        false,
      ],
      ["drafted/step", (lane) => h("td", {}, m[lane.id] ? fmt(m[lane.id].drafted_per_step, 1) : "–"), false],
      [
        "ms/token",
        (lane) => {
          const n = run.lane(lane.id).tokens.length;
          return h("td", {}, fmt(n ? (1000 * run.time(lane.id)) / n : 0, 1));
        },
        true,
      ],
      [
        `vs ${run.laneWord("baseline")}`,
        // a race stopped before its end has no speed-up: its lanes were stopped at once, not at their ends
        (lane) =>
          h(
            "td",
            {},
            run.lanes().some((l) => run.ended(l.id) === "stopped")
              ? "– (stopped)"
              : run.time(lane.id) > 0
                ? `${fmt(run.time("baseline") / run.time(lane.id))}x`
                : "–",
          ),
        true,
      ],
      [
        "text",
        (lane) => {
          if (!run.greedy || run.running(lane.id) || run.running("baseline")) return h("td", {}, "–");
          if (lane.id === "baseline") return h("td", {}, "– (the reference)");
          const t = run.against(lane.id);
          return h(
            "td",
            {},
            t.verdict === "identical"
              ? "✓ identical"
              : t.verdict === "differs"
                ? `≠ differs from #${t.part}`
                : t.verdict === "agrees"
                  ? `= the same over the ${plural(t.n, "token")} both wrote`
                  : "– (no token to compare)",
          );
        },
        true,
      ],
    ];
    const shown = columns.filter(([, , slide]) => slide || !compact);
    // each cell carries its column's name: a phone lays a lane out as a card of named values (lade.css)
    const rows = run.lanes().map((lane) =>
      h(
        "tr",
        { class: `lane-${lane.id}`, dataset: { lane: lane.kind } },
        h("th", { scope: "row" }, run.laneName(lane.id)),
        shown.map(([name, cell]) => {
          const td = /** @type {HTMLElement} */ (cell(lane));
          td.dataset.label = name;
          return td;
        }),
      ),
    );
    const per = m.parallel ? m.parallel.per_position_acceptance : [];
    const pos = per.length
      ? `Per-position acceptance of ${run.laneWord("parallel")} (the share of its drafting steps that kept draft ` +
        `token i${run.method === "lookahead" ? ", each step counting the best of its up to G candidates" : ""}): ` +
        per
          .slice(0, 6)
          .map((/** @type {number} */ r, /** @type {number} */ i) => `draft token ${i}: ${pct(r)}`)
          .join(", ") +
        "."
      : "";
    return h(
      "div",
      {},
      frame(
        "The methods side by side",
        muted(
          `Each lane's whole run on ${Lade.notes.deviceName(run)}, the prompt's prefill included`,
          h(
            "span",
            { class: "aside" },
            ` (a greedy decoding step, the prefill left out: ${fmt(1000 * base, 1)} ms here)`,
          ),
          ".",
        ),

        scroller(
          "the methods side by side",
          h(
            "table",
            { class: "verify methods" },
            h("caption", { class: "sr-only" }, `Each method: ${shown.map(([name]) => name).join(", ")}`),
            h(
              "tr",
              {},
              ["method", ...shown.map(([name]) => name)].map((t) => h("th", { scope: "col" }, t)),
            ),
            rows,
          ),
        ),
        compact
          ? muted(`Zoomed in: ${shown.length} of the ${columns.length} columns (the app shows all ${columns.length}).`)
          : null,
        // the two measures of a step's tokens side by side, each said where it stands (the register's words)
        compact ? null : defined(terms, ["tokens_per_step", "mean_acceptance_length"]),
        // asides a chapter's slide leaves out (lade.css): the per-position rates and the metrics' other names
        pos ? h("p", { class: "muted aside" }, pos) : null,
        terms.length
          ? h(
              "details",
              { class: "terms aside" },
              h("summary", {}, "What these columns measure, and what others call them"),
              h(
                "dl",
                {},
                terms.map((t) => [
                  h("dt", {}, t.label),
                  h(
                    "dd",
                    {},
                    `${t.ours[0].toUpperCase()}${t.ours.slice(1)}. It is `,
                    Lade.dom.cite("metrics", t.elsewhere),
                    " (",
                    Lade.dom.cite("metrics", t.sources.map((src) => `${src.name}: ${src.where}`).join("; ")),
                    ").",
                  ),
                ]),
              ),
            )
          : null,
        k < run.lastStep() ? muted(`(Whole runs; the clock shows step ${k}.)`) : null,
      ),
    );
  };

  return { render: views, legends, key, frame, note, muted };
})();
window.Lade.views = LadeViews;
