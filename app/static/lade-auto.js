// @ts-check
// Auto in the visitor's browser (`Lade.auto`): this device's cost curve, measured the way a race runs its forwards,
// and the rule that proposes W, N, G from it. Both are the browser's copies of Python's, with nothing of their own:
// - the curve is lade_core/measure/costcurve.py `measure_cost_curve`: a ~100-token cached prefix, each width a
//   forward of one window level on top of it; each round takes the widths in a new order (Python's seeded shuffle,
//   the same order for the same seed) with a greedy one-token forward before each; per width the median and
//   quartiles; the greedy step's drift, its first half of samples against its second (the noise rule's floor);
// - the rule is lade_core/measure/autoconfig.py `best`: each swept setting's speed-up predicted as its compression
//   over its step cost read off the curve (per benchmark prompt too), the best median over prompts first. (Python's
//   `choose` then runs that setting against adaptive sizes; this engine takes fixed sizes, so it stops at `best`.)
// tests/test_auto_js.py holds `best` to Python's on shared inputs. Loaded in the race's worker beside the engine
// (lade-race-worker.js), where the page's thread never waits on it.
const LadeAuto = (() => {
  "use strict";

  /** Python's statistics.median. @param {number[]} xs */
  function median(xs) {
    const s = [...xs].sort((a, b) => a - b),
      n = s.length;
    return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  }

  /** Python's statistics.quantiles(xs, n=4, method="inclusive") of sorted `s` (at least two). @param {number[]} s */
  function quartiles(s) {
    const m = s.length - 1,
      out = [];
    for (let i = 1; i < 4; i++) {
      const j = Math.floor((i * m) / 4),
        delta = i * m - j * 4;
      out.push((s[j] * (4 - delta) + s[j + 1] * delta) / 4);
    }
    return out;
  }

  /** Median and quartiles of one width's samples (costcurve.py `summarise`). @param {number[]} samples */
  function summarise(samples) {
    const s = [...samples].sort((a, b) => a - b);
    const [q1, , q3] = s.length > 1 ? quartiles(s) : [s[0], s[0], s[0]];
    return { seconds: median(s), q1, q3, min: s[0] };
  }

  /** Python's `random.shuffle(order)` with `rng` a `Lade.engine.PyRandom`: the same order for the same seed.
   * @template T @param {T[]} order @param {{below: (n: number) => number}} rng */
  function shuffle(order, rng) {
    for (let i = order.length - 1; i > 0; i--) {
      const j = rng.below(i + 1);
      [order[i], order[j]] = [order[j], order[i]];
    }
    return order;
  }

  /** Forward time by tokens fed, relative to a one-token step (sizes.py `StepCost`): piecewise linear between
   * measured points, extrapolated along the last segment. */
  class StepCost {
    /** @param {[number, number][]} points (tokens, relative cost), tokens ascending, from 1 */
    constructor(points) {
      this.points = points;
    }

    /** @param {[number, number][]} points (tokens, seconds) @param {number} oneToken seconds of a one-token step */
    static fromSeconds(points, oneToken) {
      const pts = points
        .map(([n, s]) => /** @type {[number, number]} */ ([Math.trunc(n), s / oneToken]))
        .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      return new StepCost(pts[0][0] === 1 ? pts : [[1, 1.0], ...pts]);
    }

    /** @param {number} tokens */
    at(tokens) {
      const pts = this.points;
      if (pts.length === 1 || tokens <= pts[0][0]) return pts[0][1];
      for (let i = 0; i + 1 < pts.length; i++) {
        const [a, ca] = pts[i],
          [b, cb] = pts[i + 1];
        if (tokens <= b) return ca + ((tokens - a) * (cb - ca)) / (b - a);
      }
      const [a, ca] = pts[pts.length - 2],
        [b, cb] = pts[pts.length - 1];
      return cb + ((tokens - b) * (cb - ca)) / (b - a);
    }
  }

  /** A curve as a StepCost (costcurve.py `step_cost`): its medians ("seconds") or a quartile, against its greedy step.
   * @param {Pick<MeasuredCurve, "greedy_s" | "points">} curve @param {"seconds" | "q1" | "q3"} [which] */
  const stepCost = (curve, which = "seconds") =>
    StepCost.fromSeconds(
      curve.points.map((p) => [p.tokens, p[which] ?? p.seconds]),
      curve.greedy_s,
    );

  /** A sweep point with its step cost and predicted speed-up (autoconfig.py `predict_point`).
   * @param {import("./contract").SweepPoint} point @param {StepCost} cost */
  function predictPoint(point, cost) {
    const relative = cost.at(point.mean_tokens_fed);
    const perPrompt = Object.values(point.compression_by_prompt || {})
      .map((c) => /** @type {number} */ (c) / relative)
      .sort((a, b) => a - b);
    const mean = point.compression / relative;
    return {
      ...point,
      step_cost: relative,
      predicted_speedup: mean,
      predicted_speedup_range: perPrompt.length ? [perPrompt[0], perPrompt[perPrompt.length - 1]] : [mean, mean],
      predicted_speedup_median: perPrompt.length ? median(perPrompt) : mean,
    };
  }

  /** Python's round(x, 3) for the medians ranked here: the multiple of 0.001 nearest x's exact value (toFixed's
   * rule; at an exact binary half, which no ratio of measured seconds lands on, toFixed goes up where Python goes to
   * the even one). @param {number} x */
  const round3 = (x) => Number(x.toFixed(3));

  /** Every swept setting (of `pool`, or all) with its prediction, best median first, a tie in the median (to three
   * decimals) to the higher mean (autoconfig.py `rank_configs`).
   * @param {import("./contract").SweepPoint[]} points @param {StepCost} cost @param {string | null} [pool] */
  const rankConfigs = (points, cost, pool = null) =>
    points
      .filter((p) => pool === null || p.pool === pool)
      .map((p) => predictPoint(p, cost))
      .sort(
        (a, b) =>
          round3(b.predicted_speedup_median) - round3(a.predicted_speedup_median) ||
          b.predicted_speedup - a.predicted_speedup,
      );

  /** The best swept setting under `curve` (autoconfig.py `best`).
   * @param {import("./contract").SweepPoint[]} points @param {Pick<MeasuredCurve, "greedy_s" | "points">} curve
   * @param {string | null} [pool] */
  function best(points, curve, pool = null) {
    const ranked = rankConfigs(points, stepCost(curve), pool);
    if (!ranked.length) throw new Error(`no ${pool ? `${pool} ` : ""}sweep to choose from`);
    return ranked[0];
  }

  /** The widths a browser curve measures, and its rounds: about 8 s on one WebAssembly thread of a 2-core host
   * (wider steps are read off its last segment, as Python's StepCost reads past its widest point). */
  const SIZES = [1, 2, 3, 4, 6, 8, 12, 16, 32];
  const REPEATS = 4;

  /**
   * This device's cost curve on `forward` (a fresh lane: lade-forward.js `OrtForward` or `GpuForward`), timed as
   * `measure_cost_curve` times it. `between()` is awaited after each sample (the worker lets a Stop in there);
   * returns the curve in costcurve.py's fields: {how, prefix, repeats, greedy_s, greedy_drift, points, measured_at}.
   * @param {ForwardLane} forward @param {{sizes?: number[], prefix?: number, repeats?: number, seed?: number,
   *   between?: () => Promise<void>}} [opts] @returns {Promise<MeasuredCurve>}
   */
  async function measureCurve(forward, opts = {}) {
    const E = window.Lade.engine;
    const sizes = opts.sizes || SIZES,
      prefix = opts.prefix || 100,
      repeats = opts.repeats || REPEATS,
      between = opts.between || (async () => {});
    await forward.prefill(Array.from({ length: prefix }, (_, i) => ((7 * i) % 1000) + 10));
    const tokens = Array.from({ length: Math.max(...sizes) }, (_, i) => ((13 * i) % 1000) + 10);
    /** @type {Map<number, ForwardInput>} a width's forward input: one window level of n - 1 tokens after x */
    const inputs = new Map([[1, { tokens: [42], positions: [prefix], mask: [[true]], rows: [0] }]]);
    for (const n of sizes.filter((n) => n >= 2)) {
      const layout = E.StepLayout.plain(1, n - 1, 0, 0);
      inputs.set(n, {
        tokens: tokens.slice(0, n),
        positions: layout.positions().map((/** @type {number} */ o) => prefix + o),
        mask: layout.mask(),
        rows: layout.logitRows(),
      });
    }
    const run = async (/** @type {number} */ n) => {
      await forward.step(/** @type {ForwardInput} */ (inputs.get(n)));
      forward.drop(); // the cache stays the prefix, as Python's crop leaves it
    };
    for (const n of inputs.keys()) await run(n); // a warm-up of each, not kept
    /** @type {Map<number, number[]>} */
    const samples = new Map([...inputs.keys()].map((n) => [n, []]));
    const order = sizes.filter((n) => n >= 2),
      rng = new E.PyRandom(opts.seed || 0);
    for (let r = 0; r < repeats; r++) {
      shuffle(order, rng);
      for (const n of order)
        for (const width of [1, n]) {
          const t0 = performance.now();
          await run(width);
          /** @type {number[]} */ (samples.get(width)).push((performance.now() - t0) / 1000);
          await between();
        }
    }
    const points = [...samples.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([n, ts]) => {
        const { seconds, q1, q3 } = summarise(ts);
        return { tokens: n, seconds, q1, q3 };
      });
    const greedy = /** @type {number[]} */ (samples.get(1)),
      half = Math.floor(greedy.length / 2);
    const first = median(greedy.slice(0, half)),
      second = median(greedy.slice(half));
    return {
      how: "race-like: widths in a new order each round, a greedy step before each",
      prefix,
      repeats,
      greedy_s: points[0].seconds,
      greedy_drift: Math.max(first, second) / Math.min(first, second),
      points,
      measured_at: new Date().toISOString().slice(0, 19),
    };
  }

  return { median, quartiles, summarise, shuffle, StepCost, stepCost, predictPoint, rankConfigs, best, measureCurve };
})();
window.Lade = window.Lade || /** @type {LadeNamespace} */ ({});
window.Lade.auto = LadeAuto;
