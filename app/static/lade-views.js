// The views of one step, each drawn from the run alone: Lade.views[id](ctx) with ctx = {run, k, node, stage}.
//
// ids are the page's element ids (outside checks rely on them): ar-output, la-output, counter, progress-plot,
// window-view, trajectory-view, pool-view, pool-plot, verify-view, mask-view. Colours follow one legend (Lade.COLORS;
// the CSS classes right / wrong / bonus / unchecked / win / ver) and each colour is paired with an icon or an outline.
// Sentences that state a number read it off the run shown.
(() => {
  "use strict";
  const Lade = (window.Lade = window.Lade || {});
  const { h, fill, tok, plural, fmt } = Lade;
  const views = (Lade.views = {});

  const note = (...children) => h("div", { class: "note" }, ...children);
  const muted = (...children) => h("div", { class: "muted" }, ...children);
  const key = (label, cls, icon) => h("span", { class: `key ${cls}` }, icon ? h("b", {}, icon) : null, label);

  Lade.legends = {
    tokens: () => h("div", { class: "legend" }, key("step that accepted several tokens", "multi"),
      key("tokens of the step shown", "now"), "Whitespace: ␣ space, ↵ newline, ⇥ tab; ⟨U+…⟩ an invisible character."),
    window: () => h("div", { class: "legend" }, key("right guess (the final text has it there)", "right", "✓"),
      key("changed since the last guess for that position", "changed", "•"), key("new level: the model's output", "win new"),
      "#n: the output token the cell guesses (n = 0 is the first new token)."),
    verify: () => h("div", { class: "legend" }, key("accepted", "right", "✓"), key("rejected", "wrong", "✗"),
      key("not checked", "unchecked", "·"), key("the model's own next token (bonus)", "bonus", "+")),
    mask: () => h("div", { class: "legend" }, key("sees x", "m-x"), key("sees a window token", "m-win"),
      key("sees a candidate token", "m-ver"), key("hidden", "m-off"), "Everything also sees the committed text (the KV cache)."),
  };

  // -- side by side ----------------------------------------------------------------------------------------------
  function outputPanel(ctx, lane) {
    const { run, k, node } = ctx;
    const cache = (node._out = node._out && node._out.run === run && node._out.version === run.version ? node._out
      : buildOutput(run, lane, node));
    const upto = run.clock(lane, k), finished = run.finished(lane, k);
    for (const span of cache.spans) {
      const s = +span.dataset.step;
      span.hidden = s > upto;
      span.classList.toggle("now", s === upto && k <= upto && !finished);
    }
    const n = run.numbers(lane, k);
    cache.status.textContent = !run.t[lane].steps.length ? "not started yet"
      : finished ? `finished at step ${run.t[lane].steps.length - 1} (${run.t[lane].stop_reason})`
      : `step ${upto}: ${plural(n.tokens, "token")}`;
    if (cache.box.scrollHeight - cache.box.scrollTop - cache.box.clientHeight < 60) cache.box.scrollTop = cache.box.scrollHeight;
  }

  function buildOutput(run, lane, node) {
    const steps = run.t[lane].steps, spans = [];
    const sizes = steps.map((s) => s.accepted.length);
    steps.forEach((s, i) => s.accepted.forEach((id) => {
      const multi = lane === "parallel" && sizes[i] > 1;
      const span = tok(run, id, `${multi ? "multi " : ""}${lane === "parallel" ? "g" + (i % 2) : ""}`, 0, true);
      span.dataset.step = i;
      span.title = `step ${i}: ${plural(sizes[i], "token")} · token ${id}`;
      spans.push(span);
    }));
    const status = h("span", { class: "muted" });
    const box = h("div", { class: "tok-text" }, spans);
    const title = lane === "baseline" ? (run.greedy ? "Autoregressive (greedy)" : `Autoregressive (sampling, T=${run.t.sampling.temperature})`)
      : run.method === "jacobi" ? "Jacobi decoding" : "Lookahead decoding";
    fill(node, h("div", { class: `panel lane-${lane}` }, h("div", { class: "panel-head" }, h("b", {}, title), " ", status),
      box, lane === "parallel" ? Lade.legends.tokens() : null));
    return { run, version: run.version, spans, status, box };
  }

  views["ar-output"] = (ctx) => outputPanel(ctx, "baseline");
  views["la-output"] = (ctx) => outputPanel(ctx, "parallel");

  views.counter = ({ run, k, node }) => {
    const rows = ["parallel", "baseline"].map((lane) => {
      const n = run.numbers(lane, k);
      return h("tr", { class: `lane-${lane}` }, h("th", {}, run.laneName(lane)), h("td", {}, `steps=${n.steps}`),
        h("td", {}, `tokens=${n.tokens}`), h("td", { class: "big" }, `tokens/step=${fmt(n.perStep)}`),
        h("td", {}, `time=${fmt(n.seconds)}s`), h("td", {}, `(${fmt(n.perSecond, 1)} tok/s)`));
    });
    fill(node, h("div", { class: "counter" }, muted(`step ${k} of ${run.lastStep()} (step 0 reads the prompt; one step = one forward pass)`),
      h("table", {}, rows)));
  };

  function cumulative(steps) {
    let total = 0;
    return steps.map((s, i) => [i, (total += s.accepted.length)]);
  }

  views["progress-plot"] = ({ run, k, node }) => {
    if (!node._chart || node._chart.run !== run || node._chart.version !== run.version) {
      const series = ["parallel", "baseline"].map((lane) => ({ name: run.laneName(lane).toLowerCase(),
        color: Lade.COLORS[lane], points: cumulative(run.t[lane].steps) }));
      node._chart = { run, version: run.version, chart: Lade.lineChart(node, { series, xLabel: "step", yLabel: "tokens",
        title: "Tokens written against steps (forward passes)", height: 190,
        hover: (x) => series.map((s) => `${s.name}: ${(s.points[Math.min(x, s.points.length - 1)] || [0, 0])[1]}`).join(" · ") + ` at step ${x}` }) };
    }
    node._chart.chart.mark(k);
  };

  // -- the window -------------------------------------------------------------------------------------------------
  // What each step guessed for each absolute position: its window levels and its new level.
  function guesses(step) {
    const out = new Map(), L = step.levels_before.length, p = step.position;
    step.levels_before.forEach((level, l) => level.forEach((t, j) => out.set(p + 1 + l + j, t)));
    step.new_level.forEach((t, j) => out.set(p + L + 1 + j, t));
    return out;
  }

  function windowCell(run, t, pos, earlier, cls = "") {
    const right = run.finalAt(pos) === t, changed = earlier !== undefined && earlier !== t;
    return h("td", { class: `cell ${cls} ${right ? "right" : ""}`, title: `guesses output token #${pos - run.promptLength}` +
        (right ? " · right: the final text has it there" : "") + (changed ? ` · changed from ${JSON.stringify(run.text(earlier))}` : ""),
      dataset: { pos } },
      right ? h("b", { class: "icon" }, "✓") : null, changed ? h("b", { class: "dot" }, "•") : null,
      tok(run, t), h("sub", {}, `#${pos - run.promptLength}`));
  }

  views["window-view"] = ({ run, k, node, stage }) => {
    const step = run.step(k);
    if (!step || step.kind === "prefill") {
      return fill(node, note("Step 0 reads the prompt in one causal forward pass: no window yet. From step 1 each step carries ",
        run.method === "jacobi" ? "the block of guessed tokens." : "the 2D window of guesses (level 0 drawn from the prompt's tokens)."));
    }
    if (!step.levels_before.length) {
      return fill(node, note(`Step ${step.index} fed no window: the adaptive sizes paused the lookahead branch because its `,
        "guesses were not paying for the tokens they cost on this device. Its n-gram pool and verification still work."));
    }
    const prev = step.index > 1 ? guesses(run.parallel.steps[step.index - 1]) : new Map();
    const L = step.levels_before.length, p = step.position, W = step.window, N = run.config.ngram;
    const head = h("tr", {}, h("th", {}), Array.from({ length: W }, (_, j) => h("th", { class: "col", dataset: { link: `col:${j}` } }, `col ${j}`)));
    const jacobi = step.kind === "jacobi";
    const rows = step.levels_before.map((level, l) => h("tr", {}, h("th", {},
      jacobi ? "guess block" : `level ${l}${l === 0 && L === N - 1 ? " (oldest, drops)" : ""}`),
      level.map((t, j) => { const c = windowCell(run, t, p + 1 + l + j, prev.get(p + 1 + l + j)); c.dataset.link = `col:${j}`; return c; })));
    rows.push(h("tr", { class: "new-row" }, h("th", {}, jacobi ? "model's output" : "new level (model's output)"),
      step.new_level.map((t, j) => { const c = windowCell(run, t, p + L + 1 + j, prev.get(p + L + 1 + j), "win new"); c.dataset.link = `col:${j}`; return c; })));
    const right = step.new_level.filter((t, j) => run.finalAt(p + L + 1 + j) === t).length;
    const what = `Step ${step.index}: x = `;
    const said = jacobi
      ? [` at position ${p}. The block guesses the next ${W} tokens; the model's output after each guess token is the `,
        `next guess, ${right} of ${W} of them already right.`]
      : step.kind === "warmup"
        ? [` at position ${p}. Warm-up: the window has ${L} of its ${N - 1} levels, so no n-gram is complete yet.`]
        : [` at position ${p}. Each column, read top to bottom and then the new level, spells a ${N}-gram that goes `,
          `into the pool under its first token (${W} n-grams this step). ${right} of the ${W} new guesses are right.`];
    fill(node, muted(what, tok(run, step.input_token), ...said, k > step.index ? ` (finished at step ${step.index}.)` : ""),
      h("div", { class: "scroll" }, h("table", { class: "grid" }, head, rows)), Lade.legends.window());
    stage && stage.linkHover(node);
  };

  views["trajectory-view"] = ({ run, k, node, stage }) => {
    const upto = run.clock("parallel", k), steps = run.parallel.steps.slice(Math.max(1, upto - 9), upto + 1)
      .filter((s) => s.new_level.length || s.accepted.length);
    if (!steps.length || upto < 1) return fill(node, note("The trajectory starts at step 1, the first step with guesses."));
    const cells = [], positions = new Set();
    for (const s of steps) {
      const L = s.levels_before.length;
      const guess = new Map(s.new_level.map((t, j) => [s.position + L + 1 + j, t]));
      const kept = new Map(s.accepted.map((t, i) => [s.position + 1 + i, t]));
      cells.push({ s, guess, kept });
      for (const pos of [...guess.keys(), ...kept.keys()]) positions.add(pos);
    }
    const cols = [...positions].sort((a, b) => a - b), first = cols[0], last = cols[cols.length - 1];
    const span = Array.from({ length: last - first + 1 }, (_, i) => first + i);
    const head = h("tr", {}, h("th", {}, "output token #"), span.map((pos) => h("th", {}, String(pos - run.promptLength))));
    const rows = [];
    for (const { s, guess, kept } of cells) {
      rows.push(h("tr", { class: "guess-row" }, h("th", {}, `step ${s.index} guesses`), span.map((pos) => {
        if (!guess.has(pos)) return h("td", {});
        const t = guess.get(pos), right = run.finalAt(pos) === t;
        return h("td", { class: right ? "right" : "wrong", title: right ? "right guess" : "wrong guess" },
          h("b", { class: "icon" }, right ? "✓" : "✗"), tok(run, t, "", 6));
      })));
      rows.push(h("tr", { class: "kept-row" }, h("th", {}, `step ${s.index} kept`), span.map((pos) =>
        kept.has(pos) ? h("td", { class: "kept", title: "accepted by this step" }, tok(run, kept.get(pos), "", 6)) : h("td", {}))));
    }
    fill(node, muted("Trajectory: each step's new guesses placed at the output positions they guess for (columns), and the ",
      "tokens the step kept. Right guesses often show up several steps before decoding reaches them."),
      h("div", { class: "scroll traj-wrap" }, h("table", { class: "traj" }, head, rows)),
      h("div", { class: "legend" }, key("right guess", "right", "✓"), key("wrong guess", "wrong", "✗"), key("kept by the step", "kept")));
  };

  // -- the pool ---------------------------------------------------------------------------------------------------
  function ngramChip(run, first, cont, cls, link) {
    return h("span", { class: `chip ${cls}`, dataset: { link } }, tok(run, first, "k"), cont.map((t) => tok(run, t)));
  }

  views["pool-view"] = ({ run, k, node, stage }) => {
    const step = run.step(k), d = run.derived(k);
    if (run.method !== "lookahead") return fill(node, note("Jacobi decoding keeps no pool: it throws each step's guesses away."));
    if (!step || !d.pool) return fill(node, note("No step yet."));
    if (step.kind === "prefill" && !step.ngrams_added.length) {
      return fill(node, note("Step 0 reads the prompt; the pool is empty until the window's first columns are complete",
        run.config.pool === "paper" ? "." : " or the text's first n-grams arrive."));
    }
    const x = step.input_token, found = step.candidates.length, pool = d.pool;
    const rows = pool.rows.map((row) => h("tr", { class: row.key === x ? "lookup" : "" },
      h("th", {}, row.key === x ? "lookup key x " : "key ", tok(run, row.key)),
      h("td", {}, row.items.length ? row.items.map((it) => ngramChip(run, row.key, it.cont, it.new ? "fresh" : "",
        `ngram:${[row.key, ...it.cont].join(",")}`)) : h("span", { class: "muted" }, "nothing stored"),
        row.evicted.map((c) => ngramChip(run, row.key, c, "evicted", "")))));
    const added = step.ngrams_added.length, evicted = step.ngrams_evicted.length;
    fill(node, muted(`After step ${step.index}: ${plural(pool.size, "n-gram")} under ${plural(pool.keys, "key")} (at most `,
      `G=${run.config.guess} per key; the least recently used goes first). `,
      step.kind === "prefill" ? `The prompt gave ${plural(added, "n-gram")}. `
        : [`Looking up x = `, tok(run, x), ` found ${plural(found, "candidate")} for this step; the step added `,
          `${plural(added, "n-gram")} (new ones marked) and evicted ${evicted}.`]),
      h("div", { class: "scroll" }, h("table", { class: "pool" }, rows)),
      pool.more_keys > 0 ? muted(`… and ${plural(pool.more_keys, "more key")} touched this step.`) : null,
      h("div", { class: "legend" }, key("new this step", "fresh"), key("evicted this step", "evicted"), key("lookup key x", "lookup")));
    stage && stage.linkHover(node);
  };

  views["pool-plot"] = ({ run, k, node }) => {
    if (run.method !== "lookahead") {
      node._chart = null;
      return fill(node, note("No pool in Jacobi decoding."));
    }
    if (!node._chart || node._chart.run !== run || node._chart.version !== run.version) {
      const points = run.d.steps.map((d, i) => [i, d.pool ? d.pool.size : 0]);
      node._chart = { run, version: run.version, chart: Lade.lineChart(node, { series: [{ name: "pool size",
        color: Lade.COLORS.verify, points }], xLabel: "step", yLabel: "n-grams", title: "n-grams in the pool after each step",
        height: 170, hover: (x) => `step ${x}: ${(points[x] || [0, 0])[1]} n-grams` }) };
    }
    node._chart.chart.mark(run.clock("parallel", k));
  };

  // -- verification ---------------------------------------------------------------------------------------------
  function verdict(i, matched, checkedTo) {
    if (i < matched) return ["right", "✓", "accepted: the model predicts the same token here"];
    if (i === matched && i < checkedTo) return ["wrong", "✗", "rejected: the model predicts another token here"];
    return ["unchecked", "·", "not checked: an earlier token was rejected"];
  }

  function candidateRows(run, step, c) {
    const cand = step.candidates[c], pred = step.predictions[c], m = step.match_lengths[c];
    const won = c === step.winner, kept = run.fromCandidate(step), bonus = won && run.hasBonus(step);
    const guessCells = cand.map((t, i) => {
      const [cls, icon, title] = verdict(i, m, cand.length);
      return h("td", { class: `ver ${cls}`, title }, h("b", { class: "icon" }, icon), tok(run, t));
    });
    const predCells = pred.map((t, i) => h("td", { class: `pred ${won && i === m && bonus ? "bonus" : ""}`,
      title: i === 0 ? "the model's token after x" : `the model's token after draft token ${i - 1}` },
      won && i === m && bonus ? h("b", { class: "icon" }, "+") : null, tok(run, t)));
    const name = step.kind === "jacobi" ? "the guess block" : `candidate ${c + 1}`;
    return [h("tr", { class: won ? "winner" : "", dataset: { link: `cand:${c}` } },
      h("th", { rowspan: 2 }, won ? "★ " : "", name, h("br"), h("span", { class: "muted" }, `${m} of ${cand.length} matched`)),
      h("td", { class: "muted" }, "draft"), guessCells, h("td", {})),
      h("tr", { class: won ? "winner" : "", dataset: { link: `cand:${c}` } }, h("td", { class: "muted" }, "model says"), predCells)];
  }

  function acceptedLine(run, step) {
    const kept = run.fromCandidate(step), bonus = run.hasBonus(step);
    const chips = step.accepted.map((t, i) => h("span", { class: `chip ${i < kept ? "right" : "bonus"}`,
      title: i < kept ? "a draft token the model agreed with" : step.draws.length ? "drawn by the model" : "the model's own next token" },
      h("b", { class: "icon" }, i < kept ? "✓" : "+"), tok(run, t, "", 14)));
    const parts = [kept ? `${kept} from the ${step.kind === "jacobi" ? "guess block" : "winning candidate"}` : null,
      bonus ? (step.draws.length ? "1 drawn by the model" : "the model's own next token") : null].filter(Boolean);
    const cut = !bonus ? " The run ended inside the match (end of text or of the token budget), so no bonus token follows." : "";
    return h("div", { class: "accepted" }, "Accepted this step: ", chips,
      h("span", { class: "muted" }, ` (${plural(step.accepted.length, "token")}: ${parts.join(" + ")}).${cut}`));
  }

  function drawsTable(run, step) {
    const rows = step.draws.map((d, n) => h("tr", { class: d.accepted ? "right" : "wrong" }, h("td", {}, String(n + 1)),
      h("td", {}, `c${d.candidate + 1}`), h("td", {}, String(d.position)), h("td", {}, tok(run, d.token, "", 14)),
      h("td", {}, `${(100 * d.prob).toFixed(2)}%`), h("td", {}, d.uniform.toFixed(3)),
      h("td", { class: `ver ${d.accepted ? "right" : "wrong"}` }, h("b", { class: "icon" }, d.accepted ? "✓" : "✗"),
        d.accepted ? "u < p: accepted" : "u ≥ p: rejected"), h("td", {}, `${(100 * d.residual_mass).toFixed(2)}%`)));
    return h("div", { class: "scroll" }, h("table", { class: "verify draws" }, h("tr", {}, ["offer", "candidate", "position",
      "token", "p", "u", "verdict", "mass left before"].map((t) => h("th", {}, t))), rows));
  }

  views["verify-view"] = ({ run, k, node, stage }) => {
    const step = run.step(k);
    if (!step) return fill(node, note("No step recorded yet."));
    if (step.kind === "prefill") {
      return fill(node, note("Step 0 reads the prompt: its only output is the first new token ",
        step.accepted.length ? tok(run, step.accepted[0]) : "", "."));
    }
    const g = step.candidates.length, jacobi = step.kind === "jacobi";
    const head = muted(`Step ${step.index}: x = `, tok(run, step.input_token),
      jacobi ? "; the guess block is verified as the step's one candidate, in the same forward pass."
        : `; ${plural(g, "candidate")} from the pool (at most G=${step.guess}${step.guess !== run.config.guess ? `, adaptive: the run's G is ${run.config.guess}` : ""}).`,
      k > step.index ? ` Finished at step ${step.index}.` : "");
    if (!g) {
      const why = step.kind === "warmup" ? "the pool is still empty (warm-up)" : step.guess === 0 ? "the adaptive sizes skipped verification this step" : "the pool has no n-gram starting with x";
      return fill(node, head, note(`No candidates: ${why}, so the step emits only the model's next token.`), acceptedLine(run, step));
    }
    const cols = h("tr", {}, h("th", {}), h("th", {}), step.candidates[0].map((_, i) => h("th", {}, `draft ${i}`)), h("th", {}, "after"));
    const rows = step.candidates.flatMap((_, c) => candidateRows(run, step, c));
    const kept = run.fromCandidate(step);
    const verdictText = step.winner >= 0
      ? `${jacobi ? "The guess block" : `Candidate ${step.winner + 1}`} wins with ${plural(step.match_lengths[step.winner], "matched token")}.`
      : `${jacobi ? "The first guess" : "No candidate"} matched: the step emits the model's next token only.`;
    fill(node, head, h("div", { class: "scroll" }, h("table", { class: "verify" }, cols, rows)), muted(verdictText),
      step.draws.length ? [drawsTable(run, step), muted("Sampling rule: a draft token is accepted with probability p; after a ",
        "rejection the token is removed and the rest renormalised; if no offer survives, the token is drawn from what is left. ",
        "The output distribution is exactly the model's.")] : null,
      acceptedLine(run, step), Lade.legends.verify());
    if (kept > 0 && stage) stage.linkHover(node);
  };

  // -- the mask ---------------------------------------------------------------------------------------------------
  views["mask-view"] = ({ run, k, node, stage }) => {
    const step = run.step(k), layout = run.layout(k);
    if (!step || !layout) {
      node._mask = null;
      return fill(node, note("Step 0 reads the prompt under an ordinary causal mask; the lookahead mask starts at step 1."));
    }
    const title = muted(`Step ${step.index}'s attention mask: ${layout.size} × ${layout.size} tokens = x, ${layout.levels} window level(s) of `,
      `W=${layout.window}, ${plural(layout.nodes, "verification token")}${step.tree ? " (a token tree: shared prefixes fed once)" : ""}. `,
      "Row = the token that looks, column = the token it may see. This is the matrix the model used.");
    if (node._mask && node._mask.layout === layout) return node.firstChild.replaceWith(title);
    const q = layout.size, bit = Lade.maskBits(layout);
    if (!bit) {
      node._mask = { layout };
      return fill(node, title, note("This layout's bits were left out (the run's masks are over the size budget)."));
    }
    const cell = Math.max(4, Math.min(16, Math.floor(560 / q))), pad = 46, size = pad + q * cell;
    const paths = { 0: "", 1: "", 2: "", off: "" };
    const colorOf = (kind) => (kind === 0 ? 0 : kind === 3 ? 2 : 1);
    for (let r = 0; r < q; r++) for (let c = 0; c < q; c++) {
      const cls = bit(r, c) ? colorOf(layout.kinds[c]) : "off";
      paths[cls] += `M${pad + c * cell},${pad + r * cell}h${cell - 1}v${cell - 1}h${1 - cell}z`;
    }
    const svg = h("svg:svg", { viewBox: `0 0 ${size} ${size}`, width: size, height: size, class: "mask" },
      h("svg:path", { d: paths.off, class: "m-off" }), h("svg:path", { d: paths[0], class: "m-x" }),
      h("svg:path", { d: paths[1], class: "m-win" }), h("svg:path", { d: paths[2], class: "m-ver" }));
    const font = Math.min(10, cell);
    if (cell >= 7) layout.labels.forEach((label, i) => {
      svg.append(h("svg:text", { x: pad - 3, y: pad + i * cell + cell - 2, class: "mlabel", "text-anchor": "end", "font-size": font }, label),
        h("svg:text", { x: pad + i * cell + cell - 2, y: pad - 3, class: "mlabel", "font-size": font,
          transform: `rotate(-90 ${pad + i * cell + cell - 2} ${pad - 3})` }, label));
    });
    const band = h("svg:rect", { x: pad, width: q * cell, height: cell, class: "band", visibility: "hidden" });
    svg.append(band);
    const tip = h("div", { class: "chart-tip", hidden: true });
    svg.addEventListener("mousemove", (ev) => {
      const box = svg.getBoundingClientRect(), scale = size / box.width;
      const c = Math.floor(((ev.clientX - box.left) * scale - pad) / cell), r = Math.floor(((ev.clientY - box.top) * scale - pad) / cell);
      if (r < 0 || c < 0 || r >= q || c >= q) { tip.hidden = true; band.setAttribute("visibility", "hidden"); return; }
      const visible = bit(r, c), code = run.d.rules[layout.kinds[r]][layout.kinds[c]][visible ? 1 : 0];
      const reason = (run.d.reasons[code] || "").replace("{q}", layout.labels[r]).replace("{k}", layout.labels[c]);
      tip.hidden = false;
      tip.textContent = `${layout.labels[r]} (position p+${layout.positions[r]}) → ${layout.labels[c]} (p+${layout.positions[c]}): ${reason}`;
      tip.style.left = `${Math.min(box.width - 220, (ev.clientX - box.left) + 12)}px`;
      tip.style.top = `${(ev.clientY - box.top) + 12}px`;
      band.setAttribute("y", pad + r * cell); band.setAttribute("visibility", "visible");
    });
    svg.addEventListener("mouseleave", () => { tip.hidden = true; band.setAttribute("visibility", "hidden"); });
    node._mask = { layout };
    fill(node, title, h("div", { class: "scroll mask-wrap" }, svg, tip), Lade.legends.mask());
  };
})();
