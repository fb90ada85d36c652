// @ts-check
// The lesson's chapters (`Lade.lesson.CHAPTERS`): from one token per forward pass to lookahead decoding and its
// relatives. Each chapter names the run it reads (a role: the lesson's lookahead run, its Jacobi run, or the race of
// the relatives), the views it puts in focus, where it opens (stated rules tried in order, never a silent fallback),
// its text, and a question to answer before the next step reveals it.
//
// Prose explains concepts; every number or token a sentence points at is read off the run shown (`fact`, with a
// data-fact name the tests read back), so a chapter opened on another run still says true things about it. The
// chapters are data; lade-lesson-view.js draws them.
const LadeLesson = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { h, tok, plural, fmt, pct, fact, P } = Lade.dom;
  const term = Lade.notes.term;

  /** What the window does when a step accepts several tokens, on the run's first such full-window step whose next
   * step feeds the full window at the same width: nothing moves, positions count from the last accepted token, so
   * every kept guess stands further on. @param {Run} run */
  function relabelled(run) {
    const steps = run.t.parallel.steps,
      levels = run.config.ngram - 1;
    const full = (/** @type {Step} */ st) => levels >= 2 && st.levels_before.length === levels;
    const s = steps.find(
      (st, i) =>
        i > 0 &&
        i < steps.length - 1 &&
        st.accepted.length >= 2 &&
        full(st) &&
        full(steps[i + 1]) &&
        steps[i + 1].window === st.window,
    );
    if (!s) return null;
    const shift = s.accepted.length - 1;
    return P(
      "A step that accepts several tokens does not rebuild the window. Every guess it keeps keeps its token; only ",
      "where the guess stands changes, because positions count from the last accepted token. Step ",
      fact("multi_step", s.index),
      " accepted ",
      fact("multi_accepted", s.accepted.length),
      " tokens. At the next step every kept guess stands ",
      fact("multi_shift", shift),
      ` ${shift === 1 ? "position" : "positions"} further on than it did. That is one position for each of the `,
      fact("multi_accepted", s.accepted.length),
      " tokens accepted, less one: the kept level became the first level, and each level's guesses sit one position ",
      "past the level before it.",
    );
  }

  /** Where the draft tokens this run kept came from: the source the pool last took each kept candidate from
   * (`derived.kept_from`). @param {Run} run */
  function keptFrom(run) {
    /** @type {Record<string, number>} */
    const from = { window: 0, text: 0, copy: 0 };
    run.t.parallel.steps.forEach((_, i) => {
      const d = run.derived(i);
      if (d.kept_from) from[d.kept_from] += d.kept;
    });
    const total = from.window + from.text + from.copy;
    if (!total) return null;
    return P(
      "Over the whole run its steps kept ",
      fact("kept_total", total),
      ` draft ${total === 1 ? "token" : "tokens"}: `,
      fact("kept_window", from.window),
      " from n-grams the pool last took from the window's columns",
      run.config.pool === "paper"
        ? ""
        : [", ", fact("kept_text", from.text), " from n-grams of the text (the prompt's and the answer's)"],
      from.copy ? [", ", fact("kept_copy", from.copy), " from prompt lookup's copies"] : "",
      ".",
    );
  }

  /** Why the lookup under x found nothing: the pool held no n-gram under x's key; and where the prompt holds the same
   * text as another token (with a leading space), that a key is one exact token. @param {Run} run @param {number} x */
  function noKey(run, x) {
    const shown = (/** @type {number} */ t) => `“${Lade.dom.cellText(run.text(t), 0)}”`,
      bare = run.text(x).trim(),
      near = bare ? run.t.prompt_ids.find((t) => t !== x && run.text(t).trim() === bare) : undefined;
    return (
      ` The pool held no n-gram under x = ${shown(x)}` +
      (near === undefined
        ? "."
        : `; the prompt held ${shown(near)}, another token: a key is one exact token, its leading space included.`)
    );
  }

  /** @param {number} n @param {number[]} edges */
  const bucket = (n, edges) => {
    const i = edges.findIndex((e) => n <= e);
    return i < 0 ? edges.length : i;
  };
  /** @param {Run} run @param {number} k */
  const next = (run, k) => run.parallel.steps[Math.min(k + 1, run.parallel.steps.length - 1)];
  /** @param {Run} run @param {Step} s */
  const full = (run, s) => s.kind === "lookahead" && s.levels_before.length === run.config.ngram - 1;

  /** @type {Chapter[]} */
  const CHAPTERS = [
    {
      title: "One token per forward pass",
      role: "lookahead",
      focus: ["ar-output", "progress-plot"],
      lanes: ["baseline"],
      start: [{ rule: "step 12, or the run's last step if it is shorter", at: (run) => Math.min(12, run.lastStep()) }],
      text: (run, k) => {
        const n = run.numbers("baseline", k),
          ms = 1000 * run.meanStep("baseline");
        return [
          P(
            "A language model writes text one token at a time: each decoding step is one ",
            term("forward pass"),
            " through the whole model, and it yields exactly one new token, because the next token depends on all the previous ones.",
          ),
          P(
            "Here, after step ",
            fact("step", k),
            ", ",
            run.greedy ? "greedy decoding (the most likely token, every time)" : "sampling",
            " has written ",
            fact("baseline_tokens", n.tokens),
            " tokens in ",
            fact("baseline_steps", n.steps),
            " forward passes (step 0 reads the prompt and writes the first token). ",
            "A decoding step took ",
            fact("baseline_step_ms", fmt(ms, 1)),
            " ms on average on ",
            h("span", { class: "source" }, Lade.notes.deviceName(run)),
            ".",
          ),
          P(
            "Every forward pass reads every weight of the model from memory to produce that one token. On a GPU, reading the ",
            "weights takes far longer than the arithmetic done with them: decoding is ",
            term("memory-bound"),
            " and the GPU's ",
            "arithmetic units sit mostly idle. Lookahead decoding spends that idle arithmetic on guessing ahead.",
          ),
        ];
      },
      predict: {
        question: "After 10 more steps, how many more tokens will autoregressive decoding have written?",
        options: ["5", "10", "20"],
        answer: (run, k) => {
          const more = run.numbers("baseline", k + 10).tokens - run.numbers("baseline", k).tokens;
          return { option: more <= 7 ? 0 : more <= 14 ? 1 : 2, text: `${more}: one per forward pass.`, step: k + 10 };
        },
      },
    },
    {
      title: "Jacobi decoding: guess a block, refine it in parallel",
      role: "jacobi",
      focus: ["window-view", "verify-view"],
      start: [
        {
          rule: "the first step where a guess it fed was right for its position but was not kept",
          test: (run, s) => s.kind === "jacobi" && run.window(s).rightFed > run.fromCandidate(s),
        },
        {
          rule: "the first step that fed a guess right for its position",
          test: (run, s) => s.kind === "jacobi" && run.window(s).rightFed > 0,
        },
        { rule: "step 1", at: () => 1 },
      ],
      text: (run, k) => {
        const s = run.step(k),
          t = run.jacobiTally(),
          W = run.config.window,
          c = run.compression();
        const out = [
          P(
            "Jacobi decoding guesses the next W tokens at once and feeds the whole guess block through the model in one ",
            "forward pass (a ",
            term("Jacobi iteration"),
            "). The prefix of the block the model agrees with is accepted, plus the model's next token. The model's ",
            "outputs after the guess tokens past that prefix become the next step's guesses: new guesses, which that ",
            "step checks, not necessarily better ones. It is exact: nothing is kept that the model would not have written.",
          ),
          P(
            "This run guesses ",
            fact("jacobi_window", W),
            " tokens per step and needed ",
            fact("jacobi_steps", run.parallel.steps.length),
            " steps for ",
            fact("jacobi_tokens", run.parallel.tokens.length),
            " tokens: ",
            fact("jacobi_compression", fmt(c)),
            ` tokens per step${c < 1.2 ? ", barely more than one" : ""}.`,
          ),
        ];
        if (s && s.kind === "jacobi") {
          const w = run.window(s),
            kept = run.fromCandidate(s),
            wrote = s.accepted.length;
          out.push(
            P(
              "In step ",
              fact("step", s.index),
              " the block fed ",
              fact("jacobi_window", W),
              " guesses; ",
              fact("step_right_fed", w.rightFed),
              w.rightFed === 1 ? " of them was right for its position" : " of them were right for their positions",
              ", and the step kept ",
              fact("step_kept", kept),
              w.rightFed > kept
                ? ": a guess counts only when every guess before it in the block is right in the same step, so a right guess behind a wrong one is thrown away."
                : w.rightFed
                  ? ": every right guess here sat behind right guesses only."
                  : ".",
              " The step wrote ",
              fact("step_wrote", wrote),
              ` ${wrote === 1 ? "token" : "tokens"}: `,
              !run.hasBonus(s)
                ? "kept guesses only (the run ended inside them)."
                : kept
                  ? "the kept guesses, then the model's own next token."
                  : "the model's own next token, as plain decoding writes one.",
            ),
          );
        }
        out.push(
          P(
            "Over the whole run, ",
            fact("right_guesses", t.right),
            " of the ",
            fact("fed_guesses", t.fed),
            " guesses fed were right ",
            "for their positions, and ",
            fact("kept_guesses", t.kept),
            ` ${t.kept === 1 ? "was" : "were"} kept; the other `,
            fact("stranded", t.stranded),
            ` right ${t.stranded === 1 ? "guess was" : "guesses were"} thrown away. Lookahead decoding keeps these trajectories instead.`,
          ),
        );
        return out;
      },
      predict: {
        question: "How many tokens will the next Jacobi step accept?",
        options: ["1", "2", "3 or more"],
        answer: (run, k) => {
          const s = next(run, k);
          return {
            option: bucket(s.accepted.length, [1, 2]),
            text: `${plural(s.accepted.length, "token")}.`,
            step: k + 1,
          };
        },
      },
    },
    {
      title: "The 2D window: keep the trajectories",
      role: "lookahead",
      focus: ["window-view", "trajectory-view"],
      // its last steps only: the ten the explorer shows hold the step a later chapter asks about (chapter 5's)
      zoomed: ["trajectory-view"],
      start: [
        {
          rule: "the first full-window step where a new guess is right",
          test: (run, s) => full(run, s) && run.window(s).rightNew >= 1,
        },
        { rule: "the first full-window step", test: (run, s) => full(run, s) },
        { rule: "step 1", at: () => 1 },
      ],
      text: (run, k) => {
        const s = run.step(k),
          c = run.config;
        if (!s || !s.levels_before.length) return [P("This step fed no window. Step forward to one that does.")];
        const w = run.window(s),
          tally = run.guessTally();
        return [
          P(
            "Lookahead decoding keeps the last N-1 Jacobi iterations as the levels of a 2D window: W columns, N-1 levels. ",
            "Each level is the previous iteration's guesses, shifted one position, so a column read top to bottom is one ",
            "trajectory: successive guesses for positions one apart.",
          ),
          relabelled(run),
          P(
            "This run uses W = ",
            fact("W", c.window),
            ", N = ",
            fact("N", c.ngram),
            ". In step ",
            fact("step", s.index),
            " the window holds ",
            fact("levels", s.levels_before.length),
            " of its ",
            fact("levels_max", c.ngram - 1),
            " levels; the model's output at the newest level is a new level, and ",
            fact("new_right", w.rightNew),
            " of its ",
            fact("new_made", s.new_level.length),
            ` ${s.new_level.length === 1 ? "guess" : "guesses"} ${w.rightNew === 1 || s.new_level.length === 1 ? "is" : "are"} right.`,
          ),
          w.full
            ? P(
                "Column 0 now spells the ",
                term("n-gram"),
                " ",
                run.column(s, 0).map((t) => tok(run, t)),
                ": a sequence the model produced itself, which the pool keeps in case the text needs it later.",
              )
            : null,
          P(
            "Right guesses are rare: over this run ",
            fact("guesses_right", tally.right),
            " of ",
            fact("guesses_made", tally.made),
            " new guesses (",
            fact("guesses_right_share", pct(tally.right / Math.max(tally.made, 1))),
            ") turned out right for their position. What pays is that ",
            "every column is kept as an n-gram, so a guess made for one place can be used wherever the text needs it.",
          ),
        ];
      },
      predict: {
        question: "How many of the next step's new guesses will turn out right?",
        options: ["0 or 1", "2 to 3", "4 or more"],
        answer: (run, k) => {
          const s = next(run, k),
            n = s.new_level.length ? run.window(s).rightNew : 0;
          return { option: bucket(n, [1, 3]), text: `${n} of ${s.new_level.length}.`, step: k + 1 };
        },
      },
    },
    {
      title: "The n-gram pool",
      role: "lookahead",
      focus: ["pool-view", "pool-plot"],
      start: [
        {
          rule: "the first lookahead step whose lookup found at least 2 candidates",
          test: (_, s) => s.kind === "lookahead" && s.candidates.length >= 2,
        },
        { rule: "the first step whose lookup found a candidate", test: (_, s) => s.candidates.length >= 1 },
        { rule: "step 1", at: () => 1 },
      ],
      text: (run, k) => {
        const s = run.step(k),
          d = run.derived(k).pool;
        if (!s || !d) return [P("No pool yet.")];
        const policy = {
          paper: "the window's columns only",
          output: "the window's columns and the text written so far",
          prompt: "the window's columns, the prompt and the text written so far",
        }[run.config.pool];
        const row = d.rows.find((r) => r.key === s.input_token),
          held = row ? row.items.length : 0;
        return [
          P(
            `The pool keeps n-grams under their first token. In this run it takes ${policy}. When the last accepted token `,
            "is x, the n-grams stored under x become the step's candidates. A key is one exact token, its leading space ",
            "included: “␣class” and “class” are two tokens, so two keys. Each key keeps at most G n-grams; a new one evicts the ",
            term("least recently added"),
            ". An n-gram the pool already holds counts as added again: it moves to the front and evicts nothing.",
          ),
          keptFrom(run),
          P(
            "Before step ",
            fact("step", s.index),
            "'s forward pass, the lookup under x = ",
            tok(run, s.input_token),
            " found ",
            fact("found", s.candidates.length),
            ` ${s.candidates.length === 1 ? "candidate" : "candidates"}. After the step the pool holds `,
            fact("pool_size", d.size),
            " n-grams under ",
            fact("pool_keys", d.keys),
            " keys: the step added ",
            fact("added", s.ngrams_added.length),
            " and evicted ",
            fact("evicted", s.ngrams_evicted.length),
            ", and x's key now holds ",
            fact("held", held),
            ".",
          ),
        ];
      },
      predict: {
        question: "How many candidates will the next step's lookup find?",
        options: ["none", "1 to 3", "4 or more"],
        answer: (run, k) => {
          const s = next(run, k);
          return {
            option: bucket(s.candidates.length, [0, 3]),
            text: `${plural(s.candidates.length, "candidate")}.${s.candidates.length ? "" : noKey(run, s.input_token)}`,
            step: k + 1,
          };
        },
      },
    },
    {
      title: "Verification: checked in the same forward pass",
      role: "lookahead",
      focus: ["verify-view", "la-output"],
      start: [
        {
          rule: "the first step whose winning candidate matched at least 2 tokens",
          test: (_, s) => s.winner >= 0 && s.match_lengths[s.winner] >= 2,
        },
        { rule: "the first step where a candidate matched", test: (_, s) => s.winner >= 0 },
        { rule: "step 1", at: () => 1 },
      ],
      text: (run, k, ctx) => {
        const s = run.step(k);
        if (!s || s.kind === "prefill") return [P("Step forward to a lookahead step.")];
        const kept = run.fromCandidate(s);
        /** @type {HTMLElement[]} */
        const out = [
          P(
            "The candidates ride in the same forward pass as the window. A candidate's token is accepted while it equals ",
            "what the model itself predicts there (its ",
            term("argmax"),
            "); the step emits the longest accepted prefix and then the ",
            "model's own next token, so even a step where nothing matches emits one token.",
          ),
          P(
            "In step ",
            fact("step", s.index),
            ", ",
            s.winner >= 0
              ? [
                  "candidate ",
                  fact("winner", s.winner + 1),
                  " matched ",
                  fact("matched", kept),
                  kept === 1 ? " token" : " tokens",
                ]
              : ["no candidate matched"],
            " and the step emitted ",
            fact("emitted", s.accepted.length),
            ` ${s.accepted.length === 1 ? "token" : "tokens"} in one forward pass.`,
          ),
        ];
        if (run.greedy) {
          out.push(
            P(
              "Every kept token is the model's own argmax at its position, so the text is exactly what ",
              term("greedy decoding"),
              " writes: on this run the two texts are ",
              fact("identical", run.identical() ? "identical" : "different"),
              ".",
            ),
          );
          out.push(...(Lade.chapterNumerics.numerics(ctx, fact, P) || []));
        } else {
          out.push(
            P(
              "This run samples. Then a draft token is accepted with its probability under the model and, after a rejection, ",
              "removed and the rest renormalised: each emitted token still has exactly the model's distribution.",
            ),
          );
        }
        return out;
      },
      predict: {
        question: "How many tokens will the next step emit?",
        options: ["1", "2", "3 or more"],
        answer: (run, k) => {
          const s = next(run, k);
          return {
            option: bucket(s.accepted.length, [1, 2]),
            text: `${plural(s.accepted.length, "token")}.`,
            step: k + 1,
          };
        },
      },
    },
    ...Lade.chapterRelatives.relatives,
    {
      title: "One step's anatomy: the attention mask",
      role: "lookahead",
      focus: ["mask-view", "window-view"],
      start: [
        {
          rule: "the first full-window step with at least 2 candidates",
          test: (run, s) => full(run, s) && s.candidates.length >= 2,
        },
        { rule: "the first full-window step", test: (run, s) => full(run, s) },
        { rule: "step 1", at: () => 1 },
      ],
      text: (run, k) => {
        const s = run.step(k),
          layout = run.layout(k);
        if (!s || !layout) return [P("Step forward to a lookahead step.")];
        return [
          P(
            "One forward pass carries x, every window level and every candidate. The attention mask keeps them apart: a window ",
            "token sees x, level 0 up to its own column and its own column above it; a candidate token sees x and its own earlier ",
            "tokens; neither branch sees the other. Everything also sees the committed text, held in the ",
            term("KV cache"),
            ". Positions are set so that each token reads a well-formed prefix.",
          ),
          P(
            "Step ",
            fact("step", s.index),
            " fed ",
            fact("fed", layout.size),
            " tokens: x, ",
            fact("levels", layout.levels),
            ` ${layout.levels === 1 ? "level" : "levels"} of `,
            fact("W", layout.window),
            " and ",
            fact("nodes", layout.nodes),
            ` verification ${layout.nodes === 1 ? "token" : "tokens"}`,
            s.tree ? [" (a ", term("token tree"), ")"] : "",
            ". Whether so wide a pass costs about what a one-token pass costs ",
            "depends on the hardware: the next chapter measures it.",
          ),
        ];
      },
      predict: {
        question: "How many tokens will the next step feed to the model?",
        options: ["under 20", "20 to 40", "over 40"],
        answer: (run, k) => {
          const layout = run.layout(k + 1),
            n = layout ? layout.size : 1;
          return { option: bucket(n, [19, 40]), text: `${n} tokens.`, step: k + 1 };
        },
      },
    },
    {
      title: "From tokens per step to seconds",
      role: "lookahead",
      focus: ["counter", "progress-plot"],
      start: [{ rule: "the run's last step", at: (run) => run.lastStep() }],
      text: (run, _k, ctx) => Lade.chapterSpeed.speed(run, ctx, fact, P),
      predict: Lade.chapterSpeed.speedQuestion,
      lab: true, // its GPU sentence reads the lab's predictions
    },
    {
      title: "Play with it",
      role: "lookahead",
      focus: [],
      start: [{ rule: "step 0", at: () => 0 }],
      text: (run) => [
        P(
          "You have seen every part. The explorer shows them all at once for any run: pick one from the gallery, open a ",
          "saved trace, or press “Run your own” to race lookahead decoding against greedy decoding on your own prompt with your own ",
          "W, N and G, greedy or sampling. The speed lab predicts what the same run would do on a GPU, on several, and with many users.",
        ),
        P("The run on screen now: ", h("span", { class: "source" }, run.settingsText()), "."),
      ],
    },
  ];

  /**
   * Where chapter `ch` opens on `run`: the first of its rules that some step satisfies, and whether that was its
   * first rule (the page says so when it was not). @param {Chapter} ch @param {Run} run
   */
  function chapterStart(ch, run) {
    for (let i = 0; i < ch.start.length; i++) {
      const rule = ch.start[i];
      const k = rule.at
        ? rule.at(run)
        : run.find((s) => /** @type {(r: Run, s: Step) => boolean} */ (rule.test)(run, s));
      if (k >= 0)
        return {
          k: Math.max(0, Math.min(k, run.lastStep())),
          rule: rule.rule,
          first: i === 0,
          wanted: ch.start[0].rule,
        };
    }
    return { k: 0, rule: "step 0", first: false, wanted: ch.start[0].rule };
  }

  return { CHAPTERS, chapterStart };
})();
window.Lade.lesson = LadeLesson;
