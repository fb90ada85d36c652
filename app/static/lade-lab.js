// @ts-check
// The speed lab (`Lade.lab.view`): from tokens per step to seconds, for the run on screen. Everything it states is
// read off two documents lade_core/measure/labdata.py makes: the lab's page data (boot.lab: this CPU's measured
// cost curves, each GPU x model size x batch curve with its low/mid/high from the roofline's stated bounds, the
// paper's rows, the server thresholds, a Lookahead Parallelism scenario) and the run's own predictions
// (run.d.lab). The browser computes no number it shows; it picks, formats and draws. Every GPU figure says it is a
// model's prediction (or, over several devices, a simulation), and carries its range and where the range comes from.
const LadeLab = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { h, fmt, COLORS, fact, cite } = Lade.dom;

  const { cpuLabel, ownCurve, cpuPoints } = Lade.curves;

  /** A device's name in its register (roofline.py ACCELERATORS), its id where the register lacks it.
   * @param {LabPage} page @param {string} id */
  const deviceName = (page, id) =>
    id === "cpu" ? "CPU" : (page.devices.find((d) => d.id === id) || { name: id }).name;

  /** @param {number} x */
  const times = (x) => `${fmt(x)}x`;
  /** @param {(number | null)[] | null | undefined} r */
  const span = (r) => (r && r[0] !== null && r[1] !== null ? `${times(r[0])} to ${times(r[1])}` : "not recorded");
  /** A range as two named facts ("name_low" to "name_high"), each followed by its unit; one value where both ends
   * read the same ("name_low" alone), and null where an end is not recorded. @param {string} name
   * @param {(number | null)[] | null | undefined} r @param {string} [unit] */
  const between = (name, r, unit = "x") =>
    r && r[0] !== null && r[1] !== null && r[0] !== undefined && r[1] !== undefined
      ? fmt(r[0]) === fmt(r[1])
        ? [fact(`${name}_low`, fmt(r[0])), unit]
        : [fact(`${name}_low`, fmt(r[0])), `${unit} to `, fact(`${name}_high`, fmt(r[1])), unit]
      : null;
  /** A named factor: its number is the fact, "x" its unit. @param {string} name @param {number} x */
  const factor = (name, x) => [fact(name, fmt(x)), "x"];

  /** The selection, made consistent with the data: the CPU has one model and its measured batches; several
   * devices are simulated at batch 1 only. @param {LabPage} page @param {LabRunData} runLab @param {LabInputs} lab */
  function pick(page, runLab, lab) {
    const devices = [...page.devices.map((d) => d.id), "cpu"];
    const device = devices.includes(lab.device) ? lab.device : "h100";
    const sizes = device === "cpu" ? ["135M"] : page.model_sizes.map((m) => m.size);
    const size = sizes.includes(lab.size) ? lab.size : sizes[sizes.length > 3 ? 3 : 0];
    const pred = runLab.predictions[device][size];
    const batch = pred.batches.includes(lab.batch) ? lab.batch : 1;
    const k = batch === 1 && pred.devices.includes(lab.devices) ? lab.devices : 1;
    return { device, size, batch, k, sizes, devices, pred };
  }

  /** @param {string} label @param {string} value @param {string[][]} options @param {(v: string) => void} change @param {string} id */
  const choice = (label, value, options, change, id) =>
    h(
      "label",
      { class: "lab-choice" },
      label,
      " ",
      h(
        "select",
        { id, onchange: (/** @type {Event} */ ev) => change(/** @type {HTMLSelectElement} */ (ev.target).value) },
        options.map(([v, text]) => h("option", { value: v, selected: v === value }, text)),
      ),
    );

  /** The prediction for the selection, in sentences computed from the run's predictions. */
  function prediction(
    /** @type {LabPage} */ page,
    /** @type {LabRunData} */ runLab,
    /** @type {ReturnType<typeof pick>} */ sel,
  ) {
    const { device, size, batch, k, pred } = sel,
      run = runLab.run;
    const series = batch > 1 ? pred.by_batch : pred.by_devices,
      i = batch > 1 ? pred.batches.indexOf(batch) : k - 1;
    const cpu = device === "cpu",
      name = deviceName(page, device);
    const kind = cpu
      ? "Measured cost, predicted speed-up"
      : k > 1
        ? "A simulation, not a measurement"
        : pred.fits_in_memory === false
          ? [
              `A model's prediction, not a measurement, for a `,
              cite("sizes", size),
              ` model that does not fit one `,
              cite("devices", name),
              " (see the notes below)",
            ]
          : "A model's prediction, not a measurement";
    const measured = batch > 1 && page.cpu.batched ? page.cpu.batched : page.cpu.single; // the curve this batch reads
    const where = cpu
      ? [
          "On a CPU (",
          h(
            "span",
            { class: "source" },
            (batch > 1 ? null : pred.machine) ||
              (measured && measured.machine_description) ||
              "its machine not recorded",
          ),
          ")",
        ]
      : pred.fits_in_memory === false
        ? ["With its weights read once per step from several ", cite("devices", name), "s in a pipeline,"]
        : [
            "On ",
            k > 1 ? [fact("devices", k), " × "] : "one ",
            cite("devices", name),
            " with a ",
            cite("sizes", size),
            " model",
          ];
    /** @type {["measurement" | "assumptions", string]} */
    const part = cpu ? ["measurement", "the measured curve's quartiles"] : ["assumptions", "the model's assumptions"];
    // a CPU's series has the measured range, a GPU's the assumptions' (labdata.py)
    const ends = /** @type {(number | null)[][]} */ ([series[`${part[0]}_low`], series[`${part[0]}_high`]]);
    const spread = between("spread", [series.compression_low[i], series.compression_high[i]]),
      other = between(part[0], [ends[0][i], ends[1][i]]);
    /** @type {HTMLElement[]} */
    const out = [
      h(
        "p",
        { class: "lab-prediction", id: "lab-prediction" },
        h("b", {}, kind, ". "),
        where,
        batch > 1 ? [", serving ", fact("batch", batch), " sequences at once,"] : "",
        " this run's ",
        fact("compression", fmt(run.compression)),
        " tokens per step (",
        between("compression", run.compression_range, ""),
        " with its steps resampled) would give about ",
        h("b", { dataset: { value: series.predicted_speedup[i] } }, factor("speedup", series.predicted_speedup[i])),
        " greedy's speed: ",
        between("speedup", [series.low[i], series.high[i]]),
        ". Of that range, the run's step-to-step spread alone gives ",
        spread || "no range of its own",
        other ? [` and ${part[1]} alone `, other, "."] : `; ${part[1]} were not recorded.`,
      ),
    ];
    const fed = run.tokens_fed,
      crossover = pred.crossover_tokens ? pred.crossover_tokens[pred.batches.indexOf(batch)] : null; // run's context
    const bound = series.bound[i],
      cost = series.step_cost[i];
    out.push(
      h(
        "p",
        {},
        "A step feeds ",
        fact("fed", fmt(fed, 1)),
        " tokens per sequence",
        batch > 1 ? [" (", fact("fed_all", Math.round(batch * fed).toLocaleString("en")), " in all)"] : "",
        k > 1
          ? [
              ", ",
              fact("fed_busiest", fmt(/** @type {number[]} */ (series.tokens_per_device)[i], 1)),
              " on the busiest device,",
            ]
          : "",
        " and costs ",
        factor("step_cost", cost),
        " a one-token step",
        cpu
          ? " on that CPU's measured curve."
          : [
              `; the forward is ${bound}-bound`,
              crossover !== null && bound !== "overhead"
                ? [
                    " (this ",
                    cite("devices", name),
                    " turns compute-bound past about ",
                    fact("crossover", crossover),
                    " tokens per forward for a ",
                    cite("sizes", size),
                    " model at this batch)",
                  ]
                : "",
              ".",
            ],
      ),
    );
    const even = pred.break_even_batch;
    if (even) {
      out.push(
        h(
          "p",
          { id: "lab-break-even" },
          k > 1 ? "On one device, as the batch chart: " : "",
          even.predicted === null
            ? [
                "Lookahead keeps paying up to batch ",
                fact("largest_batch", even.largest_batch_tried),
                " here (predicted).",
              ]
            : even.predicted === 1 && even.range[0] === 1 && even.range[1] === 1
              ? [
                  "Lookahead does not pay even alone, at batch ",
                  h("b", {}, fact("break_even", 1)),
                  " (predicted, across its whole range): ",
                  whyItStops(even.why, fed),
                ]
              : [
                  `Lookahead stops paying at batch `,
                  h("b", {}, fact("break_even", even.predicted)),
                  even.range[0] === even.predicted && even.range[1] === even.predicted
                    ? " (predicted, at that batch across its whole range"
                    : [
                        " (predicted; between ",
                        fact("break_even_low", even.range[0] ?? "–"),
                        " and ",
                        even.range[1] === null
                          ? ["beyond ", fact("largest_batch", even.largest_batch_tried)]
                          : fact("break_even_high", even.range[1]),
                      ],
                  "): ",
                  whyItStops(even.why, fed),
                ],
        ),
      );
    }
    if (pred.notes && pred.notes.length) {
      out.push(
        h(
          "ul",
          { class: "lab-notes muted", "aria-label": "What this prediction assumes" },
          // sentences lade_core/measure/lab.py writes from the prediction's own numbers (tested there)
          pred.notes.map((/** @type {string} */ n) =>
            h("li", {}, h("span", { class: "source" }, `${n[0].toUpperCase()}${n.slice(1)}`), "."),
          ),
        ),
      );
    }
    return out;
  }

  /** Why lookahead stops paying at that batch, chosen by what bounds each forward there (labdata: `why`).
   * @param {WhyItStops | null} why @param {number} fed */
  function whyItStops(why, fed) {
    if (!why) return ""; // it never stops paying (labdata gives a reason wherever it does)
    const b = why.batch,
      n = (/** @type {string} */ one) => (b === 1 ? `one ${one}` : [fact("why_batch", b), ` ${one}s`]),
      each =
        b === 1
          ? ["one sequence of ", fact("fed", fmt(fed, 1)), " tokens"]
          : [n("sequence"), " of ", fact("fed", fmt(fed, 1)), " tokens each"];
    switch (why.reason) {
      case "lookahead crosses":
        return [
          "greedy's forward of ",
          n("token"),
          ` there is still ${why.greedy_bound}-bound, but lookahead's of `,
          each,
          " (",
          fact("why_tokens", Math.round(/** @type {number} */ (why.lookahead_tokens)).toLocaleString("en")),
          " tokens) is past the crossover and compute-bound: its extra tokens now cost arithmetic time, more than the compression brings back.",
        ];
      case "both compute":
        return [
          "at that batch even greedy's forward of ",
          n("token"),
          " is compute-bound, so every extra token lookahead feeds costs its share of arithmetic.",
        ];
      case "neither compute":
        return [
          `both forwards are still ${why.lookahead_bound}-bound there, but lookahead's `,
          each,
          " read and write more cache than the compression pays for.",
        ];
      default:
        return ["on that CPU's measured curves a step of ", each, " costs more than the compression brings back."];
    }
  }

  /** @param {LabPage} page @param {Run} run @param {LabRunData} runLab @param {ReturnType<typeof pick>} sel */
  function costChart(page, run, runLab, sel) {
    const { device, size, batch, pred } = sel,
      series = [],
      bands = [];
    // the CPU curve the lab's figures read: the run's own machine's at batch 1, else the shipped one of this batch
    const shipped = batch > 1 ? page.cpu.batched : page.cpu.single,
      own = batch === 1 ? ownCurve(run) : null,
      cpu = own
        ? { name: own.name, points: own.points, said: " (measured where this run was)" }
        : shipped && {
            name: shipped.machine_name,
            points: cpuPoints(page, batch),
            said: `${batch > 1 ? `, batch ${batch}` : ""} (measured)`,
          };
    if ((batch === 1 || device === "cpu") && cpu)
      series.push({
        name: `${cpuLabel(cpu.name)}, SmolLM2-135M${cpu.said}`,
        color: COLORS.baseline,
        points: cpu.points,
      });
    if (device !== "cpu") {
      const c = page.gpu_curves[device][size][String(batch)];
      const pts = page.tokens.map((t, i) => [t, c.mid[i], c.low[i], c.high[i]]);
      series.push({
        name: `${deviceName(page, device)}, ${size}, batch ${batch} (model)`,
        color: COLORS.parallel,
        dash: "5 3",
        points: pts.map((p) => [p[0], p[1]]),
      });
      bands.push({
        name: "the model's range (its assumptions' bounds)",
        color: COLORS.parallel,
        points: pts.map((p) => [p[0], p[2], p[3]]),
      });
    }
    const i = batch > 1 ? pred.batches.indexOf(batch) : 0,
      cost = (batch > 1 ? pred.by_batch : pred.by_devices).step_cost[i];
    return Lade.charts.line({
      title: "Cost of one forward pass, relative to one token",
      xLabel: "tokens fed per sequence",
      yLabel: "× a one-token forward",
      logX: true,
      yMin: 0,
      height: 230,
      series,
      bands,
      extra: [{ x: runLab.run.tokens_fed, y: cost, label: "the run on screen", color: COLORS.wrong }],
      summary: `Forward cost against tokens fed; the run on screen feeds ${fmt(runLab.run.tokens_fed, 1)} tokens at ${times(cost)}.`,
      hover: (x) => `${x} tokens`,
    }).node;
  }

  /** @param {LabPage} page @param {ReturnType<typeof pick>} sel */
  function batchChart(page, sel) {
    const b = sel.pred.by_batch,
      xs = sel.pred.batches;
    if (xs.length < 2)
      return h(
        "p",
        { class: "note" },
        sel.device === "cpu"
          ? "The machine that recorded this run measured one sequence at a time only (no batched curve in the same " +
              "place and settings), so there is no speed-up against batch size to draw for it."
          : "This model's caches fit one device at batch 1 only, so there is no speed-up against batch size to draw.",
      );
    // each server's example rule labelled by its own register entry's `chart_label` (two vLLM settings, two rules)
    const rules = (page.thresholds.servers || []).flatMap((s) =>
      s.off_from_batch ? [{ x: s.off_from_batch, label: s.chart_label || s.server, color: COLORS.verify }] : [],
    );
    return Lade.charts.line({
      title: `Speed-up against batch size, one device: ${deviceName(page, sel.device)}, ${sel.size}`,
      xLabel: "sequences per step (batch)",
      yLabel: "speed-up over greedy",
      logX: true,
      yMin: 0,
      height: 230,
      rules,
      series: [
        { name: "predicted speed-up", color: COLORS.parallel, points: xs.map((x, i) => [x, b.predicted_speedup[i]]) },
        { name: "greedy (1x)", color: COLORS.unchecked, dash: "2 3", points: xs.map((x) => [x, 1]) },
      ],
      bands: [{ name: "its range", color: COLORS.parallel, points: xs.map((x, i) => [x, b.low[i], b.high[i]]) }],
      summary: `Predicted speed-up from batch ${xs[0]} to ${xs[xs.length - 1]}: ${times(b.predicted_speedup[0])} to ${times(b.predicted_speedup[xs.length - 1])}.`,
      hover: (x) => {
        const i = xs.indexOf(x);
        return `batch ${x}: ${times(b.predicted_speedup[i])} (${span([b.low[i], b.high[i]])})`;
      },
    }).node;
  }

  /** @param {LabPage} page @param {ReturnType<typeof pick>} sel */
  function parallelChart(page, sel) {
    const wide = page.parallelism.wide,
      dflt = page.parallelism.default;
    const run = sel.device === "cpu" || sel.pred.devices.length < 2 ? null : sel.pred.by_devices;
    const name = (/** @type {string} */ id) => (page.devices.find((d) => d.id === id) || { name: id }).name;
    const line = (/** @type {Scenario} */ s) => s.devices.map((k, i) => [k, s.predicted_speedup[i]]);
    const series = [
      { name: `${wide.label}, ${wide.model_size} on ${name(wide.device)}`, color: COLORS.bonus, points: line(wide) },
      {
        name: `${dflt.label}, ${dflt.model_size} on ${name(dflt.device)}`,
        color: COLORS.baseline,
        dash: "5 3",
        points: line(dflt),
      },
    ];
    if (run)
      series.push({
        name: `the run on screen, ${sel.size} on ${name(sel.device)}`,
        color: COLORS.parallel,
        points: sel.pred.devices.map((k, i) => [k, run.predicted_speedup[i]]),
      });
    return Lade.charts.line({
      title: "Lookahead Parallelism, simulated: speed-up against devices",
      xLabel: "devices (each with a whole model)",
      yLabel: "speed-up over greedy on one",
      yMin: 0,
      height: 230,
      series,
      bands: [{ color: COLORS.bonus, points: wide.devices.map((k, i) => [k, wide.range[i][0], wide.range[i][1]]) }],
      summary: `A simulation: ${wide.label} goes from ${times(wide.predicted_speedup[0])} on one device to ${times(wide.predicted_speedup[7])} on eight.`,
      hover: (x) => `${x} devices: ${times(wide.predicted_speedup[x - 1])} (${wide.bound[x - 1]}-bound on one)`,
    }).node;
  }

  /** The two scenarios in words, each reason chosen by what bounds its forward on one device; `claims` the paper's
   * as the boot states them. @param {LabPage} page @param {Boot["paper"]} claims */
  function parallelWords(page, claims) {
    const { wide, default: dflt } = page.parallelism;
    const name = (/** @type {string} */ id) => (page.devices.find((d) => d.id === id) || { name: id }).name;
    const pays = (/** @type {Scenario} */ s, /** @type {string} */ key, /** @type {boolean} */ first) => {
      const label = h("span", { class: "source" }, first ? `${s.label[0].toUpperCase()}${s.label.slice(1)}` : s.label),
        last = s.devices.length - 1;
      const figures = [
        " (",
        factor(`${key}_one`, s.predicted_speedup[0]),
        " on one, ",
        factor(`${key}_top`, s.predicted_speedup[last]),
        " on ",
        fact(`${key}_devices`, s.devices.length),
        ")",
      ];
      return s.bound[0] === "compute"
        ? [
            label,
            " is compute-bound on one ",
            cite("devices", name(s.device)),
            " with a ",
            cite("sizes", s.model_size),
            " model, so dealing its window and candidates out over devices is what pays",
            figures,
          ]
        : [
            label,
            ` is already ${s.bound[0]}-bound on one `,
            cite("devices", name(s.device)),
            ", so more devices change little",
            figures,
          ];
    };
    const same = wide.source === dflt.source;
    const top = Math.max(...wide.predicted_speedup);
    return [
      pays(wide, "wide", true),
      "; ",
      pays(dflt, "default", false),
      ". ",
      same
        ? [
            "Both come from one sweep (",
            h("span", { class: "source" }, wide.source),
            "), so their compressions compare: ",
            fact("default_compression", fmt(dflt.compression)),
            " and ",
            fact("wide_compression", fmt(wide.compression)),
            " tokens per step.",
          ]
        : "",
      top <= wide.compression
        ? [
            " A simulated speed-up never passes the compression it starts from (a step still costs at least one forward), so the wide window stays under ",
            factor("wide_ceiling", wide.compression),
            ". The paper's multi-GPU figure (“",
            cite("paper", claims.several),
            "”) was measured with ",
            cite("paper", page.paper.models.HumanEval.split(" (")[0]),
            " models on code completion, whose compression this project did not measure.",
          ]
        : "",
      " Every device holds the whole model, so a scenario is only drawn for a model that fits one. These curves are ",
      "a simulation; ",
      page.parallel_run
        ? "this project's engine also runs Lookahead Parallelism for real, over several processes each holding the whole model, and the lesson shows a run it recorded (which makes no speed claim)."
        : "no run of Lookahead Parallelism is shipped with this page.",
    ];
  }

  /** The paper's measured rows beside the model's predictions at both compressions. @param {LabPage} page */
  function paperTable(page) {
    const budget = (/** @type {string} */ source) =>
      (page.paper.rows.flatMap((r) => r.predictions).find((p) => p.source === source) || { max_new_tokens: "?" })
        .max_new_tokens;
    const rows = page.paper.rows.map((r) => {
      const cell = (/** @type {string} */ src) => {
        const p = r.predictions.find((x) => x.source === src);
        return p
          ? `${times(p.predicted_speedup)} (${span(p.predicted_speedup_range)}; ${p.max_new_tokens} tokens${p.exact_setting ? "" : ", nearest setting"})`
          : "–";
      };
      return h(
        "tr",
        {},
        h("th", { scope: "row" }, `${r.model} ${r.model_size}`),
        h("td", {}, r.dataset),
        h("td", {}, `${r.devices > 1 ? `${r.devices} × ` : ""}${deviceName(page, r.device)}`),
        h("td", {}, r.window === null ? "not found" : `${r.window}/${r.ngram}/${r.guess}`),
        h("td", {}, times(r.speedup)),
        h("td", {}, cell("bench")),
        h("td", {}, cell("sweep")),
      );
    });
    return Lade.dom.scroller(
      "the paper's measurements beside the model's predictions",
      h(
        "table",
        { class: "verify lab-table" },
        h(
          "caption",
          {},
          `The authors' measurements (${page.paper.rows_source}; against ${page.paper.baseline}) beside the model's `,
          `predictions from this project's compression at ${budget("bench")} tokens (the bench) and ${budget("sweep")} `,
          "tokens (the sweeps). W/N/G: ",
          page.paper.configs_note,
        ),
        h(
          "tr",
          {},
          [
            "model",
            "dataset",
            "devices",
            "W/N/G",
            "paper measured",
            "model, bench compression",
            "model, sweep compression",
          ].map((t) => h("th", { scope: "col" }, t)),
        ),
        rows,
      ),
    );
  }

  /** `asked`: where the run's figures were asked of its address, "asking" until they come, else why there are none.
   * @param {{run: Run, state: State, boot: Boot, actions: Actions, asked?: string}} ctx */
  function view({ run, state, boot, actions, asked }) {
    const page = boot.lab,
      runLab = run.d.lab;
    const head = [
      h("h2", {}, "The speed lab: from tokens per step to seconds"),
      h(
        "p",
        {},
        "Tokens per step only become speed where a wider forward pass costs about what a narrow one does. Here: a ",
        "CPU's measured cost curve (its machine named beside it), a roofline model of a GPU's with its assumptions, what they predict for the run on screen, ",
        "alone and with many sequences per step, the paper's own measurements beside the model's predictions, and a simulation ",
        "of Lookahead Parallelism over several GPUs.",
      ),
      h("p", { class: "muted" }, "Run on screen: ", h("span", { class: "source" }, run.settingsText()), "."),
    ];
    if (!page || !page.gpu_curves || !runLab)
      return h(
        "div",
        { class: "lab-text" },
        head,
        asked === "asking"
          ? h("p", { class: "note", role: "status" }, "Computing the lab's predictions for this run…")
          : h("p", { class: "note" }, asked || "This page carries no lab data for this run."),
      );
    const sel = pick(page, runLab, state.lab);
    const controls = h(
      "div",
      { class: "lab-controls", role: "group", "aria-label": "What to predict" },
      choice(
        "Accelerator",
        sel.device,
        sel.devices.map((d) => [
          d,
          d === "cpu" ? "CPU (measured; its machine named below)" : deviceName(page, d), // a phone keeps the menu narrow
        ]),
        (v) => actions.lab({ device: v }),
        "lab-device",
      ),
      choice(
        "Model size",
        sel.size,
        sel.sizes.map((s) => [
          s,
          runLab.predictions[sel.device][s].fits_in_memory === false ? `${s} (does not fit one)` : s,
        ]),
        (v) => actions.lab({ size: v }),
        "lab-size",
      ),
      choice(
        "Batch (sequences per step)",
        String(sel.batch),
        sel.pred.batches.map((b) => [String(b), String(b)]),
        (v) => actions.lab({ batch: +v, devices: +v > 1 ? 1 : state.lab.devices }),
        "lab-batch",
      ),
      choice(
        "Devices (simulated)",
        String(sel.k),
        sel.pred.devices.map((k) => [String(k), String(k)]),
        (v) => actions.lab({ devices: +v, batch: +v > 1 ? 1 : state.lab.batch }),
        "lab-devices",
      ),
    );
    const thresholds = (page.thresholds.servers || []).map((s, n) =>
      h(
        "li",
        {},
        h("b", {}, cite("thresholds", s.server)),
        ": ",
        cite("thresholds", s.setting),
        s.status ? [" (", cite("thresholds", s.status), ")"] : "",
        ". ",
        cite("thresholds", `${s.rule[0].toUpperCase()}${s.rule.slice(1)}`),
        ".",
        s.off_from_batch
          ? [" Its example setting drafts nothing from batch ", fact(`off_from_batch_${n}`, s.off_from_batch), " on."]
          : "",
        s.default === null ? " No default: off until an operator sets it." : "",
      ),
    );
    const a = page.assumptions,
      cpu = page.cpu.single;
    return h(
      "div",
      { class: "lab-text" },
      head,
      controls,
      prediction(page, runLab, sel),
      h(
        "div",
        { class: "vrow n2" },
        h("div", { class: "view" }, costChart(page, run, runLab, sel)),
        h("div", { class: "view" }, batchChart(page, sel)),
      ),
      h("h3", {}, "How servers let an operator stop speculating as the batch grows"),
      h("ul", { class: "lab-list", id: "lab-thresholds" }, thresholds),
      h("p", { class: "muted" }, cite("thresholds", page.thresholds.what)),
      h("h3", {}, "Lookahead Parallelism (a simulation)"),
      parallelChart(page, sel),
      h("p", { id: "lab-parallel" }, parallelWords(page, boot.paper)),
      h("h3", {}, "The paper's measurements beside the model"),
      paperTable(page),
      h(
        "ul",
        { class: "lab-list" },
        page.paper.headline.map((c, n) =>
          h(
            "li",
            {},
            h("b", {}, cite("paper", c.claim)),
            " (",
            typeof c.devices === "number"
              ? [fact(`paper_devices_${n}`, c.devices), c.devices === 1 ? " device" : " devices"]
              : ["devices: ", cite("paper", c.devices)],
            "): ",
            cite("paper", c.note),
            c.which_figure ? [" ", cite("paper", c.which_figure)] : "",
          ),
        ),
      ),
      h("h3", {}, "The model's assumptions"),
      h("p", { class: "muted" }, cite("assumptions", a.why_mid)),
      h("p", { class: "muted" }, cite("assumptions", a.why_bounds)),
      cpu
        ? h(
            "p",
            { class: "muted" },
            "The CPU curve drawn above: ",
            // the machine's description names its threads and where the curve comes from (calibrate.labelled)
            h("span", { class: "source" }, `${cpu.machine_description}; ${cpu.model}, ${cpu.dtype}`),
            "; a one-token forward took ",
            fact("cpu_one_token_ms", fmt(cpu.one_token_ms, 1)),
            " ms.",
          )
        : null,
    );
  }

  return { view, deviceName };
})();
window.Lade.lab = LadeLab;
