// @ts-check
// What the race in the visitor's browser says (`Lade.raceWords`), each sentence computed from what the race made:
// how it ended, from its trace (`summary`: each lane finished or stopped by Stop after k tokens; one sentence with
// the verdict by the one noise rule, its band, and whether the texts are identical over the tokens both lanes
// wrote; the device), and what Auto measured and proposes, from this device's curve (`autoWords`, `curveChart`).
// tests/test_site_browser.py checks the summary sentence by sentence against the trace.
const LadeRaceWords = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { fmt, plural } = Lade.dom;

  const REASON = /** @type {Record<string, (max: number) => string>} */ ({
    eos: () => "it wrote the end of its answer",
    length: (max) => `it wrote the ${max} new tokens asked for`,
  });

  /** The first of the first `n` tokens where two texts part (one that ended first parts there), or -1.
   * @param {number[]} a @param {number[]} b @param {number} n */
  const parting = (a, b, n) => {
    for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
    return -1;
  };

  /**
   * How a race ended, sentence by sentence, each from its trace: each lane finished (its tokens, and why it ended)
   * or stopped by Stop after k tokens; then one sentence with the verdict by the one noise rule and its band, and
   * whether the texts are identical, compared over the tokens both lanes wrote (a lane cut short is never called
   * different); then the device every time was measured on. [{id, text}].
   * @param {any} payload @param {any} ready */
  function summary(payload, ready) {
    const t = payload.trace,
      sp = payload.derived.speed;
    const lanes = /** @type {[string, string, any][]} */ ([
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
    const a = t.parallel.tokens,
      b = t.baseline.tokens;
    const whole = lanes.every(([, , m]) => REASON[m.stop_reason]);
    const n = whole ? Math.max(a.length, b.length) : Math.min(a.length, b.length);
    const part = parting(a, b, whole ? n : Math.min(a.length, b.length));
    const same = whole
      ? part < 0
        ? "the texts are identical, token for token"
        : `the texts differ from token #${part} on`
      : n === 0
        ? "the lanes had no token in common to compare"
        : part < 0
          ? `over the ${plural(n, "token")} both lanes wrote, the texts are identical`
          : `over the ${plural(n, "token")} both lanes wrote, the texts differ from token #${part} on`;
    const words = (/** @type {any[]} */ parts) => parts.flat(Infinity).join("");
    const verdict = !whole
      ? `The race was stopped, so its lanes' times are no speed-up and it gets no verdict; ${same}.`
      : sp
        ? `Lookahead ran at ${fmt(sp.lanes.parallel.speedup)}x greedy's speed, ${sp.lanes.parallel.verdict}: ` +
          `${words(Lade.lessonExtras.bandWords(sp.band, (_n, v) => String(v)))}; ${same}.`
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

  /** Auto's proposal from this device's curve, and why, in words. @param {any} ready */
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

  /** This device's curve beside the project's server's, each relative to its own one-token forward. @param {any} ready
   * @param {any} info */
  function curveChart(ready, info) {
    const c = ready.curve,
      s = info.server_curve;
    const series = [
      {
        name: `this device (${ready.machine.description})`,
        color: Lade.dom.COLORS.parallel,
        points: c.points.map((/** @type {any} */ p) => [p.tokens, p.seconds / c.greedy_s]),
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
        `Forward cost against tokens fed on this device: ${c.points.map((/** @type {any} */ p) => `${p.tokens} tokens ${fmt(p.seconds / c.greedy_s, 1)}x`).join(", ")}` +
        (s ? `; beside it ${s.label}.` : "."),
      hover: (x) => `${x} tokens`,
    }).node;
  }

  return { summary, autoWords, curveChart };
})();
window.Lade.raceWords = LadeRaceWords;
