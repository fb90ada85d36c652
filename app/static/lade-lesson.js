// The lesson: eight chapters from one token per forward pass to lookahead decoding, each with one or two views in
// focus, a pinned run and step, a question to answer before the next step reveals it, and "try it yourself".
//
// Prose explains concepts; every number or token a sentence points at is read off the run shown (`fact`), so a
// chapter opened on another run still says true things about it. Facts carry data-fact names, which the tests read
// back and compare with the trace. Chapters run on the lesson's runs (`stage.lessonRoles`: a lookahead run and a
// Jacobi run of the same prompt, from the gallery), or on the explorer's run after "Teach with this run".
(() => {
  "use strict";
  const Lade = (window.Lade = window.Lade || {});
  const { h, fill, tok, plural, fmt } = Lade;

  const fact = (name, value) => h("span", { class: "fact", dataset: { fact: name } }, String(value));
  const P = (...children) => h("p", {}, ...children);
  const range = (n) => Array.from({ length: n }, (_, i) => i);

  // -- small statistics of a run, the sentences' facts ---------------------------------------------------------------
  const right = (run, step) => step.new_level.filter((t, j) =>
    run.finalAt(step.position + step.levels_before.length + 1 + j) === t).length;
  const firstStep = (run, test, from = 1) => {
    const steps = run.parallel.steps;
    for (let i = from; i < steps.length; i++) if (test(steps[i], i)) return i;
    return Math.min(from, steps.length - 1);
  };
  // Jacobi: right guesses that could not be kept (an earlier guess in the block was wrong), and right tokens that
  // showed up in the block at a neighbouring position instead of their own.
  function jacobiMisses(run) {
    let rightGuesses = 0, kept = 0, misplaced = 0;
    for (const s of run.parallel.steps.slice(1)) {
      const guess = s.levels_before[0] || [];
      guess.forEach((t, j) => {
        const pos = s.position + 1 + j;
        if (run.finalAt(pos) === t) rightGuesses += 1;
        else if ([1, 2, 3].some((d) => run.finalAt(pos + d) === t || run.finalAt(pos - d) === t)) misplaced += 1;
      });
      kept += s.match_lengths[0] || 0;
    }
    return { rightGuesses, kept, stranded: rightGuesses - kept, misplaced };
  }

  // A question about the next step; `answer(run, k)` reads the trace; revealing steps forward.
  function predict(question, options, answer) { return { question, options, answer }; }
  const bucket = (n, edges) => edges.findIndex((e) => n <= e) < 0 ? edges.length : edges.findIndex((e) => n <= e);

  const CHAPTERS = [
    { title: "One token per forward pass", role: "lookahead", focus: ["ar-output", "counter", "progress-plot"],
      step: (run) => Math.min(12, run.lastStep()),
      text: (run, k) => {
        const n = run.numbers("baseline", k), ms = 1000 * run.meanStep("baseline");
        return [P("A language model writes text one token at a time: each decoding step is one forward pass through ",
          "the whole model, and it yields exactly one new token, because the next token depends on all the previous ones."),
        P(`Here, after step ${k}, ${run.laneName("baseline").toLowerCase()} decoding has written `, fact("baseline_tokens", n.tokens),
          " tokens in ", fact("baseline_steps", n.steps), " forward passes (step 0 reads the prompt). One step took ",
          fact("baseline_step_ms", fmt(ms, 1)), ` ms on average on ${run.t.device}.`),
        P("Every forward pass reads every weight of the model from memory to produce that one token. On a GPU, reading ",
          "the weights takes far longer than the arithmetic done with them: decoding is memory-bound and the GPU's ",
          "arithmetic units sit mostly idle. Lookahead decoding spends that idle arithmetic on guessing ahead.")];
      },
      predict: predict("After 10 more steps, how many more tokens will autoregressive decoding have written?",
        ["5", "10", "20"], (run, k) => {
          const more = run.numbers("baseline", k + 10).tokens - run.numbers("baseline", k).tokens;
          return { option: more <= 7 ? 0 : more <= 14 ? 1 : 2, text: `${more}: one per forward pass.`, step: k + 10 };
        }) },
    { title: "Jacobi decoding: guess a block, refine it in parallel", role: "jacobi",
      focus: ["window-view", "verify-view", "trajectory-view"],
      step: (run) => firstStep(run, (s) => right(run, s) > (s.match_lengths[0] || 0) + 1, 2),
      text: (run, k) => {
        const s = run.step(k), m = jacobiMisses(run), W = run.config.window;
        return [P("Jacobi decoding guesses the next W tokens at once and feeds the whole guess block through the model ",
          "in one forward pass. The model's output after each guess token is a better guess; the prefix of the block ",
          "that the model agrees with is accepted, plus the model's next token. It is exact: nothing is kept that the ",
          "model would not have written."),
        P("This run guesses ", fact("jacobi_window", W), " tokens per step and needed ", fact("jacobi_steps", run.parallel.steps.length),
          " steps for ", fact("jacobi_tokens", run.parallel.tokens.length), " tokens: ",
          fact("jacobi_compression", fmt(run.compression())), " tokens per step, barely better than one."),
        s && s.kind === "jacobi" ? P(`In step ${s.index}, `, fact("step_right", right(run, s)), ` of the ${W} new guesses are already `,
          "right for their positions, but the step kept ", fact("step_kept", s.match_lengths[0]),
          " of its guesses: a guess counts only when every guess before it in the block is right in the same step.") : null,
        P("Over the whole run, ", fact("stranded", m.stranded), " right guesses could not be kept for that reason, and ",
          fact("misplaced", m.misplaced), " guesses were a token of the final text one to three positions off: the right ",
          "token, in the wrong place or too late. Lookahead decoding keeps these trajectories instead of throwing them away.")];
      },
      predict: predict("How many tokens will the next Jacobi step accept?", ["1", "2", "3 or more"], (run, k) => {
        const next = run.parallel.steps[Math.min(k + 1, run.parallel.steps.length - 1)];
        return { option: bucket(next.accepted.length, [1, 2]), text: `${plural(next.accepted.length, "token")}.`, step: k + 1 };
      }) },
    { title: "The 2D window: keep the trajectories", role: "lookahead", focus: ["window-view", "trajectory-view"],
      step: (run) => firstStep(run, (s) => s.kind === "lookahead" && s.levels_before.length === run.config.ngram - 1 && right(run, s) >= 2),
      text: (run, k) => {
        const s = run.step(k), c = run.config;
        if (!s || !s.levels_before.length) return [P("This step fed no window. Step forward to one that does.")];
        const col = s.levels_before.map((l) => l[0]).concat([s.new_level[0]]);
        return [P("Lookahead decoding keeps the last N-1 Jacobi iterations as the levels of a 2D window: W columns, ",
          "N-1 levels. Each level is the previous iteration's guesses, shifted one position, so a column read top to ",
          "bottom is one trajectory: successive guesses for positions one apart."),
        P(`This run uses W = `, fact("W", c.window), ", N = ", fact("N", c.ngram), `. In step ${s.index} the window holds `,
          fact("levels", s.levels_before.length), ` level(s); the model's output at the newest level is a new level, and `,
          fact("new_right", right(run, s)), ` of its ${s.new_level.length} guesses are right.`),
        s.levels_before.length === c.ngram - 1 ? P("Column 0 now spells the n-gram ", col.map((t) => tok(run, t)),
          ": a sequence the model produced itself, which may well appear in the text later.") : null];
      },
      predict: predict("How many of the next step's new guesses will turn out right?", ["0 or 1", "2 to 3", "4 or more"], (run, k) => {
        const next = run.parallel.steps[Math.min(k + 1, run.parallel.steps.length - 1)], n = next.new_level.length ? right(run, next) : 0;
        return { option: bucket(n, [1, 3]), text: `${n} of ${next.new_level.length}.`, step: k + 1 };
      }) },
    { title: "The n-gram pool", role: "lookahead", focus: ["pool-view", "pool-plot"],
      step: (run) => firstStep(run, (s) => s.candidates.length >= 2 && s.kind === "lookahead"),
      text: (run, k) => {
        const s = run.step(k), d = run.derived(k).pool;
        if (!s || !d) return [P("No pool yet.")];
        const policy = { paper: "the window's columns only", output: "the window's columns and the text written so far",
          prompt: "the window's columns, the prompt and the text written so far" }[run.config.pool];
        return [P(`The pool keeps n-grams under their first token. In this run it takes ${policy}. When the last `,
          "accepted token is x, the n-grams stored under x become the step's candidates. Each key keeps at most G ",
          "n-grams; a new one evicts the least recently used."),
        P(`After step ${s.index} the pool holds `, fact("pool_size", d.size), " n-grams under ", fact("pool_keys", d.keys),
          " keys. The lookup under x = ", tok(run, s.input_token), " found ", fact("found", s.candidates.length),
          ` candidate(s) for this step; the step added `, fact("added", s.ngrams_added.length), " and evicted ",
          fact("evicted", s.ngrams_evicted.length), ".")];
      },
      predict: predict("How many candidates will the next step's lookup find?", ["none", "1 to 3", "4 or more"], (run, k) => {
        const next = run.parallel.steps[Math.min(k + 1, run.parallel.steps.length - 1)];
        return { option: bucket(next.candidates.length, [0, 3]), text: `${plural(next.candidates.length, "candidate")}.`, step: k + 1 };
      }) },
    { title: "Verification: checked in the same forward pass", role: "lookahead", focus: ["verify-view", "la-output"],
      step: (run) => firstStep(run, (s) => s.winner >= 0 && s.match_lengths[s.winner] >= 2),
      text: (run, k) => {
        const s = run.step(k);
        if (!s || s.kind === "prefill") return [P("Step forward to a lookahead step.")];
        const kept = run.fromCandidate(s), same = run.parallel.tokens.join() === run.baseline.tokens.join();
        return [P("The candidates ride in the same forward pass as the window. A candidate's token is accepted while ",
          "it equals what the model itself predicts there; the step emits the longest accepted prefix and then the ",
          "model's own next token, so even a step where nothing matches emits one token."),
        P(`In step ${s.index}, `, s.winner >= 0 ? ["candidate ", fact("winner", s.winner + 1), " matched ", fact("matched", kept), " token(s)"]
          : ["no candidate matched"], " and the step emitted ", fact("emitted", s.accepted.length), " token(s) in one forward pass."),
        run.greedy ? P("Every kept token is the model's own argmax at its position, so the text is exactly what greedy ",
          "decoding writes: on this run the two texts are ", fact("identical", same ? "identical" : "different"), ".")
          : P("This run samples. Then a draft token is accepted with its probability under the model and, after a rejection, ",
            "removed and the rest renormalised: each emitted token still has exactly the model's distribution.")];
      },
      predict: predict("How many tokens will the next step emit?", ["1", "2", "3 or more"], (run, k) => {
        const next = run.parallel.steps[Math.min(k + 1, run.parallel.steps.length - 1)];
        return { option: bucket(next.accepted.length, [1, 2]), text: `${plural(next.accepted.length, "token")}.`, step: k + 1 };
      }) },
    { title: "One step's anatomy: the attention mask", role: "lookahead", focus: ["mask-view", "window-view"],
      step: (run) => firstStep(run, (s) => s.candidates.length >= 2 && s.levels_before.length === run.config.ngram - 1),
      text: (run, k) => {
        const s = run.step(k), layout = run.layout(k);
        if (!s || !layout) return [P("Step forward to a lookahead step.")];
        return [P("One forward pass carries x, every window level and every candidate. The attention mask keeps them ",
          "apart: a window token sees x, level 0 up to its own column and its own column above it; a candidate token ",
          "sees x and its own earlier tokens; neither branch sees the other. Positions are set so that each token ",
          "reads a well-formed prefix."),
        P(`Step ${s.index} fed `, fact("fed", layout.size), " tokens: x, ", fact("levels", layout.levels), " level(s) of ",
          fact("W", layout.window), " and ", fact("nodes", layout.nodes), ` verification token(s)${s.tree ? " (a token tree)" : ""}.`,
          " On a GPU such a pass costs about what a one-token pass costs; the next chapter looks at where that is not so.")];
      },
      predict: predict("How many tokens will the next step feed to the model?", ["under 20", "20 to 40", "over 40"], (run, k) => {
        const layout = run.layout(k + 1), n = layout ? layout.size : 1;
        return { option: bucket(n, [19, 40]), text: `${n} tokens.`, step: k + 1 };
      }) },
    { title: "From tokens per step to seconds", role: "lookahead", focus: ["counter", "progress-plot"], step: (run) => run.lastStep(),
      text: (run, k, stage) => Lade.lessonSpeed(run, stage, fact, P),
      predict: predict("On this CPU, is W = 15 (N = 5, G = 15) faster than W = 7 (N = 4, G = 7)?", ["yes", "no"], (run, k, stage) => {
        const lab = stage.lab && stage.lab.cpu_choice;
        if (!lab) return { option: -1, text: "no bench result is shipped for this device." };
        return { option: lab.wide > lab.narrow ? 0 : 1, text: `${lab.wide > lab.narrow ? "yes" : "no"}: the bench ` +
          `measured ${fmt(lab.wide)}x greedy's speed for W=15 against ${fmt(lab.narrow)}x for W=7 on this CPU ` +
          `(medians over the benchmark prompts)` + (lab.wide > lab.narrow ? "." : ": the wider window's extra tokens " +
          "cost more than they bring here.") };
      }) },
    { title: "Play with it", role: "lookahead", focus: null, step: (run) => 0,
      text: (run) => [P("You have seen every part. The explorer shows them all at once for any run: pick one from the ",
        "gallery, open a saved trace, or press “Run it yourself” to race lookahead decoding against greedy decoding on ",
        "your own prompt with your own W, N and G, greedy or sampling. The speed lab predicts what the same run would do ",
        "on a GPU, and on several."),
      P("The run on screen now: ", Lade.settingsText(run), ".")] },
  ];

  function runFor(stage, role) {
    const name = stage.lessonOwn && role === "lookahead" ? stage.lessonOwn : stage.lessonRoles[role];
    return name;
  }

  Lade.lesson = {
    chapters: CHAPTERS,
    async show(stage, number) {
      const n = Math.max(1, Math.min(CHAPTERS.length, number || 1)), ch = CHAPTERS[n - 1];
      stage.chapter = n;
      stage.lessonBox.hidden = false;
      const name = runFor(stage, ch.role) || stage.current;
      const run = name ? await stage.loadRun(name) : stage.run();
      if (!run) return;
      stage.current = name || stage.current;
      stage.k = Math.max(0, Math.min(ch.step(run), run.lastStep()));
      stage.mode = "lesson";
      this.draw(stage);
      stage.setFocus(ch.focus);
    },
    draw(stage) {
      const n = stage.chapter, ch = CHAPTERS[n - 1], run = stage.run();
      if (!run) return;
      const pills = h("div", { class: "chapters" }, CHAPTERS.map((c, i) => h("button", { class: `pill ${i + 1 === n ? "on" : ""}`,
        title: c.title, onclick: () => this.show(stage, i + 1) }, String(i + 1))));
      const ask = ch.predict ? this.question(stage, ch) : null;
      fill(stage.lessonBox, h("div", { class: "lesson" },
        h("div", { class: "lesson-head" }, h("span", { class: "muted" }, `Chapter ${n} of ${CHAPTERS.length}`), pills),
        h("h2", {}, ch.title),
        h("div", { id: "lesson-text", dataset: { chapter: n, run: stage.current, step: stage.k } }, ch.text(run, stage.k, stage)),
        ask,
        h("div", { class: "lesson-nav" },
          h("button", { id: "lesson-prev", disabled: n === 1, onclick: () => this.show(stage, n - 1) }, "◀ Back"),
          h("button", { id: "lesson-next", class: "primary", disabled: n === CHAPTERS.length, onclick: () => this.show(stage, n + 1) }, "Next ▶"),
          h("button", { id: "lesson-try", onclick: () => this.tryIt(stage) }, "Try it yourself →"),
          stage.lessonOwn ? h("span", { class: "muted" }, ` On your run: ${stage.lessonOwn}.`) : null)));
    },
    // the chapter's sentences again, for the step now shown (the reader may step within a chapter)
    refresh(stage) {
      const text = stage.lessonBox.querySelector("#lesson-text"), ch = CHAPTERS[(stage.chapter || 1) - 1];
      if (!text || !stage.run() || (text.dataset.step === String(stage.k) && text.dataset.run === stage.current)) return;
      text.dataset.step = stage.k;
      text.dataset.run = stage.current;
      fill(text, ch.text(stage.run(), stage.k, stage));
    },
    question(stage, ch) {
      const box = h("div", { class: "predict", id: "lesson-predict" }, h("b", {}, "Predict, then reveal: "), ch.predict.question, " ");
      ch.predict.options.forEach((label, i) => box.append(h("button", { class: "option", dataset: { option: i },
        onclick: () => this.reveal(stage, ch, i, box) }, label)));
      return box;
    },
    reveal(stage, ch, chosen, box) {
      const run = stage.run(), k = stage.k, answer = ch.predict.answer(run, k, stage);
      for (const b of box.querySelectorAll("button.option")) {
        b.disabled = true;
        b.classList.toggle("right", +b.dataset.option === answer.option);
        b.classList.toggle("wrong", +b.dataset.option === chosen && chosen !== answer.option);
      }
      box.append(h("div", { class: "answer", id: "lesson-answer", dataset: { option: answer.option } },
        chosen === answer.option ? "✓ Right. " : "✗ Not this time. ", "The trace says: ", answer.text));
      if (answer.step !== undefined) stage.go(answer.step);
    },
    tryIt(stage) {
      stage.lessonBox.hidden = true;
      stage.openRun(stage.current, stage.k, "explorer");
    },
  };

  // Chapter 7: tokens per step against seconds, from the run and the speed lab's data (measured CPU curve, modelled GPU).
  Lade.lessonSpeed = function lessonSpeed(run, stage, fact, P) {
    const steps = run.parallel.steps.slice(1);
    const fed = steps.length ? steps.reduce((a, s) => a + run.tokensFedOf(s), 0) / steps.length : 1;
    const ratio = run.meanStep("baseline") ? run.meanStep("parallel") / run.meanStep("baseline") : 0;
    const time = (lane) => run.t[lane].steps.reduce((a, s) => a + s.forward_s + s.overhead_s, 0);
    const out = [P("Compression, tokens per step, is only an upper bound on the speed-up: each step also pays for the ",
      "tokens it feeds. This run wrote ", fact("compression", fmt(run.compression())), " tokens per step, feeding ",
      fact("fed", fmt(fed, 1)), ` tokens per step on average. On ${run.t.device} such a step took `, fact("step_cost", fmt(ratio)),
      "x as long as a one-token step, so the measured speed-up is ", fact("speedup", fmt(time("baseline") / Math.max(time("parallel"), 1e-9))),
      "x.")];
    const gpu = stage.lab && stage.lab.gpu;
    if (gpu) {
      const cost = Lade.costAt(gpu.points, fed);
      out.push(P(`The speed lab's cost model (a prediction, not a measurement) puts a ${fmt(fed, 1)}-token forward of a `,
        `${gpu.model} model on an ${gpu.device} at `, fact("gpu_cost", fmt(cost)), "x a one-token forward: the same ",
        "compression would give about ", fact("gpu_speedup", fmt(run.compression() / cost)), "x there. The weights are read ",
        "once per forward whatever its width, so extra tokens are nearly free until the arithmetic catches up."));
    }
    out.push(P("That is why the paper's single-GPU figure is up to 1.8x on MT-bench, while its 4x on code completion ",
      "needs strong scaling over several GPUs (Lookahead Parallelism): each GPU carries part of a much wider window, ",
      "so compression grows while the time per step does not. The Speed lab tab has both, with their assumptions."));
    if (stage.lab && stage.lab.gpu) {
      const box = h("div", { class: "lesson-chart" });
      out.push(box);
      requestAnimationFrame(() => Lade.lineChart(box, { title: "Cost of one forward, relative to one token", xLabel: "tokens fed",
        yLabel: "× one-token forward", logX: true, height: 200, yMin: 0,
        series: [{ name: `this CPU (measured)`, color: Lade.COLORS.baseline, points: stage.lab.cpu || [] },
          { name: `${gpu.device}, ${gpu.model} (model)`, color: Lade.COLORS.parallel, dash: "5 3", points: gpu.points }],
        extra: [{ x: fed, y: ratio, label: "this run", color: Lade.COLORS.wrong }],
        hover: (x) => `${x} tokens` }));
    }
    return out;
  };

  Lade.costAt = function costAt(points, tokens) {
    if (!points.length) return 1;
    if (tokens <= points[0][0]) return points[0][1];
    for (let i = 1; i < points.length; i++) {
      const [a, ca] = points[i - 1], [b, cb] = points[i];
      if (tokens <= b) return ca + ((tokens - a) * (cb - ca)) / (b - a);
    }
    const [a, ca] = points[points.length - 2], [b, cb] = points[points.length - 1];
    return cb + ((tokens - b) * (cb - ca)) / (b - a);
  };
})();
