// @ts-check
// The lesson's speed chapter (`Lade.chapterSpeed`): the run against a CPU's measured cost curve and a GPU's modelled
// one, the paper's figures by data set and devices, the recorded Lookahead Parallelism run, and the chapter's
// question, each computed from the data the page carries.
const LadeChapterSpeed = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { h, fmt, cite } = Lade.dom;
  const GPU = { device: "h100", size: "7B" }; // the GPU the lesson compares with (the lab has all; its name is the lab's)

  /** @param {Run} run @param {LessonContext} ctx @param {typeof Lade.dom.fact} fact @param {typeof Lade.dom.P} P */
  function speed(run, ctx, fact, P) {
    const lab = ctx.lab,
      fed = run.meanFed();
    const ratio = run.meanStep("baseline") ? run.meanStep("parallel") / run.meanStep("baseline") : 0;
    const m = run.d.speed ? run.d.speed.lanes.parallel : null;
    /** @type {HTMLElement[]} */
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
            : ["parallel", "baseline"].some((lane) => run.ended(lane) === "stopped")
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
    const gpuName = ((lab && lab.devices.find((d) => d.id === GPU.device)) || { name: GPU.device }).name;
    const ran = run.d.lab,
      pred = ran ? ran.predictions[GPU.device][GPU.size].by_devices : null;
    if (gpu && ran && pred) {
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
          fact("compression_low", fmt(ran.run.compression_range[0])),
          " to ",
          fact("compression_high", fmt(ran.run.compression_range[1])),
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
    if (split && recorded)
      out.push(
        Lade.dom.More(
          `Lookahead Parallelism, run: one step dealt out over ${["", "one", "two", "three", "four"][recorded.devices] || "several"} processes`,
          ...split,
        ),
      );
    // the CPU curve to draw: the one the run's own machine measured in the process that recorded it, else the one
    // shipped with the page (each named with its machine)
    const own = Lade.curves.ownCurve(run),
      shipped = lab ? lab.cpu.single : null,
      cpu = own
        ? {
            points: own.points,
            name: own.name,
            description: `its curve measured ${(run.t.machine ? run.t.machine.curve_at : "").slice(0, 16).replace("T", " ")}`,
            where: "where this run was recorded",
          }
        : shipped && lab
          ? {
              points: Lade.curves.cpuPoints(lab),
              name: shipped.machine_name,
              description: shipped.machine_description || "",
              where: "apart from this run",
            }
          : null;
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
            ...(cpu
              ? [
                  {
                    name: `${Lade.curves.cpuLabel(cpu.name)} (measured)`,
                    color: Lade.dom.COLORS.baseline,
                    points: cpu.points,
                  },
                ]
              : []),
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
      const curve = cpu ? cpu.points : [],
        widths = run.t.parallel.steps.slice(1).map((st) => run.tokensFed(st));
      if (cpu && curve.length > 1 && widths.length && fed >= curve[0][0] && fed <= curve[curve.length - 1][0])
        chart.push(
          P(
            `The marker is this recording's own ratio; the curve was measured ${cpu.where}, on `,
            Lade.curves.cpuWords(cpu.name),
            " (",
            h("span", { class: "source" }, cpu.description),
            "), and reads ",
            fact("curve_at_fed", fmt(alongLogX(curve, fed))),
            "x at ",
            fact("fed", fmt(fed, 1)),
            own
              ? " tokens. The curve times forwards of one width at a time, and this run's steps fed from "
              : " tokens. They were measured at different times, and this run's steps fed from ",
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
   * @param {ParallelRun} r @param {typeof Lade.dom.fact} fact @param {typeof Lade.dom.P} P */
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
      .filter((r) => r.devices === 1 && /completion/.test(r.dataset))
      .sort((a, b) => b.speedup - a.speedup)[0];
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

  return { speed, speedQuestion };
})();
window.Lade.chapterSpeed = LadeChapterSpeed;
