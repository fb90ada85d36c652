// The words around the views: what each section shows (concepts, hand-written, no numbers), what the run on screen
// is (its settings, read off the trace), and the honest note on speed (every number computed from the trace).
(() => {
  "use strict";
  const Lade = (window.Lade = window.Lade || {});
  const { h, fill, fmt, plural } = Lade;

  Lade.NOTES = {
    outputs: "Both methods decode the same prompt. The clock counts forward passes (steps; step 0 reads the prompt). " +
      "Autoregressive decoding writes one token per step; lookahead decoding writes 1 to N per step. With greedy " +
      "decoding the two texts are identical, token for token; when the run samples, both draw from the model's " +
      "distribution, so their texts differ in general.",
    chain: "One step, left to right. The lookahead branch (the window) holds guesses for future positions; the " +
      "model refines all of them in the step's forward pass (a Jacobi iteration), and each column of the window then " +
      "spells an n-gram for the pool. The pool hands the verification branch the n-grams that start with the last " +
      "accepted token x; the model checks them in the same forward pass and keeps the longest prefix it agrees with, " +
      "plus its own next token. Hover a column or a candidate to see where it goes.",
    trajectory: "Jacobi decoding throws its guesses away once a step is done. Lookahead decoding keeps them: read " +
      "down a column of the trajectory and you see guesses for one position settle, often steps before decoding " +
      "reaches that position. Those settled guesses are what the pool collects.",
    mask: "Everything in one forward pass: the window and the candidates travel together, and this attention mask " +
      "keeps them apart. Each token sees only a well-formed sequence, its own prefix, so every prediction is an " +
      "ordinary next-token prediction. Hover a cell to see why it is visible or not.",
  };

  Lade.settingsText = function settingsText(run) {
    const c = run.config, s = run.t.sampling;
    const mode = s.temperature === 0 ? "greedy" : `sampling at temperature ${s.temperature}, top-p ${s.top_p}, seed ${s.seed}`;
    if (run.method === "jacobi") return `Jacobi decoding, a block of W=${c.window} guesses, ${mode}`;
    const extra = [`${c.pool} pool`, c.tree ? "token tree" : null, c.adaptive ? "adaptive sizes" : null].filter(Boolean);
    return `W=${c.window}, N=${c.ngram}, G=${c.guess} (${extra.join(", ")}), ${mode}`;
  };

  Lade.runSummary = function runSummary(run) {
    const p = run.parallel, b = run.baseline;
    return `${run.laneName("parallel")}: ${plural(p.tokens.length, "token")} in ${plural(p.steps.length, "step")}; ` +
      `${run.laneName("baseline").toLowerCase()}: ${plural(b.tokens.length, "token")} in ${plural(b.steps.length, "step")}. ` +
      `${run.t.model} on ${run.t.device} (${run.t.dtype})${run.t.recorded_at ? `, recorded ${run.t.recorded_at}` : ""}.`;
  };

  // Speed lab mode: the lab's own charts are Plotly figures below the stage; this says what they are for.
  Lade.labIntro = function labIntro(stage) {
    const run = stage.run();
    fill(stage.labBox, h("div", { class: "lab-text" }, h("h2", {}, "The speed lab: from tokens per step to seconds"),
      h("p", {}, "Tokens per step only become speed where a wider forward pass costs about what a narrow one does. Below: ",
        "this CPU's measured cost curve, a roofline model of a GPU's (with its assumptions), what they predict for the ",
        "run on screen, the paper's own measurements beside the model's predictions, and a simulation of Lookahead ",
        "Parallelism over several GPUs. Every GPU figure here is a model's prediction unless it says measured."),
      run ? h("p", { class: "muted" }, "Run on screen: ", Lade.settingsText(run), ".") : null));
  };

  // The speed of the run on screen, honestly: compression is a bound, the step's cost decides.
  Lade.honestNote = function honestNote(run) {
    const c = run.config, compression = run.compression(), ratio = run.meanStep("baseline") > 0
      ? run.meanStep("parallel") / run.meanStep("baseline") : 0;
    const time = (lane) => run.t[lane].steps.reduce((a, s) => a + s.forward_s + s.overhead_s, 0);
    const speedup = time("parallel") > 0 ? time("baseline") / time("parallel") : 0;
    const plain = run.greedy ? "greedy" : "plain sampling";
    const fed = run.method === "jacobi" ? c.window + 1 : 1 + (c.window + c.guess) * (c.ngram - 1);
    return h("div", { class: "honest" },
      h("b", {}, "An honest note on speed. "),
      `This run has a compression of ${fmt(compression)} tokens per step against 1 for ${plain}. `,
      "Compression is an upper bound on the speed-up, not the speed-up: ",
      `every step of this run could feed up to ${fed} tokens through the model. On ${run.t.device} a step of it took `,
      `${fmt(ratio)}x as long as a ${plain} step on average, so the measured wall-clock ratio is ${fmt(speedup)}x `,
      `(${plain} time / ${run.laneName("parallel").toLowerCase()} time). `,
      "Extra tokens are nearly free only where decoding is memory-bound, such as a GPU running a model much larger ",
      "than this one; on a CPU every token fed costs time. The paper reports up to 1.8x on MT-bench on one GPU; its 4x ",
      "on code completion needs strong scaling over several GPUs (Lookahead Parallelism) and is not a single-device figure.",
      run.greedy ? "" : " This run samples: both lanes draw from the model's distribution with their own random numbers, " +
        "so their texts differ; neither is more exact than the other.");
  };
})();
