// @ts-check
// The lesson's chapters that read more than one run (`Lade.lessonExtras`): the speed chapter (the run against this
// CPU's measured cost curve and a GPU's modelled one), the numerics paragraph of the verification chapter (what was
// measured in bf16), and the relatives chapter (why no draft model), each computed from the data the page carries.
const LadeLessonExtras = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { h, fmt, pct, cite } = Lade.dom;
  const GPU = { device: "h100", size: "7B" }; // the GPU the lesson compares with (the lab has all; its name is the lab's)

  /** @param {Run} run @param {LessonContext} ctx @param {typeof Lade.dom.fact} fact @param {typeof Lade.dom.P} P */
  function speed(run, ctx, fact, P) {
    const lab = ctx.lab,
      fed = run.meanFed();
    const ratio = run.meanStep("baseline") ? run.meanStep("parallel") / run.meanStep("baseline") : 0;
    const m = run.d.speed ? run.d.speed.lanes.parallel : null;
    const out = [
      P(
        "Compression, tokens per step, is only an upper bound on the speed-up: each step also pays for the tokens it ",
        "feeds. This run wrote ",
        fact("compression", fmt(run.compression())),
        " tokens per step, feeding ",
        fact("fed", fmt(fed, 1)),
        " tokens per step on average. On ",
        h("span", { class: "source" }, Lade.notes.deviceName(run)),
        " such a step took ",
        fact("step_cost", fmt(ratio)),
        "x as long as a one-token step (greedy's took ",
        fact("greedy_ms", fmt(1000 * run.meanStep("baseline"), 1)),
        " ms here)",
        m
          ? [
              ", so this recording ran at ",
              fact("speedup", fmt(m.speedup)),
              "x greedy's speed",
              m.bench.length
                ? [
                    "; the bench measured the same prompt and setting at ",
                    fact("bench_speedups", m.bench.map((v) => `${fmt(v)}x`).join(", ")),
                  ]
                : "",
              ". On that device it is ",
              fact("verdict", m.verdict),
              ": ",
              Lade.notes.bandWords(/** @type {Speed} */ (run.d.speed).band, fact),
              ".",
            ]
          : run.lanes().some((l) => run.running(l.id))
            ? ". Its speed-up is judged when the run ends."
            : [run.t.parallel, run.t.baseline].some((m) => m.stop_reason === "cancelled" || m.stop_reason === "budget")
              ? ". This run was stopped before its end, every lane at once, so its lanes' times are no speed-up."
              : [
                  ", so it ran at ",
                  fact("speedup", fmt(run.meanStep("parallel") ? run.time("baseline") / run.time("parallel") : 0)),
                  "x greedy's speed on the device that raced it. Greedy made too few steps to measure that device's ",
                  "noise (its first half against its second), so this run gets no verdict: a difference of a few ",
                  "percent may be chance.",
                ],
      ),
    ];
    const gpu = lab && lab.gpu_curves ? lab.gpu_curves[GPU.device][GPU.size]["1"] : null;
    const gpuName = ((lab && lab.devices.find((/** @type {any} */ d) => d.id === GPU.device)) || { name: GPU.device })
      .name;
    const pred = run.d.lab ? run.d.lab.predictions[GPU.device][GPU.size].by_devices : null;
    if (gpu && pred) {
      out.push(
        P(
          "The speed lab's roofline model (a prediction, not a measurement) puts this run's ",
          fact("fed", fmt(fed, 1)),
          "-token steps on one ",
          cite("devices", gpuName),
          " running a ",
          cite("sizes", GPU.size),
          " model at ",
          fact("gpu_cost", fmt(pred.step_cost[0])),
          "x a one-token forward, so the ",
          "same compression would give about ",
          fact("gpu_speedup", fmt(pred.predicted_speedup[0])),
          "x there (",
          fact("gpu_low", fmt(pred.low[0])),
          "x to ",
          fact("gpu_high", fmt(pred.high[0])),
          "x: with its steps resampled, this run's tokens per step range from ",
          fact("compression_low", fmt(run.d.lab.run.compression_range[0])),
          " to ",
          fact("compression_high", fmt(run.d.lab.run.compression_range[1])),
          ", so the range can pass its own compression, and the model's assumptions add theirs). The weights are ",
          "read once per ",
          "forward whatever its width, so extra tokens are nearly free until the arithmetic catches up.",
        ),
      );
    }
    const paper = paperFigures(lab, ctx.boot.paper, fact);
    if (paper) out.push(Lade.dom.More("What the paper measured, by data set and devices", P(...paper)));
    const recorded = lab && lab.parallel_run,
      split = recorded ? parallelism(recorded, fact, P) : null;
    if (split)
      out.push(
        Lade.dom.More(
          `Lookahead Parallelism, run: one step dealt out over ${["", "one", "two", "three", "four"][recorded.devices] || "several"} processes`,
          ...split,
        ),
      );
    if (gpu && lab) {
      const pts = lab.tokens.map((t, i) => [t, gpu.mid[i], gpu.low[i], gpu.high[i]]);
      const chart = [
        Lade.charts.line({
          title: "Cost of one forward, relative to one token",
          xLabel: "tokens fed",
          yLabel: "× one-token forward",
          logX: true,
          height: 200,
          yMin: 0,
          width: 520,
          summary: `A CPU's measured cost and the ${gpuName} model's, against tokens fed; this run fed ${fmt(fed, 1)} tokens a step at ${fmt(ratio)}x here.`,
          series: [
            {
              name: `${Lade.lab.cpuLabel(lab.cpu.single.machine_name)} (measured)`,
              color: Lade.dom.COLORS.baseline,
              points: Lade.lab.cpuPoints(lab),
            },
            {
              name: `${gpuName}, ${GPU.size} (model)`,
              color: Lade.dom.COLORS.parallel,
              dash: "5 3",
              points: pts.map((p) => [p[0], p[1]]),
            },
          ],
          bands: [{ color: Lade.dom.COLORS.parallel, points: pts.map((p) => [p[0], p[2], p[3]]) }],
          extra: [{ x: fed, y: ratio, label: "this run, here", color: Lade.dom.COLORS.wrong }],
          hover: (x) => `${x} tokens`,
        }).node,
      ];
      const curve = Lade.lab.cpuPoints(lab),
        widths = run.t.parallel.steps.slice(1).map((st) => run.tokensFed(st));
      if (curve.length > 1 && widths.length && fed >= curve[0][0] && fed <= curve[curve.length - 1][0])
        chart.push(
          P(
            "The marker is this recording's own ratio; the curve was measured apart, on ",
            Lade.lab.cpuWords(lab.cpu.single.machine_name),
            " (",
            h("span", { class: "source" }, lab.cpu.single.machine_description),
            "), and reads ",
            fact("curve_at_fed", fmt(alongLogX(curve, fed))),
            "x at ",
            fact("fed", fmt(fed, 1)),
            " tokens. They were measured at different times, and this run's steps fed from ",
            fact("fed_min", Math.min(...widths)),
            " to ",
            fact("fed_max", Math.max(...widths)),
            " tokens: the mean cost of steps of many widths need not sit on the curve at their mean width.",
          ),
        );
      out.push(Lade.dom.More("A CPU's measured cost beside the GPU model's, on one chart", ...chart));
    }
    return out;
  }

  /** The recorded Lookahead Parallelism run (labdata `_parallel_run`): what is split, what each process fed beside
   * what one device would have, what travels, and why it makes no speed claim.
   * @param {any} r @param {typeof Lade.dom.fact} fact @param {typeof Lade.dom.P} P */
  function parallelism(r, fact, P) {
    const k = r.devices,
      s = r.setting,
      decoding = r.step_index.length;
    const dashes = ["", "6 3", "2 3", "8 3 2 3"];
    const chart = Lade.charts.line({
      title: "Tokens fed per step: one device against each process's share",
      xLabel: "step",
      yLabel: "tokens fed",
      height: 200,
      yMin: 0,
      width: 520,
      summary:
        `Tokens fed per step, steps ${r.step_index[0]} to ${r.step_index[decoding - 1]}: one device would have fed ` +
        `${fmt(r.mean_one, 1)} on average; the ${k} processes fed ${r.mean_ranks.map((/** @type {number} */ v) => fmt(v, 1)).join(" and ")}.`,
      series: [
        {
          name: "one device, the whole step",
          color: Lade.dom.COLORS.baseline,
          points: r.step_index.map((/** @type {number} */ i, /** @type {number} */ j) => [i, r.fed_one[j]]),
        },
        ...r.fed_ranks.map((/** @type {number[]} */ fed, /** @type {number} */ rank) => ({
          name: `process ${rank + 1}`,
          color: [Lade.dom.COLORS.parallel, Lade.dom.COLORS.verify, Lade.dom.COLORS.bonus][rank % 3],
          dash: dashes[(rank + 1) % dashes.length],
          points: r.step_index.map((/** @type {number} */ i, /** @type {number} */ j) => [i, fed[j]]),
        })),
      ],
      hover: (x) => `step ${x}`,
    }).node;
    return [
      P(
        "Lookahead Parallelism deals one step out over several devices, and every device holds the whole model: no ",
        "layer or weight is split, so this is not model sharding (tensor or pipeline parallelism). What is split is the ",
        "step. Each device takes a block of the window's columns and some of the candidates, and feeds x, its columns ",
        "at every level, level 0's columns left of its block (a guess at level 0 sees those left of it) and ",
        "its candidates through its own copy of the model.",
      ),
      P(
        "A recorded run: ",
        fact("par_devices", k),
        " processes, each holding the whole ",
        h("span", { class: "source" }, r.model),
        " on one machine's CPU, W = ",
        fact("par_window", s.window),
        ", N = ",
        fact("par_ngram", s.ngram),
        ", G = ",
        fact("par_guess", s.guess),
        s.tree ? "" : " (candidates laid out plainly, as the paper does)",
        ", wrote ",
        fact("par_tokens", r.tokens),
        " tokens in ",
        fact("par_steps", r.steps),
        " steps",
        r.identical ? ", the same tokens as greedy decoding in its " : " (not the tokens greedy decoding wrote in its ",
        fact("par_greedy_steps", r.greedy_steps),
        r.identical ? " steps." : " steps).",
        " Had each step run on one device it would have fed ",
        fact("par_fed_one", fmt(r.mean_one, 1)),
        " tokens on average; dealt out, the processes fed ",
        r.mean_ranks.map((/** @type {number} */ v, /** @type {number} */ i) => [
          i ? (i === k - 1 ? " and " : ", ") : "",
          fact(`par_fed_${i + 1}`, fmt(v, 1)),
        ]),
        ", and the busier of them, step by step, ",
        fact("par_busiest", fmt(r.mean_busiest, 1)),
        ". The speed lab's simulation deals a full step of this run's average width the same way (every level and all ",
        "G candidates, as many tokens in all as the average step fed) and gives ",
        fact("par_simulated", fmt(r.simulated_busiest, 1)),
        " for the busiest device; the run's steps were not all full (warm-up, fewer candidates), so the two differ.",
      ),
      chart,
      P(
        "What travels each step: one all-gather in which each process sends ",
        fact("par_gathered", fmt(r.gathered_bytes, 0)),
        " bytes on average (how many tokens it fed, its forward's time, the token after x, its new-level tokens and its ",
        "candidates' predictions, padded to the longest), after which every ",
        "process runs the same verification and reaches the same verdict, new level and pool. On the ",
        fact("par_broadcasts", r.broadcast_steps),
        " of ",
        fact("par_decoding", decoding),
        " steps that accepted a candidate's tokens, the process that verified them also broadcast their keys and ",
        "values",
        r.kv_bytes_per_token ? [", ", fact("par_kv_kb", fmt(r.kv_bytes_per_token / 1000, 1)), " KB a token"] : "",
        ".",
      ),
      P(
        "This run makes no speed claim: its processes shared one machine's CPU cores, so their wall time says nothing ",
        "of devices working side by side. Recorded on ",
        h("span", { class: "source" }, r.recorded_at),
        " with ",
        h("code", {}, r.command),
        ".",
      ),
    ];
  }

  /** A curve's value at x, read along a log-x axis as the chart draws it (straight between its points there).
   * @param {number[][]} points [x, y], x ascending @param {number} x */
  function alongLogX(points, x) {
    const found = points.findIndex((p) => p[0] >= x);
    const i = Math.max(1, found < 0 ? points.length - 1 : found);
    const [x0, y0] = points[i - 1],
      [x1, y1] = points[i];
    const f = (Math.log(x) - Math.log(x0)) / (Math.log(x1) - Math.log(x0));
    return y0 + f * (y1 - y0);
  }

  /** The paper's figures as its register states them (the boot's claims, the lab's rows): they differ in data set as
   * well as in device count, so each is named with both. @param {LabPage | null} lab @param {Boot["paper"]} claims
   * @param {typeof Lade.dom.fact} fact */
  function paperFigures(lab, claims, fact) {
    const paper = lab && lab.paper;
    if (!paper) return null;
    const code = paper.rows
      .filter((/** @type {any} */ r) => r.devices === 1 && /completion/.test(r.dataset))
      .sort((/** @type {any} */ a, /** @type {any} */ b) => b.speedup - a.speedup)[0];
    if (!code) return null;
    const [before, after] = claims.one_device.split("MT-bench");
    return [
      "The paper's figures differ in their data as well as in their devices. On one GPU: “",
      cite("paper", before),
      Lade.notes.term("MT-bench"),
      cite("paper", after),
      "” (chat, the abstract), and up to ",
      fact("paper_code_one_gpu", fmt(code.speedup)),
      "x on ",
      cite("paper", code.dataset),
      " (",
      cite("paper", `${code.model} ${code.model_size}`),
      ", the blog's figure). On several GPUs: “",
      cite("paper", claims.several),
      "” (the abstract), with Lookahead Parallelism: each GPU holds the whole model (this is not model sharding) and ",
      "computes part of a much wider window and of the candidates, so compression can grow while the time per step ",
      "does not. The Speed lab has each figure with its source.",
    ];
  }

  /** @type {Prediction} */
  const speedQuestion = {
    question: "On the CPU the bench ran on, is W = 15 (N = 5, G = 15) faster than W = 7 (N = 4, G = 7)?",
    options: ["yes", "no"],
    answer: (_run, _k, ctx) => {
      const lab = ctx.lab && ctx.lab.cpu_choice;
      if (!lab) return { option: -1, text: "no bench result is shipped for this device." };
      return {
        option: lab.wide > lab.narrow ? 0 : 1,
        text:
          `${lab.wide > lab.narrow ? "yes" : "no"}: the bench measured ` +
          `${fmt(lab.wide)}x greedy's speed for W=15 against ${fmt(lab.narrow)}x for W=7 on ` +
          `${lab.machine ? `the ${lab.machine}` : "a CPU whose machine is not recorded"} (medians over the benchmark ` +
          `prompts)` +
          (lab.wide > lab.narrow ? "." : ": the wider window's extra tokens cost more than they bring here."),
      };
    },
  };

  /** What was measured in bf16 (issue: is it really identical?), if the page carries it. @param {LessonContext} ctx
   * @param {typeof Lade.dom.fact} fact @param {typeof Lade.dom.P} P */
  function numerics(ctx, fact, P) {
    const n = ctx.lab && ctx.lab.numerics;
    if (!n) return null;
    const f32 = n.float32,
      bf = n.bfloat16;
    const parted = bf.rows.filter((r) => !r.identical && r.first_divergence !== null && r.logit_gap !== null);
    const ex = parted.find((r) => r.prompt === ctx.run.t.prompt) || parted[0];
    const out = [
      P(
        "Is it really identical? Measured on ",
        f32.machine === bf.machine
          ? Lade.lab.cpuWords(f32.machine)
          : [Lade.lab.cpuWords(f32.machine), " (fp32) and ", Lade.lab.cpuWords(bf.machine), " (bf16)"],
        ": in fp32 lookahead's text was ",
        "identical to greedy's on ",
        fact("fp32_identical", f32.identical),
        " of ",
        fact("fp32_prompts", f32.prompts),
        " benchmark prompts; in bf16 on ",
        fact("bf16_identical", bf.identical),
        " of ",
        fact("bf16_prompts", bf.prompts),
        ".",
      ),
    ];
    if (ex) {
      const more = [];
      const same = ex.wide_first_divergence === ex.first_divergence;
      more.push(
        P(
          "On the prompt “",
          h("span", { class: "source" }, `${ex.prompt.slice(0, 60)}${ex.prompt.length > 60 ? "…" : ""}`),
          "” in bf16 the texts part at token #",
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
      const reproduced = parted.filter((r) => r.wide_first_divergence === r.first_divergence).length;
      more.push(
        P(
          "Over the ",
          fact("bf16_parted", parted.length),
          " prompts whose bf16 texts parted, greedy's own wider pass first differs at the same token on ",
          fact("bf16_reproduced", reproduced),
          reproduced === parted.length
            ? ": every divergence is the wider pass's rounding."
            : [
                "; on the others it parts elsewhere or not at all, so this control accounts for ",
                fact("bf16_reproduced", reproduced),
                " of the ",
                fact("bf16_parted", parted.length),
                " divergences, not all of them.",
              ],
        ),
      );
      out.push(Lade.dom.More("Where bf16 parted from greedy", ...more));
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
      return "Lookahead needs neither: its guesses come from the model itself (here its window's n-grams only, as in the paper).";
    }
    return (
      "Lookahead needs neither: its guesses come from the model itself and from n-grams of the text it has read (this " +
      `race's pool also takes the ${[...pools]
        .filter((p) => p !== "paper")
        .map((p) => (p === "prompt" ? "prompt's" : "answer's"))
        .join(" and ")}).`
    );
  }

  /**
   * @typedef {{ id: string, kind: string, word: string, steps: number, compression: number, speedup: number | null,
   *   cost: number, forward: number, verdict: string | null,
   *   setting: { window: number, ngram: number, guess: number } | null }} RaceLane
   * @typedef {{ lanes: RaceLane[], greedy: { word: string, steps: number }, fastest: string[] | null,
   *   band: Band | null, identical: number }} Race
   */

  /** The race on screen, as chapter 6 words a race. @param {Run} run @returns {Race} */
  function raceOf(run) {
    const sp = run.d.speed,
      base = run.meanStep("baseline");
    const same = run.greedy && run.lanes().every((l) => l.run.tokens.join() === run.baseline.tokens.join());
    return {
      lanes: run
        .lanes()
        .filter((l) => l.id !== "baseline")
        .map((l) => ({
          id: l.id,
          kind: l.kind,
          word: run.laneWord(l.id),
          steps: l.run.steps.length,
          compression: run.compression(l.id),
          speedup: sp ? sp.lanes[l.id].speedup : null,
          verdict: sp ? sp.lanes[l.id].verdict : null,
          cost: base ? run.meanStep(l.id) / base : 0,
          forward: run.meanForward("baseline") ? run.meanForward(l.id) / run.meanForward("baseline") : 0,
          setting: l.method === "lookahead" ? run.settings(l.id).config : null,
        })),
      greedy: { word: run.laneWord("baseline"), steps: run.baseline.steps.length },
      fastest: sp ? sp.fastest : null,
      band: sp ? sp.band : null,
      identical: same ? run.lanes().length : 0,
    };
  }

  /** The lab's summary of the second race (app/render/boot.py second_race), as chapter 6 words a race.
   * @param {any} s @returns {Race} */
  function raceOfSummary(s) {
    const greedy = s.lanes.find((/** @type {any} */ l) => l.id === "baseline");
    return {
      lanes: s.lanes
        .filter((/** @type {any} */ l) => l.id !== "baseline")
        .map((/** @type {any} */ l) => ({ ...l, word: l.name, cost: l.step_cost, forward: l.forward_cost })),
      greedy: { word: greedy.name, steps: greedy.steps },
      fastest: s.fastest,
      band: s.band,
      identical: s.identical,
    };
  }

  /** A race's tokens per step, who needed the fewest steps and who was fastest on the clock, and, where the fewest
   * steps did not win the clock, the step cost that is why. `key` prefixes the facts' names (one race per prefix).
   * @param {Race} race @param {any[]} intro @param {string} key @param {typeof Lade.dom.fact} fact
   * @param {typeof Lade.dom.P} P */
  function raceWords(race, intro, key, fact, P) {
    const others = race.lanes,
      byId = (/** @type {string} */ id) => /** @type {RaceLane} */ (others.find((l) => l.id === id));
    const fewest = others.reduce((a, b) => (b.steps < a.steps ? b : a));
    const fastest = race.fastest ? race.fastest.map(byId) : [];
    const list = (/** @type {RaceLane[]} */ ls) =>
      ls.map((l, i) => (i ? (i === ls.length - 1 ? " and " : ", ") : "") + l.word).join("");
    const clock = !fastest.length
      ? ["the clock's verdict comes when the race ends."]
      : fastest.length > 1
        ? [
            "on the clock ",
            fact(`${key}fastest`, list(fastest)),
            " were about as fast (",
            fact(`${key}fastest_speed`, fmt(fastest[0].speedup || 0)),
            "x to ",
            fact(`${key}second_speed`, fmt(fastest[fastest.length - 1].speedup || 0)),
            "x greedy's speed): ",
            Lade.notes.bandWords(/** @type {Band} */ (race.band), (name, value) => fact(`${key}${name}`, value)),
            ".",
          ]
        : fastest[0].verdict === "slower than greedy"
          ? [
              "on the clock none beat greedy: the fastest of them, ",
              fact(`${key}fastest`, fastest[0].word),
              ", ran at ",
              fact(`${key}fastest_speed`, fmt(fastest[0].speedup || 0)),
              "x greedy's speed.",
            ]
          : [
              "fastest on the clock: ",
              fact(`${key}fastest`, fastest[0].word),
              ", at ",
              fact(`${key}fastest_speed`, fmt(fastest[0].speedup || 0)),
              `x greedy's speed (${fastest[0].verdict || "judged when the race ends"}).`,
            ];
    const why =
      fastest.length && !fastest.includes(fewest)
        ? [
            ` ${fewest.word[0].toUpperCase()}${fewest.word.slice(1)}'s fewer steps each took `,
            fact(`${key}fewest_cost`, fmt(fewest.cost)),
            "x a greedy step's time, ",
            fewest.forward >= 0.9 * fewest.cost
              ? ["nearly all of it its wider forward pass (", fact(`${key}fewest_forward`, fmt(fewest.forward)), "x)."]
              : [
                  "its forward pass ",
                  fact(`${key}fewest_forward`, fmt(fewest.forward)),
                  "x a greedy forward and the rest the engine's own work around it (building the step, the pool, verifying).",
                ],
          ]
        : [];
    return [
      P(
        ...intro,
        others.map((l, i) => [
          i ? (i === others.length - 1 ? " and " : ", ") : "",
          l.word,
          l.setting && !key // the second race runs the same setting: said once
            ? [
                " (W = ",
                fact(`${key}W`, l.setting.window),
                ", N = ",
                fact(`${key}N`, l.setting.ngram),
                ", G = ",
                fact(`${key}G`, l.setting.guess),
                ")",
              ]
            : "",
          " wrote ",
          fact(`${key}tps_${l.kind}`, fmt(l.compression)),
          " tokens per step",
        ]),
        ", against 1 for greedy. ",
        race.identical
          ? ["All ", fact(`${key}identical_lanes`, race.identical), " texts are identical to greedy's."]
          : "",
      ),
      P(
        "Fewest steps: ",
        fact(`${key}fewest`, fewest.word),
        " (",
        others.map((l, i) => [i ? ", " : "", `${l.word} `, fact(`${key}steps_${l.kind}`, l.steps)]),
        `; ${race.greedy.word} `,
        fact(`${key}steps_greedy`, race.greedy.steps),
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
      const fact = Lade.dom.fact,
        P = Lade.dom.P,
        others = run.lanes().filter((l) => l.id !== "baseline");
      const rate = (/** @type {string} */ id) =>
        run.d.metrics && run.d.metrics[id] ? run.d.metrics[id].draft_acceptance_rate : 0;
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
        ...raceWords(
          raceOf(run),
          [`Raced on one clock on ${Lade.notes.deviceName(run)}, on a prompt whose answer copies code it was given: `],
          "",
          fact,
          P,
        ),
      ];
      const early = others.find((l) => l.method === "early-exit"),
        sp = run.d.speed;
      if (early && sp) {
        out.push(
          Lade.dom.More(
            "The early-exit draft, more closely",
            P(
              "The early-exit draft is this model's own first layers: no extra weights, but this model was not trained to exit ",
              "early",
              run.settings(early.id).draft.schedule === "heuristic"
                ? [
                    ". Its draft length adapts (",
                    cite("methods", ctx.boot.methods.heuristic_schedule.says),
                    ", as ",
                    cite("methods", ctx.boot.methods.heuristic_schedule.whose),
                    " does); still, only ",
                  ]
                : ", so only ",
              fact("early_exit_rate", pct(rate(early.id))),
              " of its draft tokens were kept and it ran at ",
              fact("early_exit_speed", fmt(sp.lanes[early.id].speedup)),
              "x greedy's speed: a draft pays only as ",
              "often as its guesses are right.",
            ),
          ),
        );
      }
      const second = ctx.lab && ctx.lab.second_race;
      if (second)
        out.push(
          ...raceWords(
            raceOfSummary(second),
            [
              "Raced the same way on a prompt whose answer is new text (“",
              Lade.dom.proseText(second.prompt),
              "”, ",
              h("a", { href: Lade.links.url({ run: second.name }) }, "open that race"),
              "): ",
            ],
            "new_",
            fact,
            P,
          ),
        );
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
            `${longer} of its ${steps.length} steps accepted more than N = ${N} tokens (at most ${most} in one step); ` +
            `a lookahead step accepts at most N: ${N - 1} guesses and the model's own next token. Prompt lookup copies ` +
            `up to ${run.settings(pld.id).draft.tokens} tokens of the text at a time: long strides where the answer ` +
            "repeats the prompt, few where the text is new.",
        };
      },
    },
  };

  return { speed, speedQuestion, numerics, relatives: [relatives] };
})();
window.Lade.lessonExtras = LadeLessonExtras;
