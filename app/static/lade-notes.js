// @ts-check
// The words around the views (`Lade.notes`): what each explorer section shows (concepts, hand-written, no numbers),
// the glossary (one line per term, the same text everywhere, opened on hover, focus and tap), what the run on
// screen is (its settings, read off the trace), and the honest note on speed (every number computed from the run).
const LadeNotes = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { h, fmt, plural, label } = Lade.dom;

  const SECTIONS = {
    chain:
      "One step, left to right. The lookahead branch (the window) holds guesses for future positions; the " +
      "model refines all of them in the step's forward pass (a Jacobi iteration), and each column of the window then " +
      "spells an n-gram for the pool. The pool hands the verification branch the n-grams that start with the last " +
      "accepted token x; the model checks them in the same forward pass and keeps the longest prefix it agrees with, " +
      "plus its own next token. Hover a column or a candidate to see where it goes.",
    trajectory:
      "Jacobi decoding throws its guesses away once a step is done. Lookahead decoding keeps them: read " +
      "down a column and you see the guesses for one position change step by step. The few that turn out right are " +
      "worth a token only if the pool hands them to verification before decoding reaches that position.",
    mask:
      "Everything in one forward pass: the window and the candidates travel together, and this attention mask " +
      "keeps them apart. Each token sees only a well-formed sequence, its own prefix, so every prediction is an " +
      "ordinary next-token prediction. Hover a cell to see why it is visible or not.",
  };

  /** What a lane of each kind writes in one step, as a concept (no numbers): keyed by `Run.lanes()`'s `kind`. */
  const WRITES = {
    greedy: "one token per step",
    sampling: "one token per step",
    lookahead: "1 to N tokens per step (N: the n-gram size)",
    [Lade.dom.HYBRID]:
      "one token per step plus the longest prefix of a candidate (a pool n-gram or copied text) the model agrees with",
    jacobi: "one token per step plus the guesses at the front of its block that the model agrees with",
    pld: "one token per step plus the copied tokens the model agrees with",
    "early-exit": "one token per step plus the drafted tokens the model agrees with",
    draft: "one token per step plus the drafted tokens the model agrees with",
  };

  /** "What am I looking at?" over the two text panels, chosen by the run's own lanes: the panels show the baseline
   * lane and the main lane; a race's other lanes are named as not drawn there. @param {Run} run */
  function outputsNote(run) {
    const lanes = run.lanes(),
      shown = lanes.filter((l) => l.id === "parallel" || l.id === "baseline"),
      others = lanes.filter((l) => !shown.includes(l));
    const writes = shown
      .slice()
      .reverse()
      .map((l, i) => {
        const what = Object.hasOwn(WRITES, l.kind) ? WRITES[l.kind] : "one token or more per step";
        return `${i ? run.laneWord(l.id) : run.laneName(l.id)} decoding writes ${what}`;
      });
    const names = (/** @type {typeof lanes} */ ls) => ls.map((l) => run.laneWord(l.id)).join(", ");
    return (
      `The two text panels show the same prompt decoded by ${shown
        .slice()
        .reverse()
        .map((l) => run.laneWord(l.id))
        .join(" and by ")}` +
      (others.length
        ? `; the race's other ${others.length === 1 ? "lane" : "lanes"} (${names(others)}) decoded it too: ` +
          "their counts are in the counter and the methods table, their texts are not drawn here. "
        : ". ") +
      "The clock counts forward passes (steps; step 0 reads the prompt). " +
      `${writes.join("; ")}. ` +
      (run.greedy
        ? "With greedy decoding every lane's text is the same, token for token."
        : "This run samples: each lane draws from the model's distribution with its own random numbers, so their texts differ in general.")
    );
  }

  /** One line per term: the glossary, the same text wherever a term is explained. */
  const GLOSSARY = {
    "forward pass": "One run of the whole model over the tokens fed to it; it gives a next-token prediction for each.",
    argmax: "The token the model finds most likely at a position: what greedy decoding writes.",
    "greedy decoding": "Writing, at every step, the model's most likely next token (its argmax).",
    "memory-bound": "Limited by reading the weights from memory, not by arithmetic: the arithmetic units wait.",
    "KV cache":
      "The keys and values of the tokens already processed, kept so that each new token attends to them without recomputing them.",
    "Jacobi iteration": "Guessing several future tokens at once and refining all the guesses in one forward pass.",
    "n-gram": "A sequence of n tokens in a row.",
    "least recently added":
      "The pool's eviction rule: when a key holds more than G n-grams, the one added longest ago leaves. Adding one that is already there counts as adding it again; looking it up does not.",
    "token tree": "Candidates fed with their shared prefixes once, each branch seeing only its own ancestors.",
    compression:
      "Tokens written per step (per forward pass), the prompt's prefill counted as a step: an upper bound on the speed-up, not the speed-up.",
    "MT-bench": "A benchmark of multi-turn chat questions, which the paper uses for its single-GPU speed-up.",
    roofline: "A model of a forward pass's time: the longer of reading its bytes from memory and doing its arithmetic.",
    "speculative decoding":
      "A draft (a small model, or text looked up elsewhere) proposes tokens and the large model verifies them in one pass.",
    "draft model":
      "A smaller model, usually of the same family and tokenizer, that guesses the large model's next tokens: an off-the-shelf checkpoint works without retraining (Leviathan et al., 2023), and one trained toward the large model has more of its guesses kept.",
    "prompt lookup":
      "Speculative decoding whose draft is copied from the prompt (or the text so far) after a matching n-gram.",
  };

  /** A term with its one-line definition, shown on hover, focus and tap (a real button, its text the term).
   * @param {keyof typeof GLOSSARY} term @param {string} [shown] */
  function term(term, shown) {
    const id = `term-${term.replace(/[^a-z]+/gi, "-").toLowerCase()}-${Math.random().toString(36).slice(2, 7)}`;
    const tip = h("span", { class: "term-tip", role: "tooltip", id }, GLOSSARY[term]);
    const button = h(
      "button",
      { type: "button", class: "term", "aria-describedby": id, onclick: () => button.classList.toggle("open") },
      shown || term,
    );
    button.addEventListener("keydown", (/** @type {KeyboardEvent} */ ev) => {
      if (ev.key === "Escape") button.classList.remove("open");
    });
    const box = h("span", { class: "term-box" }, button, tip);
    for (const ev of ["mouseenter", "focusin", "click"])
      box.addEventListener(ev, () => requestAnimationFrame(() => place(tip)));
    return box;
  }

  /** Keep a shown tip inside the window (a term near the right edge of a phone's screen put it off screen).
   * @param {HTMLElement} tip */
  function place(tip) {
    tip.style.removeProperty("left");
    const r = tip.getBoundingClientRect();
    if (!r.width) return;
    const over = r.right - (window.innerWidth - 8);
    if (over > 0) tip.style.left = `${-Math.min(over, r.left - 8)}px`;
  }

  // a tip opened by a tap closes on a tap anywhere else
  document.addEventListener("click", (ev) => {
    const inside = ev.target instanceof Element ? ev.target.closest(".term-box") : null;
    for (const open of document.querySelectorAll(".term.open"))
      if (!inside || !inside.contains(open)) open.classList.remove("open");
  });

  /** The device a run was recorded on, in words ("cpu" is "the CPU"). @param {Run} run */
  function deviceName(run) {
    const d = String(run.t.device);
    return { cpu: "the CPU", cuda: "the GPU", mps: "the Apple GPU" }[d.split(":")[0]] || Lade.dom.labelText(d);
  }

  /** The machine that recorded the run, as its trace names it ("the 2-core … Processor at 1 thread"), else the
   * device's name. @param {Run} run */
  function machineWords(run) {
    const m = run.t.machine;
    if (!m || !m.description) return deviceName(run);
    // a browser's description names its threads already ("browser: WebAssembly, 2 threads")
    const said = /\bthreads?\b/.test(m.description) || !m.threads;
    return said ? `the ${m.description}` : `the ${m.description} at ${plural(m.threads, "thread")}`;
  }

  /** The band two timings must differ by to count, in words: its percentage and the spread that set it (`app.speed`):
   * the run's own greedy steps, or the floor measured on its device in the process that ran it, whichever is wider.
   * @param {Band} band @param {(name: string, value: string | number) => Kid} fact */
  function bandWords(band, fact) {
    const parts = band.parts,
      percent = (/** @type {number} */ r) => `${Math.round(100 * (r - 1))}%`;
    const own = parts.find((p) => p.source === "this run"),
      floor = parts.find((p) => p.source === "this run's device");
    const ownWords = (/** @type {BandPart} */ p) => [
      "this run's own greedy steps differed by ",
      fact("noise_own", percent(p.ratio)),
      " between its first and second half",
    ];
    const floorWords = (/** @type {BandPart} */ p) => [
      "a greedy step on this run's device varied by ",
      fact("noise_floor", percent(p.ratio)),
      " within one measurement made before the race",
    ];
    // a band is the widest of at least one part
    const wider = /** @type {BandPart} */ (own && (!floor || own.ratio > floor.ratio) ? own : floor);
    const other = wider === own ? floor : own;
    return [
      wider === own ? ownWords(wider) : floorWords(wider),
      other ? [" (", wider === own ? floorWords(other) : ownWords(other), ")"] : "",
      ", so differences within ",
      fact("noise_band", percent(band.ratio)),
      " are noise",
    ];
  }

  /** The lanes' lengths, and the model, device and date the run names (each a `Lade.dom.label`). @param {Run} run */
  function runSummary(run) {
    const lanes = run
      .lanes()
      .map(
        (l) =>
          `${run.laneName(l.id)}: ${plural(l.run.tokens.length, "token")} in ${plural(l.run.steps.length, "step")}`,
      );
    return [
      `${lanes.join("; ")}. `,
      label(run.t.model),
      " on ",
      label(deviceName(run)),
      ` (${run.t.dtype})`,
      run.t.recorded_at ? [", recorded ", label(run.t.recorded_at)] : "",
      ".",
    ];
  }

  /** The speed of the run on screen, honestly: compression is a bound, the step's cost decides; the paper's claims
   * as the register words them (`boot.paper`). @param {Run} run @param {Boot} boot */
  function honestNote(run, boot) {
    const lab = boot.lab,
      paper = boot.paper;
    const compression = run.compression();
    const ratio = run.meanStep("baseline") > 0 ? run.meanStep("parallel") / run.meanStep("baseline") : 0;
    const speedup = run.time("parallel") > 0 ? run.time("baseline") / run.time("parallel") : 0;
    const plain = run.greedy ? "greedy" : "plain sampling";
    const fed = run.t.parallel.steps.slice(1).map((s) => run.tokensFed(s)),
      most = fed.length ? Math.max(...fed) : 1;
    const own = Lade.curves.ownCurve(run), // the run's machine's curve, measured where it ran; else the shipped one
      shipped = lab && lab.cpu.single ? lab.cpu.single : null,
      flat = own
        ? Lade.curves.flatUpTo(own.points)
        : lab && shipped
          ? Lade.curves.flatUpTo(Lade.curves.cpuPoints(lab))
          : null;
    // a lane stopped (or still running) wrote fewer tokens than asked: the lanes' times are not of the same work
    const cut = run.lanes().some((l) => run.ended(l.id) !== "finished");
    return h(
      "div",
      { class: "honest", dataset: { compression: fmt(compression), ratio: fmt(ratio), speedup: fmt(speedup) } },
      h("b", {}, "An honest note on speed. "),
      `This run wrote ${fmt(compression)} tokens per step against 1 for ${plain}. `,
      "Tokens per step is an upper bound on the speed-up, not the speed-up: ",
      `a step of this run fed the model up to ${plural(most, "token")} (${fmt(run.meanFed(), 1)} on average). On ${machineWords(run)}, which recorded it, a step of it took `,
      `${fmt(ratio)}x as long as a ${plain} step on average`,
      cut
        ? ". Its lanes did not all finish, so their times cover different tokens and give no wall-clock ratio. "
        : `, so the measured wall-clock ratio is ${fmt(speedup)}x (${plain} time / ${run.laneWord("parallel")} time). `,
      "Extra tokens are nearly free only where decoding is memory-bound, such as a GPU running a model much larger ",
      "than this one",
      flat && own
        ? [
            "; on the machine that recorded this run, its cost curve (measured in the same process) has a forward ",
            `costing about what one token costs up to ${plural(flat, "token")} and more with every token past that. `,
          ]
        : flat && shipped
          ? [
              "; on ",
              Lade.curves.cpuWords(shipped.machine_name),
              ` (the CPU curve shipped with the page) a forward costs about what one token costs up to ${plural(flat, "token")} and more with every token past that. `,
            ]
          : ". ",
      `The paper reports “${paper.one_device}” on one GPU and “${paper.several}” (Lookahead Parallelism), which is `,
      "not a single-device figure.",
      run.greedy
        ? ""
        : " This run samples: both lanes draw from the model's distribution with their own random numbers, " +
            "so their texts differ; neither is more exact than the other.",
    );
  }

  return {
    SECTIONS,
    WRITES,
    outputsNote,
    machineWords,
    GLOSSARY,
    term,
    bandWords,
    runSummary,
    honestNote,
    deviceName,
  };
})();
window.Lade.notes = LadeNotes;
