// @ts-check
// The lesson's chapters that read more than one run (`Lade.lessonExtras`): the speed chapter (the run against this
// CPU's measured cost curve and a GPU's modelled one), the numerics paragraph of the verification chapter (what was
// measured in bf16), and the relatives chapter (why no draft model), each computed from the data the page carries.
const LadeLessonExtras = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { h, fmt, pct } = Lade.dom;
  const GPU = { device: "h100", name: "H100", size: "7B" }; // the GPU the lesson compares with (the lab has all)

  /**
   * The measured speed-up of the run and what it means: "faster" or "slower" only when every measurement of this
   * prompt and setting (this recording, and for a gallery run the bench's, from the gallery listing) is beyond the
   * noise between two greedy runs of one prompt (app/captions.py applies the same rule to the captions).
   * @param {Run} run @param {LabPage | null} lab @param {Boot} boot
   */
  function measured(run, lab, boot) {
    const speedup = run.time("baseline") / Math.max(run.time("parallel"), 1e-9);
    const noise = lab && lab.noise ? lab.noise.ratio : 1;
    const entry = boot.gallery.find((g) => g.name === run.handle),
      bench = entry && entry.speed ? entry.speed.bench : [];
    const all = [speedup, ...bench];
    const verdict = all.every((v) => v > noise)
      ? "faster than greedy"
      : all.every((v) => v < 1 / noise)
        ? "slower than greedy"
        : "about as fast as greedy";
    return { speedup, noise, bench, verdict };
  }

  /** @param {Run} run @param {LessonContext} ctx @param {typeof Lade.lesson.fact} fact @param {typeof Lade.lesson.P} P */
  function speed(run, ctx, fact, P) {
    const lab = ctx.lab,
      fed = run.meanFed();
    const ratio = run.meanStep("baseline") ? run.meanStep("parallel") / run.meanStep("baseline") : 0;
    const m = measured(run, lab, ctx.boot);
    const out = [
      P(
        "Compression, tokens per step, is only an upper bound on the speed-up: each step also pays for the tokens it ",
        "feeds. This run wrote ",
        fact("compression", fmt(run.compression())),
        " tokens per step, feeding ",
        fact("fed", fmt(fed, 1)),
        ` tokens per step on average. On ${run.t.device} such a step took `,
        fact("step_cost", fmt(ratio)),
        "x as long as a one-token step, so this recording ran at ",
        fact("speedup", fmt(m.speedup)),
        "x greedy's speed",
        m.bench.length
          ? `; the bench measured the same prompt and setting at ${m.bench.map((v) => `${fmt(v)}x`).join(", ")}`
          : "",
        `. On this CPU that is `,
        fact("verdict", m.verdict),
        ` (two greedy runs of one prompt differ by up to `,
        `${Math.round(100 * (m.noise - 1))}%, so smaller differences are noise).`,
      ),
    ];
    const gpu = lab && lab.gpu_curves ? lab.gpu_curves[GPU.device][GPU.size]["1"] : null;
    const pred = run.d.lab ? run.d.lab.predictions[GPU.device][GPU.size].by_devices : null;
    if (gpu && pred) {
      out.push(
        P(
          `The speed lab's roofline model (a prediction, not a measurement) puts this run's ${fmt(fed, 1)}-token steps `,
          `on one ${GPU.name} running a ${GPU.size} model at `,
          fact("gpu_cost", fmt(pred.step_cost[0])),
          "x a one-token forward, so the ",
          "same compression would give about ",
          fact("gpu_speedup", fmt(pred.predicted_speedup[0])),
          `x there (${fmt(pred.low[0])}x to `,
          `${fmt(pred.high[0])}x, from the run's step-to-step spread and the model's assumptions). The weights are read once per `,
          "forward whatever its width, so extra tokens are nearly free until the arithmetic catches up.",
        ),
      );
    }
    out.push(
      P(
        "That is why the paper's single-GPU figure is up to 1.8x on ",
        Lade.notes.term("MT-bench"),
        ", while its 4x on code ",
        "completion needs strong scaling over several GPUs (Lookahead Parallelism): each GPU carries part of a much wider window, so ",
        "compression grows while the time per step does not. The Speed lab has both, with their assumptions.",
      ),
    );
    if (gpu && lab) {
      const pts = lab.tokens.map((t, i) => [t, gpu.mid[i], gpu.low[i], gpu.high[i]]);
      out.push(
        Lade.charts.line({
          title: "Cost of one forward, relative to one token",
          xLabel: "tokens fed",
          yLabel: "× one-token forward",
          logX: true,
          height: 200,
          yMin: 0,
          width: 520,
          summary: `This CPU's measured cost and the ${GPU.name} model's, against tokens fed; this run fed ${fmt(fed, 1)} tokens a step at ${fmt(ratio)}x here.`,
          series: [
            { name: "this CPU (measured)", color: Lade.dom.COLORS.baseline, points: Lade.lab.cpuPoints(lab) },
            {
              name: `${GPU.name}, ${GPU.size} (model)`,
              color: Lade.dom.COLORS.parallel,
              dash: "5 3",
              points: pts.map((p) => [p[0], p[1]]),
            },
          ],
          bands: [{ color: Lade.dom.COLORS.parallel, points: pts.map((p) => [p[0], p[2], p[3]]) }],
          extra: [{ x: fed, y: ratio, label: "this run, here", color: Lade.dom.COLORS.wrong }],
          hover: (x) => `${x} tokens`,
        }).node,
      );
    }
    return out;
  }

  /** @type {Prediction} */
  const speedQuestion = {
    question: "On this CPU, is W = 15 (N = 5, G = 15) faster than W = 7 (N = 4, G = 7)?",
    options: ["yes", "no"],
    answer: (_run, _k, ctx) => {
      const lab = ctx.lab && ctx.lab.cpu_choice;
      if (!lab) return { option: -1, text: "no bench result is shipped for this device." };
      return {
        option: lab.wide > lab.narrow ? 0 : 1,
        text:
          `${lab.wide > lab.narrow ? "yes" : "no"}: the bench measured ` +
          `${fmt(lab.wide)}x greedy's speed for W=15 against ${fmt(lab.narrow)}x for W=7 on this CPU (medians over the benchmark ` +
          `prompts)` +
          (lab.wide > lab.narrow ? "." : ": the wider window's extra tokens cost more than they bring here."),
      };
    },
  };

  /** What was measured in bf16 (issue: is it really identical?), if the page carries it. @param {LessonContext} ctx
   * @param {typeof Lade.lesson.fact} fact @param {typeof Lade.lesson.P} P */
  function numerics(ctx, fact, P) {
    const n = ctx.lab && ctx.lab.numerics;
    if (!n) return null;
    const f32 = n.float32,
      bf = n.bfloat16;
    const parted = bf.rows.filter((r) => !r.identical && r.first_divergence !== null && r.logit_gap !== null);
    const ex = parted.find((r) => r.prompt === ctx.run.t.prompt) || parted[0];
    const out = [
      P(
        "Is it really identical? Measured on this CPU (",
        f32.source,
        ", ",
        bf.source,
        "): in fp32 lookahead's text was ",
        "identical to greedy's on ",
        fact("fp32_identical", f32.identical),
        ` of ${f32.prompts} benchmark prompts; in bf16 on `,
        fact("bf16_identical", bf.identical),
        ` of ${bf.prompts}.`,
      ),
    ];
    if (ex) {
      const same = ex.wide_first_divergence === ex.first_divergence;
      out.push(
        P(
          `On the prompt “${ex.prompt.slice(0, 60)}${ex.prompt.length > 60 ? "…" : ""}” in bf16 the texts part at token #`,
          fact("bf16_divergence", Number(ex.first_divergence)),
          ...(Number(ex.logit_gap) === 0
            ? [
                ", where the model's two most likely tokens are tied (a logit gap of ",
                fact("bf16_gap", 0),
                " after bf16's rounding, so either is the argmax): greedy goes on “",
              ]
            : [
                ", where the model's two most likely tokens differ by ",
                fact("bf16_gap", fmt(Number(ex.logit_gap), 4)),
                " in logit: greedy goes on “",
              ]),
          h("span", { class: "tk" }, Lade.dom.proseText(ex.greedy_text)),
          "”, lookahead “",
          h("span", { class: "tk" }, Lade.dom.proseText(ex.lookahead_text)),
          "”. ",
          ex.wide_first_divergence === null
            ? "Greedy fed its own tokens in one wider pass agrees with itself there."
            : [
                `Greedy itself, fed its own tokens in one wider pass, first differs at token #`,
                fact("bf16_wide", ex.wide_first_divergence),
                same ? ": the same place. A wider pass rounds bf16 differently; the algorithm changed nothing." : ".",
              ],
        ),
      );
    }
    return out;
  }

  /** Where this race's lookahead lanes get their candidates, in words chosen by their settings. @param {Run} run */
  function lookaheadSource(run) {
    const la = run.lanes().filter((l) => l.method === "lookahead");
    const config = (/** @type {string} */ id) => run.settings(id).config;
    if (la.some((l) => l.kind === Lade.dom.HYBRID)) {
      return (
        "This race's lookahead lane also verifies prompt lookup's copies of the text: it is a hybrid (named " +
        "“Lookahead + prompt lookup” here), and the verification view labels its copied candidates."
      );
    }
    const pools = new Set(la.map((l) => config(l.id).pool));
    if (pools.size === 1 && pools.has("paper")) {
      return (
        "Lookahead needs neither: its guesses come from the model itself (this race's lookahead keeps only its " +
        "window's n-grams, the paper's method)."
      );
    }
    return (
      "Lookahead needs neither: its guesses come from the model itself and from n-grams of the text it has read (this " +
      `race's pool also takes the ${[...pools]
        .filter((p) => p !== "paper")
        .map((p) => (p === "prompt" ? "prompt's" : "answer's"))
        .join(" and ")}).`
    );
  }

  /** Who needed the fewest steps and who was fastest on the clock, and why, for the race on screen.
   * @param {Run} run @param {LessonContext} ctx @param {typeof Lade.lesson.fact} fact @param {typeof Lade.lesson.P} P */
  function raceVerdict(run, ctx, fact, P) {
    const others = run.lanes().filter((l) => l.id !== "baseline");
    const name = (/** @type {any} */ l) => run.laneWord(l.id);
    const fewest = others.reduce((a, b) => (b.run.steps.length < a.run.steps.length ? b : a));
    const speed = (/** @type {any} */ l) => run.time("baseline") / Math.max(run.time(l.id), 1e-9);
    const bySpeed = [...others].sort((a, b) => speed(b) - speed(a));
    const noise = ctx.lab && ctx.lab.noise ? ctx.lab.noise.ratio : 1;
    const tie = bySpeed.length > 1 && speed(bySpeed[0]) / speed(bySpeed[1]) <= noise;
    const steps = others.map((l, i) => [i ? ", " : "", `${name(l)} `, fact(`steps_${l.kind}`, l.run.steps.length)]);
    const clock = tie
      ? [
          "on the clock ",
          fact("fastest", `${name(bySpeed[0])} and ${name(bySpeed[1])}`),
          " were about as fast (",
          fact("fastest_speed", fmt(speed(bySpeed[0]))),
          "x and ",
          fact("second_speed", fmt(speed(bySpeed[1]))),
          `x greedy's speed, within the ${Math.round(100 * (noise - 1))}% two greedy runs differ by).`,
        ]
      : [
          "fastest on the clock: ",
          fact("fastest", name(bySpeed[0])),
          ", at ",
          fact("fastest_speed", fmt(speed(bySpeed[0]))),
          "x greedy's speed.",
        ];
    const pld = others.find((l) => l.kind === "pld"),
      plain = others.find((l) => l.kind === "lookahead");
    const why =
      fewest === pld && plain
        ? [
            " Prompt lookup copies the prompt up to ",
            fact("pld_tokens", run.settings(pld.id).draft.tokens),
            " tokens at a time, while a lookahead candidate is at most ",
            fact("la_candidate", run.settings(plain.id).config.ngram - 1),
            " guessed tokens (N − 1); on new text it finds only what the text already holds.",
          ]
        : [];
    return [
      P(
        "Fewest steps: ",
        fact("fewest", name(fewest)),
        " (",
        steps,
        `; ${run.laneWord("baseline")} `,
        fact("steps_greedy", run.baseline.steps.length),
        "); ",
        clock,
        why,
      ),
    ];
  }

  /** The relatives chapter: why lookahead needs no draft model, on a race of one prompt across the methods. @type {Chapter} */
  const relatives = {
    title: "Why not a draft model?",
    role: "race",
    focus: ["relatives-view", "progress-plot"],
    start: [{ rule: "the race's last step", at: (run) => run.lastStep() }],
    text: (run, _k, ctx) => {
      const fact = Lade.lesson.fact,
        P = Lade.lesson.P,
        others = run.lanes().filter((l) => l.id !== "baseline");
      const rate = (/** @type {string} */ id) =>
        run.d.metrics && run.d.metrics[id] ? run.d.metrics[id].draft_acceptance_rate : 0;
      const same = run.greedy && run.lanes().every((l) => l.run.tokens.join() === run.baseline.tokens.join());
      const out = [
        P(
          "Speculative decoding lets a small draft guess the next tokens and the large model verify them in one pass, as ",
          "lookahead's verification branch does. But a ",
          Lade.notes.term("draft model"),
          " is a second model to choose, hold in memory ",
          "and run (off-the-shelf ones work; trained ones have more guesses kept). ",
          Lade.notes.term("prompt lookup", "Prompt lookup"),
          " needs no second model but helps only where the answer repeats the prompt or itself. ",
          lookaheadSource(run),
        ),
        P(
          `Here one prompt, whose answer copies code it was given, was raced on one clock on ${run.t.device}: `,
          others.map((l, i) => [
            i ? (i === others.length - 1 ? " and " : ", ") : "",
            run.laneWord(l.id),
            " wrote ",
            fact(`tps_${l.kind}`, fmt(run.compression(l.id))),
            " tokens per step",
          ]),
          `, against 1 for greedy decoding. `,
          same ? ["All ", fact("identical_lanes", run.lanes().length), " texts are identical to greedy's."] : "",
        ),
        ...raceVerdict(run, ctx, fact, P),
      ];
      const early = others.find((l) => l.method === "early-exit");
      if (early) {
        out.push(
          P(
            "The early-exit draft is this model's own first layers: no extra weights, but this model was not trained to exit ",
            "early, so only ",
            fact("early_exit_rate", pct(rate(early.id))),
            " of its draft tokens were kept and it ran at ",
            fact("early_exit_speed", fmt(run.time("baseline") / Math.max(run.time(early.id), 1e-9))),
            "x greedy's speed: a draft pays only as ",
            "often as its guesses are right.",
          ),
        );
      }
      return out;
    },
    predict: {
      question: "In how many of prompt lookup's steps did it accept more tokens than a lookahead step ever can (N)?",
      options: ["none", "1 to 3", "4 or more"],
      answer: (run, k) => {
        const pld = run.lanes().find((l) => l.kind === "pld"),
          plain = run.lanes().find((l) => l.kind === "lookahead");
        if (!pld || !plain)
          return { option: -1, text: "this run races no prompt lookup lane beside the paper's lookahead.", step: k };
        const N = run.settings(plain.id).config.ngram,
          steps = pld.run.steps;
        const longer = steps.filter((s) => s.accepted.length > N).length;
        const most = Math.max(...steps.map((s) => s.accepted.length));
        return {
          option: longer === 0 ? 0 : longer <= 3 ? 1 : 2,
          step: k,
          text:
            `${longer} of its ${steps.length} steps accepted more than N = ${N} tokens (at most ${most} in one step), ` +
            `while a lookahead step accepts at most N: ${N - 1} guessed tokens and the model's own next one.`,
        };
      },
    },
  };

  return { speed, speedQuestion, numerics, relatives: [relatives] };
})();
window.Lade.lessonExtras = LadeLessonExtras;
