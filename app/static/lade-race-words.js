// @ts-check
// What the race in the visitor's browser says (`Lade.raceWords`), each sentence computed from what the race made:
// how it ended, from its trace (`summary`: each lane finished or stopped by Stop after k tokens; one sentence with
// the verdict by the one noise rule, its band, and whether the texts are identical over the tokens both lanes
// wrote; the device), and what Auto measured and proposes, from this device's curve (`autoWords`, `curveChart`).
// tests/test_site_browser.py checks the summary sentence by sentence against the trace. And how a race on the server
// ended, for its race box, output panels and methods table (`stoppedRace`, `laneEnd`, `laneHow`, `textAgainst`,
// `lastStep`), from the run's own rules (`Run.ended`, `Run.against`); tests/test_race_end.py checks them.
const LadeRaceWords = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { fmt, plural } = Lade.dom;

  const REASON = /** @type {Record<string, (max: number) => string>} */ ({
    eos: () => "it wrote the end of its answer",
    length: (max) => `it wrote the ${max} new tokens asked for`,
  });

  /**
   * How a race ended, sentence by sentence, each from its trace: each lane finished (its tokens, and why it ended)
   * or stopped by Stop after k tokens; then one sentence with the verdict by the one noise rule and its band, and
   * whether the texts are identical, compared over the tokens both lanes wrote (a lane cut short is never called
   * different); then the device every time was measured on. [{id, text}].
   * @param {Payload} payload @param {RaceReady} ready */
  function summary(payload, ready) {
    const t = payload.trace,
      sp = payload.derived.speed;
    const lanes = /** @type {[string, string, MethodRun][]} */ ([
      ["lookahead", "Lookahead", t.parallel],
      ["greedy", "Greedy", t.baseline],
    ]);
    const out = lanes.map(([id, name, m]) => {
      const steps = `${plural(m.steps.length, "step")}, the prompt's included`;
      const done = REASON[m.stop_reason];
      return {
        id,
        text: done
          ? `${name} finished: ${plural(m.tokens.length, "token")} in ${steps} (${done(t.max_new_tokens)}).`
          : `${name} was stopped by Stop after ${plural(m.tokens.length, "token")} (${steps}).`,
      };
    });
    // the texts compared by the page's one rule (`Run.against`): over the tokens both lanes wrote
    const whole = lanes.every(([, , m]) => REASON[m.stop_reason]),
      text = new Lade.Run(payload, "summary").against("parallel"),
      both = `over the ${plural(text.n, "token")} both lanes wrote, the texts`;
    const same =
      text.verdict === "identical"
        ? "the texts are identical, token for token"
        : !whole && text.n === 0
          ? "the lanes had no token in common to compare"
          : text.verdict === "differs"
            ? `${whole || text.part === text.n ? "the texts" : both} differ from token #${text.part} on`
            : `${both} are identical`;
    // a sentence's parts, nested to whatever depth, each joined as its text (its facts are given as strings here)
    const words = (/** @type {unknown[]} */ parts) => parts.flat(Infinity).join("");
    const verdict = !whole
      ? `The race was stopped, so its lanes' times are no speed-up and it gets no verdict; ${same}.`
      : sp
        ? `Lookahead ran at ${fmt(sp.lanes.parallel.speedup)}x greedy's speed, ${sp.lanes.parallel.verdict}: ` +
          `${words(Lade.notes.bandWords(sp.band, (_n, v) => String(v)))}; ${same}.`
        : `Greedy made too few steps to measure this device's noise, so the race gets no speed verdict, and ${same}.`;
    out.push({ id: "verdict", text: verdict });
    const e = ready.engine;
    const fell = e.fallback ? ` WebGPU would not start here (${String(e.fallback).slice(0, 120)}).` : "";
    out.push({
      id: "device",
      text: `Every time was measured on your device: ${t.machine.description}, ${plural(t.machine.cores, "core")} reported.${fell}`,
    });
    return out;
  }

  // -- how a race on the server ended (the live race's box, the output panels, the methods table) --------------
  /** Why a lane stopped before its end, by its stop reason (trace.py STOP_REASONS; the server's words). */
  const STOPPED_BY = /** @type {Record<string, string>} */ ({
    budget: "by the server's time limit for one run",
    cancelled: "before its end (Stop, or nobody left following it)",
  });

  /** How a lane ended, briefly: "finished (it wrote the end of its answer)", "stopped by the server's time limit
   * for one run", "running". @param {Run} run @param {string} lane */
  function laneHow(run, lane) {
    const m = run.lane(lane),
      ended = run.ended(lane),
      why = REASON[m.stop_reason];
    if (ended === "running") return "running";
    if (ended === "stopped") return `stopped ${STOPPED_BY[m.stop_reason]}`;
    return `finished${why ? ` (${why(run.t.max_new_tokens)})` : ""}`;
  }

  /** How a lane ended, in words after its name: "finished: 35 tokens in 32 steps, the prompt's included (it wrote
   * the end of its answer)",
   * "was stopped by the server's time limit for one run after 35 tokens (32 steps, the prompt's included)" or "is
   * running: …". @param {Run} run @param {string} lane */
  function laneEnd(run, lane) {
    const m = run.lane(lane),
      tokens = plural(m.tokens.length, "token"),
      steps = `${plural(m.steps.length, "step")}, the prompt's included`,
      ended = run.ended(lane),
      why = REASON[m.stop_reason];
    if (ended === "running") return `is running: ${tokens} in ${steps} so far`;
    if (ended === "stopped") return `was stopped ${STOPPED_BY[m.stop_reason]} after ${tokens} (${steps})`;
    return `finished: ${tokens} in ${steps}${why ? ` (${why(run.t.max_new_tokens)})` : ""}`;
  }

  /** A lane's last step in words, for a view at a later clock step. @param {Run} run @param {string} lane @param {number} index */
  function lastStep(run, lane, index) {
    const ended = run.ended(lane);
    return ended === "finished"
      ? `The run finished at step ${index}.`
      : ended === "stopped"
        ? `The run was stopped after step ${index}.`
        : `Its latest step so far is step ${index}.`;
  }

  /** A lane's text against greedy's, compared over the tokens both wrote (`Run.against`), as a clause after
   * "its text": "is identical to greedy's, token for token", "is the same as greedy's over the 35 tokens both
   * wrote", "differs from greedy's from token #12 on", "has no token in common with greedy's to compare".
   * @param {Run} run @param {string} lane */
  function textAgainst(run, lane) {
    const t = run.against(lane),
      other = `${run.laneWord("baseline")}'s`;
    return t.verdict === "identical"
      ? `is identical to ${other}, token for token`
      : t.verdict === "agrees"
        ? `is the same as ${other} over the ${plural(t.n, "token")} both wrote`
        : t.verdict === "differs"
          ? `differs from ${other} from token #${t.part} on`
          : `has no token in common with ${other} to compare`;
  }

  /** How a race on the server that was stopped before its end ended, sentence by sentence from its trace: why it
   * stopped; each lane finished (its tokens) or stopped after k tokens; each lane's text against greedy's over the
   * tokens both wrote (a greedy race); and that its times are no speed-up. [{id, text}].
   * @param {Run} run */
  function stoppedRace(run) {
    const lanes = run.lanes(),
      budget = lanes.some((l) => l.run.stop_reason === "budget");
    /** @type {{id: string, text: string}[]} */
    const out = [
      {
        id: "why",
        text: budget
          ? "The race was stopped at the server's time limit for one run, every lane as far as it got."
          : "The race was stopped before its end, every lane as far as it got.",
      },
      ...lanes.map((l) => ({ id: l.id, text: `${run.laneName(l.id)} ${laneEnd(run, l.id)}.` })),
    ];
    if (run.greedy)
      for (const l of lanes)
        if (l.id !== "baseline")
          out.push({ id: `text-${l.id}`, text: `${run.laneName(l.id)}'s text ${textAgainst(run, l.id)}.` });
    out.push({
      id: "speed",
      text: "A lane stopped before its end has no time to its end, so the race's times are no speed-up and it gets no verdict.",
    });
    return out;
  }

  /** Auto's proposal from this device's curve, and why, in words. @param {RaceReady} ready */
  function autoWords(ready) {
    const a = ready.auto,
      c = ready.curve;
    if (!a) return "No swept settings came with this page, so Auto has nothing to choose from.";
    const [low, high] = a.predicted_speedup_range;
    const wide = c.points[c.points.length - 1];
    return (
      `Measured on this device (${ready.machine.description}): a one-token forward took ${fmt(1000 * c.greedy_s, 0)} ms ` +
      `and a forward of ${wide.tokens} tokens ${fmt(wide.seconds / c.greedy_s, 1)}x that. Auto proposes W=${a.window}, ` +
      `N=${a.ngram}, G=${a.guess}, the best of ${plural(ready.swept, "swept setting")}: it feeds ` +
      `${fmt(a.mean_tokens_fed, 1)} tokens a step at ${fmt(a.step_cost)}x a greedy step's cost and is predicted to run ` +
      `at ${fmt(a.predicted_speedup_median)}x greedy's speed (the median over the benchmark prompts; ${fmt(low)}x to ` +
      `${fmt(high)}x).` +
      (a.predicted_speedup_median < 1
        ? " No setting is predicted to beat greedy decoding on this device: this is the one predicted closest."
        : "")
    );
  }

  /** This device's curve beside the project's server's, each relative to its own one-token forward.
   * @param {RaceReady} ready @param {EngineBoot} info */
  function curveChart(ready, info) {
    const c = ready.curve,
      s = info.server_curve;
    const series = [
      {
        name: `this device (${ready.machine.description})`,
        color: Lade.dom.COLORS.parallel,
        points: c.points.map((p) => [p.tokens, p.seconds / c.greedy_s]),
      },
    ];
    if (s) series.push({ name: s.label, color: Lade.dom.COLORS.baseline, points: s.points });
    const a = ready.auto;
    return Lade.charts.line({
      title: "Cost of one forward pass, relative to one token",
      xLabel: "tokens fed",
      yLabel: "× 1-token cost",
      logX: true,
      yMin: 0,
      height: 200,
      series,
      extra: a
        ? [{ x: a.mean_tokens_fed, y: a.step_cost, label: "Auto's proposal", color: Lade.dom.COLORS.wrong }]
        : [],
      summary:
        `Forward cost against tokens fed on this device: ${c.points.map((p) => `${p.tokens} tokens ${fmt(p.seconds / c.greedy_s, 1)}x`).join(", ")}` +
        (s ? `; beside it ${s.label}.` : "."),
      hover: (x) => `${x} tokens`,
    }).node;
  }

  return { summary, autoWords, curveChart, laneHow, laneEnd, lastStep, textAgainst, stoppedRace };
})();
window.Lade.raceWords = LadeRaceWords;
