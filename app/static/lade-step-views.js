// @ts-check
// The views of one step (`Lade.views.render`): the 2D window, the trajectories it keeps, the n-gram pool and the
// verification branch. Every position, rightness and n-gram comes from the run (`Run.window`, `Run.column`), never
// from a rule re-derived here; every table has a caption that says in words what it shows.
const LadeStepViews = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { h, tok, plural, scroller, sr } = Lade.dom;
  const { render: views, legends, key, frame, note, muted } = Lade.views;

  /** @type {Partial<Record<Trace["method"], string>>} */
  const DRAFTS = { pld: "prompt lookup", "early-exit": "the early-exit draft", draft: "the draft model" };

  // -- the window -------------------------------------------------------------------------------------------------
  /** @param {Run} run @param {Cell} c @param {string} [cls] */
  function windowCell(run, c, cls = "") {
    const changed = c.earlier !== undefined;
    const words =
      `guesses output token #${run.outputIndex(c.pos)}${c.right ? ", right: the final text has it there" : ""}` +
      (changed ? `, changed from “${Lade.dom.cellText(run.text(/** @type {number} */ (c.earlier)), 0)}”` : "");
    return h(
      "td",
      { class: `cell ${cls} ${c.right ? "right" : ""}`, title: words, dataset: { pos: c.pos, link: `col:${c.col}` } },
      c.right ? h("b", { class: "icon", "aria-hidden": "true" }, "✓") : null,
      changed ? h("b", { class: "dot", "aria-hidden": "true" }, "•") : null,
      tok(run, c.token),
      h("sub", {}, `#${run.outputIndex(c.pos)}`),
      sr(c.right ? " right" : "", changed ? " changed" : ""),
    );
  }

  /** The window's summary in words (its caption and its text alternative). @param {Run} run @param {Step} step */
  function windowSummary(run, step) {
    const w = run.window(step),
      W = step.window,
      L = step.levels_before.length,
      N = run.config.ngram;
    if (step.kind === "jacobi") {
      return (
        `Step ${step.index}: x = “${Lade.dom.cellText(run.text(step.input_token), 0)}” at output position ` +
        `${run.outputIndex(step.position)}. The block feeds ${W} guesses, ${w.rightFed} of them right for their positions; ` +
        `the model's outputs after them are the next guesses, ${w.rightNew} of ${W} right.`
      );
    }
    const levels =
      `Step ${step.index}: the window holds ${plural(L, "level")} of ${W} guesses` +
      (L < N - 1 ? ` (warm-up: ${N - 1} levels make it full)` : "");
    return (
      `${levels}; ${w.rightNew} of the ${W} new guesses ${w.rightNew === 1 ? "is" : "are"} right.` +
      (w.full
        ? ` Each column, read down and then the new level, spells a ${N}-gram for the pool under its first token (${W} this step).`
        : "")
    );
  }

  views["window-view"] = ({ run, k }) => {
    const step = run.step(k),
      title = run.method === "jacobi" ? "The guess block" : "The 2D window";
    if (!step || step.kind === "prefill") {
      return h(
        "div",
        {},
        frame(
          title,
          note(
            "Step 0 reads the prompt in one causal forward pass: no guesses yet. From step 1 ",
            run.method === "jacobi"
              ? "each step carries the block of guessed tokens."
              : run.method === "lookahead"
                ? "each step carries the 2D window of guesses (its first level drawn from the prompt's tokens)."
                : `each step carries the draft ${DRAFTS[run.method] || "a drafter"} proposes; this method has no window.`,
          ),
        ),
      );
    }
    if (!step.levels_before.length) {
      return h(
        "div",
        {},
        frame(
          title,
          note(
            run.method === "lookahead"
              ? `Step ${step.index} fed no window: the adaptive sizes paused the lookahead branch because its guesses were not ` +
                  "paying for the tokens they cost on this device. Its n-gram pool and verification still work."
              : `${run.laneName("parallel")} decoding has no window: its draft comes from ${DRAFTS[run.method] || "elsewhere"} ` +
                  "(the verification view shows it).",
          ),
        ),
      );
    }
    const w = run.window(step),
      L = step.levels_before.length,
      N = run.config.ngram,
      jacobi = step.kind === "jacobi";
    const summary = windowSummary(run, step);
    const head = h(
      "tr",
      {},
      h("td", { class: "corner" }),
      Array.from({ length: step.window }, (_, j) =>
        h("th", { scope: "col", class: "col", dataset: { link: `col:${j}` } }, `col ${j}`),
      ),
    );
    const rows = w.levels.map((cells, l) =>
      h(
        "tr",
        {},
        h("th", { scope: "row" }, jacobi ? "guess block" : `level ${l}${l === 0 && w.full ? " (oldest, drops)" : ""}`),
        cells.map((c) => windowCell(run, c)),
      ),
    );
    rows.push(
      h(
        "tr",
        { class: "new-row" },
        h("th", { scope: "row" }, jacobi ? "model's output" : "new level ▸ (model's output)"),
        w.fresh.map((c) => windowCell(run, c, "win new")),
      ),
    );
    const wide =
      step.window > 10 ? ` The window has ${step.window} columns: scroll it sideways (Tab to it, then ← →).` : "";
    return h(
      "div",
      {},
      frame(
        title,
        muted(
          `x = `,
          tok(run, step.input_token),
          `, the last accepted token, at output position `,
          `#${run.outputIndex(step.position)}.`,
          L < N - 1 && !jacobi ? " Warm-up: no n-gram is complete yet." : "",
          k > step.index ? ` (${Lade.raceWords.lastStep(run, "parallel", step.index)})` : "",
          wide,
        ),
        // the summary is the table's caption for screen readers and a line above its scroll box for the eye (a caption
        // inside a box that scrolls sideways would scroll out of sight on a phone)
        h("p", { class: "muted summary", "aria-hidden": "true" }, summary),
        scroller(
          `window of step ${step.index}`,
          h("table", { class: "grid" }, h("caption", { class: "sr-only" }, summary), head, rows),
        ),
        legends.window(),
      ),
    );
  };

  // the last steps the trajectories show: ten in the page, three on a slide (an embed), read from the back row
  const TRAJECTORY_STEPS = 10,
    TRAJECTORY_STEPS_ZOOMED = 3;

  views["trajectory-view"] = ({ run, k, compact }) => {
    const upto = run.clock("parallel", k),
      back = (compact ? TRAJECTORY_STEPS_ZOOMED : TRAJECTORY_STEPS) - 1,
      steps = run.parallel.steps.slice(Math.max(1, upto - back), upto + 1).filter((s) => s.new_level.length);
    if (!steps.length || upto < 1) {
      return h(
        "div",
        {},
        frame(
          "Trajectories",
          note(
            run.method === "lookahead" || run.method === "jacobi"
              ? "The trajectories start at step 1, the first step with guesses."
              : `${run.laneName("parallel")} decoding keeps no trajectories.`,
          ),
        ),
      );
    }
    const positions = new Set();
    const cells = steps.map((s) => {
      const w = run.window(s),
        kept = new Map(s.accepted.map((t, i) => [s.position + 1 + i, t]));
      for (const c of w.fresh) positions.add(c.pos);
      for (const pos of kept.keys()) positions.add(pos);
      return { s, fresh: new Map(w.fresh.map((c) => [c.pos, c])), kept };
    });
    const cols = [...positions].sort((a, b) => a - b),
      span = Array.from({ length: cols[cols.length - 1] - cols[0] + 1 }, (_, i) => cols[0] + i);
    const head = h(
      "tr",
      {},
      h("th", { scope: "col" }, "output token #"),
      span.map((pos) => h("th", { scope: "col" }, String(run.outputIndex(pos)))),
    );
    const last = steps[steps.length - 1];
    const rows = cells.flatMap(({ s, fresh, kept }) => [
      h(
        "tr",
        { class: "guess-row" },
        h("th", { scope: "row" }, `step ${s.index} guesses`),
        span.map((pos) => {
          const c = fresh.get(pos);
          if (!c) return h("td", {});
          return h(
            "td",
            {
              class: `${c.right ? "right" : "wrong"}${s === last ? " now" : ""}`,
              title: c.right ? "right guess" : "wrong guess",
            },
            h("b", { class: "icon", "aria-hidden": "true" }, c.right ? "✓" : "✗"),
            tok(run, c.token, "", 6),
            sr(c.right ? " right" : " wrong"),
          );
        }),
      ),
      h(
        "tr",
        { class: "kept-row" },
        h("th", { scope: "row" }, `step ${s.index} kept`),
        span.map((pos) =>
          kept.has(pos)
            ? h(
                "td",
                { class: "kept", title: "accepted by this step" },
                tok(run, /** @type {number} */ (kept.get(pos)), "", 6),
              )
            : h("td", {}),
        ),
      ),
    ]);
    // to a screen reader, step by step: what each step guessed, where, whether right, and what it kept (the grid
    // of mostly empty cells is for the eye)
    const said = h(
      "ul",
      { class: "sr-only" },
      cells.map(({ s, fresh, kept }) =>
        h(
          "li",
          {},
          `Step ${s.index} guessed `,
          [...fresh.values()]
            .sort((a, b) => a.pos - b.pos)
            .map(
              (c) =>
                `#${run.outputIndex(c.pos)} “${Lade.dom.spoken(run.text(c.token))}” (${c.right ? "right" : "wrong"})`,
            )
            .join(", "),
          "; it kept ",
          [...kept.entries()]
            .map(([pos, t]) => `#${run.outputIndex(pos)} “${Lade.dom.spoken(run.text(t))}”`)
            .join(", "),
          ".",
        ),
      ),
    );
    const box = scroller(
      "trajectories of the last steps",
      said,
      h(
        "table",
        { class: "traj", "aria-hidden": "true" },
        h("caption", { class: "sr-only" }, `New guesses and kept tokens of steps ${steps[0].index} to ${last.index}.`),
        head,
        rows,
      ),
    );
    // the pane opens on the step the page talks about: its newest guesses in view, not the oldest positions
    requestAnimationFrame(() => {
      const now = /** @type {HTMLElement | null} */ (box.querySelector("td.now"));
      if (now && box.scrollWidth > box.clientWidth) box.scrollLeft = Math.max(0, now.offsetLeft - 90);
    });
    const tally = run.guessTally();
    return h(
      "div",
      {},
      frame(
        "Trajectories",
        muted(
          "Each step's new guesses placed at the output positions they guess for, and ",
          `the tokens each step kept. Over this run ${tally.right} of its ${tally.made} new guesses (${Lade.dom.pct(tally.right / Math.max(tally.made, 1))}) `,
          "turned out right for their position: rare, and each is worth a token only if the pool hands it to verification in time.",
        ),
        compact && upto > TRAJECTORY_STEPS_ZOOMED
          ? muted(
              `Zoomed in: steps ${steps[0].index} to ${last.index}, the last ${plural(steps.length, "step")} `,
              `(the app shows the last ${TRAJECTORY_STEPS}).`,
            )
          : null,
        box,
        h(
          "div",
          { class: "legend" },
          key("right guess", "right", "✓"),
          key("wrong guess", "wrong", "✗"),
          key("kept by the step", "kept"),
        ),
      ),
    );
  };

  // -- the pool ---------------------------------------------------------------------------------------------------
  /** @param {Run} run @param {number} first @param {number[]} cont @param {string} cls @param {string} link */
  const chip = (run, first, cont, cls, link) =>
    h(
      "span",
      { class: `chip ${cls}`, dataset: { link } },
      tok(run, first, "k"),
      cont.map((t) => tok(run, t)),
      cls === "fresh" ? sr(" (new)") : cls === "evicted" ? sr(" (evicted)") : null,
    );

  /** What a lookahead step adds to the pool, by the run's pool policy (lade_core/lookahead.py, step 4). */
  const ADDED_FROM = {
    paper: "the window's full columns",
    output: "the window's full columns, then the n-grams its accepted tokens complete in the text",
    prompt: "the window's full columns, then the n-grams its accepted tokens complete in the text",
  };

  views["pool-view"] = ({ run, k, compact }) => {
    const step = run.step(k),
      d = run.derived(k);
    if (run.method !== "lookahead") {
      return h(
        "div",
        {},
        frame(
          "The n-gram pool",
          note(
            run.method === "jacobi"
              ? "Jacobi decoding keeps no pool: it throws each step's guesses away."
              : `${run.laneName("parallel")} decoding keeps no pool: its draft comes from ${DRAFTS[run.method] || "elsewhere"}.`,
          ),
        ),
      );
    }
    if (!step || !d.pool) return h("div", {}, frame("The n-gram pool", note("No step yet.")));
    if (step.kind === "prefill" && !step.ngrams_added.length) {
      return h(
        "div",
        {},
        frame(
          "The n-gram pool",
          note(
            "Step 0 reads the prompt; the pool is empty until the window's first columns are complete",
            run.config.pool === "paper" ? "." : " or the text's first n-grams arrive.",
          ),
        ),
      );
    }
    const x = step.input_token,
      pool = d.pool,
      found = step.candidates.length;
    const shownRows = compact ? pool.rows.filter((r) => r.key === x).slice(0, 1) : pool.rows;
    const rows = shownRows.map((row) =>
      h(
        "tr",
        { class: row.key === x ? "lookup" : "" },
        h("th", { scope: "row" }, row.key === x ? "▸ lookup key x " : "key ", tok(run, row.key)),
        h(
          "td",
          {},
          row.items.length
            ? row.items.map((it) =>
                chip(run, row.key, it.cont, it.new ? "fresh" : "", `ngram:${[row.key, ...it.cont].join(",")}`),
              )
            : h("span", { class: "muted" }, "nothing stored"),
          row.evicted.map((c) => chip(run, row.key, c, "evicted", "")),
        ),
      ),
    );
    const lookup = pool.rows.find((r) => r.key === x);
    const held = lookup ? lookup.items.length : 0;
    const said =
      step.kind === "prefill"
        ? `The prompt gave ${plural(step.ngrams_added.length, "n-gram")}.`
        : `Looking up x = “${Lade.dom.cellText(run.text(x), 0)}” before the forward pass found ${plural(found, "candidate")}; then the step ` +
          `added ${plural(step.ngrams_added.length, "n-gram")} (${ADDED_FROM[/** @type {keyof typeof ADDED_FROM} */ (run.config.pool)] || ADDED_FROM.paper}; one already held counts again and moves to the front) ` +
          `and evicted ${step.ngrams_evicted.length}` +
          (held !== found ? `, so the key now holds ${held}.` : ".");
    return h(
      "div",
      {},
      frame(
        "The n-gram pool",
        muted(
          `After step ${step.index}: ${plural(pool.size, "n-gram")} under `,
          `${plural(pool.keys, "key")} (at most G=${run.config.guess} per key; the least recently added goes first). ${said}`,
        ),
        scroller(
          `pool after step ${step.index}`,
          h(
            "table",
            { class: "pool" },
            h(
              "caption",
              { class: "sr-only" },
              `The keys this step read or changed and the n-grams each holds after it. ${said}`,
            ),
            rows,
          ),
        ),
        pool.more_keys + pool.rows.length - shownRows.length > 0
          ? muted(
              `… and ${plural(pool.more_keys + pool.rows.length - shownRows.length, "more key")} touched this step.`,
            )
          : null,
        h(
          "div",
          { class: "legend" },
          key("new this step", "fresh"),
          key("evicted this step (struck through)", "evicted"),
          key("the lookup key x", "lookup", "▸"),
        ),
      ),
    );
  };

  // -- verification ---------------------------------------------------------------------------------------------
  /** @param {number} i @param {number} matched @param {number} length */
  function verdict(i, matched, length) {
    if (i < matched) return ["right", "✓", "accepted: the model predicts the same token here"];
    if (i === matched && i < length) return ["wrong", "✗", "rejected: the model predicts another token here"];
    return ["unchecked", "·", "not checked: an earlier token was rejected"];
  }

  /** @param {Run} run @param {Step} step @param {number} c @param {number} width */
  function candidateRows(run, step, c, width) {
    const cand = step.candidates[c],
      pred = step.predictions[c],
      m = step.match_lengths[c];
    const won = c === step.winner,
      bonus = won && run.hasBonus(step);
    const pad = (/** @type {HTMLTableCellElement[]} */ cells, /** @type {number} */ n) => [
      ...cells,
      ...Array.from({ length: n - cells.length }, () => h("td", { class: "none" })),
    ];
    const guessCells = cand.map((t, i) => {
      const [cls, icon, title] = verdict(i, m, cand.length);
      return h(
        "td",
        { class: `ver ${cls}`, title },
        h("b", { class: "icon", "aria-hidden": "true" }, icon),
        tok(run, t),
        sr(` ${cls}`),
      );
    });
    const predCells = pred.map((t, i) =>
      h(
        "td",
        {
          class: `pred ${won && i === m && bonus ? "bonus" : ""}`,
          title: i === 0 ? "the model's token after x" : `the model's token after draft token ${i - 1}`,
        },
        won && i === m && bonus ? h("b", { class: "icon", "aria-hidden": "true" }, "+") : null,
        tok(run, t),
      ),
    );
    const copy = run.isCopy(step, c);
    const name = step.kind === "jacobi" ? "the guess block" : copy ? "prompt lookup's copy" : `candidate ${c + 1}`;
    return [
      h(
        "tr",
        { class: `${won ? "winner" : ""}${copy ? " copied" : ""}`, dataset: { link: `cand:${c}` } },
        h(
          "th",
          { rowspan: 2, scope: "rowgroup" },
          won ? "★ " : "",
          name,
          h("br"),
          h("span", { class: "muted" }, `${m} of ${cand.length} matched`),
        ),
        h("td", { class: "muted" }, "draft"),
        pad(guessCells, width),
        h("td", {}),
      ),
      h(
        "tr",
        { class: `${won ? "winner" : ""}${copy ? " copied" : ""}`, dataset: { link: `cand:${c}` } },
        h("td", { class: "muted" }, "model says"),
        pad(predCells, width + 1),
      ),
    ];
  }

  /** @param {Run} run @param {Step} step */
  function acceptedLine(run, step) {
    const kept = run.fromCandidate(step),
      bonus = run.hasBonus(step);
    const chips = step.accepted.map((t, i) =>
      h(
        "span",
        {
          class: `chip ${i < kept ? "right" : "bonus"}`,
          title:
            i < kept
              ? "a draft token the model agreed with"
              : step.draws.length
                ? "drawn by the model"
                : "the model's own next token",
        },
        h("b", { class: "icon", "aria-hidden": "true" }, i < kept ? "✓" : "+"),
        tok(run, t, "", 14),
      ),
    );
    const from =
      step.kind === "jacobi"
        ? "guess block"
        : run.isCopy(step, step.winner)
          ? "copy prompt lookup made of the text"
          : "winning candidate";
    const parts = [
      kept ? `${kept} from the ${from}` : null,
      bonus ? (step.draws.length ? "1 drawn by the model" : "the model's own next token") : null,
    ].filter(Boolean);
    const cut = !bonus
      ? " The run ended inside the match (end of text or of the token budget), so no bonus token follows."
      : "";
    return h(
      "div",
      { class: "accepted" },
      "Accepted this step: ",
      chips,
      h("span", { class: "muted" }, ` (${plural(step.accepted.length, "token")}: ${parts.join(" + ")}).${cut}`),
    );
  }

  /** @param {Run} run @param {Step} step */
  function drawsTable(run, step) {
    const rows = step.draws.map((d, n) =>
      h(
        "tr",
        { class: d.accepted ? "right" : "wrong" },
        h("td", {}, String(n + 1)),
        h("td", {}, `c${d.candidate + 1}`),
        h("td", {}, String(d.position)),
        h("td", {}, tok(run, d.token, "", 14)),
        h("td", {}, `${(100 * d.prob).toFixed(2)}%`),
        h("td", {}, d.uniform.toFixed(3)),
        h(
          "td",
          { class: `ver ${d.accepted ? "right" : "wrong"}` },
          h("b", { class: "icon", "aria-hidden": "true" }, d.accepted ? "✓" : "✗"),
          d.accepted ? "u < p: accepted" : "u ≥ p: rejected",
        ),
        h("td", {}, `${(100 * d.residual_mass).toFixed(2)}%`),
      ),
    );
    return scroller(
      "the draws of this step",
      h(
        "table",
        { class: "verify draws" },
        h(
          "caption",
          { class: "sr-only" },
          "Each draft token offered, its probability p, the uniform draw u and the verdict.",
        ),
        h(
          "tr",
          {},
          ["offer", "candidate", "position", "token", "p", "u", "verdict", "mass left before"].map((t) =>
            h("th", { scope: "col" }, t),
          ),
        ),
        rows,
      ),
    );
  }

  /** The verdict in words (the table's caption and the live region's news). @param {Run} run @param {Step} step */
  function verifySummary(run, step) {
    const g = step.candidates.length,
      jacobi = step.kind === "jacobi";
    const outcome =
      step.winner >= 0
        ? `${jacobi ? "The guess block" : run.isCopy(step, step.winner) ? "Prompt lookup's copy" : `Candidate ${step.winner + 1}`} matched ${plural(step.match_lengths[step.winner], "token")}`
        : jacobi
          ? "The block's first guess did not match"
          : "No candidate matched";
    return (
      `Step ${step.index} checked ${jacobi ? "the guess block" : plural(g, "candidate")}. ${outcome}; the step emitted ` +
      `${plural(step.accepted.length, "token")}.`
    );
  }

  views["verify-view"] = ({ run, k, compact }) => {
    const step = run.step(k),
      title = "Verification";
    if (!step) return h("div", {}, frame(title, note("No step recorded yet.")));
    if (step.kind === "prefill") {
      return h(
        "div",
        {},
        frame(
          title,
          note(
            "Step 0 reads the prompt: its only output is the first new token ",
            step.accepted.length ? tok(run, step.accepted[0]) : "",
            ".",
          ),
        ),
      );
    }
    const g = step.candidates.length,
      jacobi = step.kind === "jacobi";
    const copied = step.copied || 0;
    const source = jacobi
      ? "; the guess block is verified as the step's one candidate, in the same forward pass."
      : run.method === "lookahead"
        ? `; ${plural(g - copied, "candidate")} from the pool (at most G=${step.guess}` +
          `${step.guess !== run.config.guess ? `, adaptive: the run's G is ${run.config.guess}` : ""})` +
          (copied
            ? ` and ${plural(copied, "copy", "copies")} of the text by prompt lookup (up to ${run.config.lookup} tokens; ` +
              "this run is lookahead with prompt lookup's candidates, not the paper's method)."
            : ".")
        : `; ${plural(g, "draft")} from ${DRAFTS[run.method] || "the drafter"}.`;
    const head = muted(
      `Step ${step.index}: x = `,
      tok(run, step.input_token),
      source,
      k > step.index ? ` ${Lade.raceWords.lastStep(run, "parallel", step.index)}` : "",
    );
    if (!g) {
      const why =
        step.kind === "warmup" && !step.guess
          ? "verification waits for the window"
          : step.guess === 0 && run.method === "lookahead"
            ? "the adaptive sizes skipped verification this step"
            : run.method === "lookahead"
              ? "the pool holds no n-gram that starts with x"
              : "the drafter proposed nothing";
      return h(
        "div",
        {},
        frame(
          title,
          head,
          note(`No candidates: ${why}, so the step emits only the model's next token.`),
          acceptedLine(run, step),
        ),
      );
    }
    const width = Math.max(...step.candidates.map((c) => c.length));
    const cols = h(
      "tr",
      {},
      h("td", { class: "corner" }),
      h("td", { class: "corner" }),
      Array.from({ length: width }, (_, i) => h("th", { scope: "col" }, `draft ${i}`)),
      h("th", { scope: "col" }, "after"),
    );
    const order = step.candidates
      .map((_, c) => c)
      .sort((a, b) => (b === step.winner ? 1 : 0) - (a === step.winner ? 1 : 0));
    const shown = compact ? order.slice(0, 2) : step.candidates.map((_, c) => c);
    const rows = shown.flatMap((c) => candidateRows(run, step, c, width));
    const more = g - shown.length;
    const said = verifySummary(run, step);
    return h(
      "div",
      {},
      frame(
        title,
        head,
        h("p", { class: "muted summary", "aria-hidden": "true" }, said),
        scroller(
          `candidates of step ${step.index}`,
          h("table", { class: "verify" }, h("caption", { class: "sr-only" }, said), cols, rows),
        ),
        more > 0 ? muted(`… and ${plural(more, "more candidate")} (the explorer shows them all).`) : null,
        step.draws.length
          ? [
              drawsTable(run, step),
              muted(
                "Sampling rule: a draft token is accepted with probability p; after a ",
                "rejection the token is removed and the rest renormalised; if no offer survives, the token is drawn from what is left. ",
                "The output distribution is exactly the model's.",
              ),
            ]
          : null,
        acceptedLine(run, step),
        legends.verify(),
      ),
    );
  };

  return { windowSummary, verifySummary };
})();
window.Lade.stepViews = LadeStepViews;
