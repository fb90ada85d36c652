// @ts-check
// The derived data of a run made in the browser (`Lade.derive`), as app/render/payload.py's `Deriver` makes it for a
// run made on the server: each distinct step layout's labels, positions, kinds, parents and mask bits, and the n-gram
// pool around each step of a lookahead lane (replayed with the engine's pool). Both read the engine's rules (here
// lade-engine.js, the sanctioned second home of them); tests/test_derive_js.py holds this to payload.py on recorded
// runs, field for field. The texts and rules that do not depend on a run (the mask's hover reasons, the method names)
// come with the boot, as Python wrote them (`boot.derived`).
const LadeDerive = (() => {
  "use strict";

  // payload.py's, as lade-constants.js carries them (loaded before this file, on the page and in the race's worker)
  const MASK_BUDGET = window.Lade.constants.mask_budget, // bytes of mask bits per run
    POOL_KEYS = window.Lade.constants.pool_keys; // keys shown per step

  /** Bits of a boolean matrix, row by row, most significant bit first, as base64 (numpy's packbits).
   * @param {boolean[][]} mask */
  function packBits(mask) {
    const flat = mask.flat(),
      bytes = new Uint8Array(Math.ceil(flat.length / 8));
    flat.forEach((v, i) => {
      if (v) bytes[i >> 3] |= 0x80 >> (i & 7);
    });
    let text = "";
    for (const b of bytes) text += String.fromCharCode(b);
    return btoa(text);
  }

  /** A step's layout as the engine laid it out (trace.py `StepTrace.layout`), for the kinds the browser makes.
   * @param {Step} step */
  function layoutOf(step) {
    const E = window.Lade.engine;
    if (step.kind !== "lookahead" && step.kind !== "warmup")
      throw new Error(`the browser derives lookahead steps only, not ${step.kind}`);
    return step.tree
      ? E.StepLayout.tree(step.levels_before.length, step.window, step.candidates)
      : E.StepLayout.plain(step.levels_before.length, step.window, step.candidates.length, Math.max(step.ngram - 1, 0));
  }

  /** Draft tokens a step kept: the winner's matched prefix, cut where the run ended inside it. @param {Step} step */
  const kept = (step) => Math.min(step.winner >= 0 ? step.match_lengths[step.winner] : 0, step.accepted.length);

  class Deriver {
    /** @param {{method: string, config: {guess: number}}[]} lanes the run's lanes, the main one first */
    constructor(lanes) {
      const E = window.Lade.engine;
      /** @type {Map<number, InstanceType<typeof LadeEngine.NGramPool>>} one pool per lookahead lane, by lane index */
      this.pools = new Map();
      lanes.forEach((lane, i) => {
        if (lane.method === "lookahead") this.pools.set(i, new E.NGramPool(lane.config.guess));
      });
      /** @type {Map<string, number>} */
      this.index = new Map();
      /** @type {LayoutRow[]} */
      this.layouts = [];
      this.maskBytes = 0;
    }

    /** @param {Step} step */
    layout(step) {
      if (step.kind === "prefill" || step.kind === "autoregressive") return -1;
      const layout = layoutOf(step),
        key = JSON.stringify([layout.levels, layout.window, layout.paths, layout.parents]);
      if (!this.index.has(key)) {
        this.index.set(key, this.layouts.length);
        const q = layout.size,
          cost = Math.floor((q * q + 7) / 8),
          fits = this.maskBytes + cost <= MASK_BUDGET;
        if (fits) this.maskBytes += cost;
        this.layouts.push({
          size: q,
          levels: layout.levels,
          window: layout.window,
          nodes: layout.nodes,
          labels: layout.labels(),
          positions: layout.positions(),
          kinds: layout.kinds(),
          parents: layout.parents,
          mask: fits ? packBits(layout.mask()) : null,
        });
      }
      return /** @type {number} */ (this.index.get(key));
    }

    /** The pool around a step (payload.py `pool_rows`). @param {Step} step
     * @param {InstanceType<typeof LadeEngine.NGramPool>} pool @returns {PoolState} */
    poolRows(step, pool) {
      const touched = [step.input_token, ...[...step.ngrams_added, ...step.ngrams_evicted].map((n) => n[0])];
      const unique = [...new Set(touched)],
        keys = unique.slice(0, POOL_KEYS);
      const before = new Map(keys.map((k) => [k, new Set(pool.lookup(k).map((c) => c.join(",")))]));
      const columns = step.kind === "lookahead" ? step.window : 0;
      pool.addAll(step.ngrams_added.slice(0, columns), "window");
      pool.addAll(step.ngrams_added.slice(columns), "text");
      const rows = keys.map((key) => ({
        key,
        items: pool
          .lookup(key)
          .map((/** @type {number[]} */ c) => ({ cont: c, new: !before.get(key)?.has(c.join(",")) })),
        evicted: step.ngrams_evicted.filter((n) => n[0] === key).map((n) => n.slice(1)),
      }));
      return { size: pool.size, keys: pool.keys, rows, more_keys: unique.length - keys.length };
    }

    /** A step's derived data; `lane` 0 is the main lane, i the run's lanes[i - 1]. @param {Step} step @param {number} [lane] */
    step(step, lane = 0) {
      /** @type {DerivedStep} */
      const out = { layout: this.layout(step), kept: kept(step) };
      const pool = this.pools.get(lane);
      if (pool) {
        const winner = step.winner >= 0 ? step.candidates[step.winner] : null;
        out.kept_from =
          !winner || !out.kept
            ? ""
            : step.winner >= step.candidates.length - step.copied
              ? "copy"
              : pool.source(step.input_token, winner) || "";
        out.pool = this.poolRows(step, pool);
      }
      return out;
    }
  }

  /** The run-dependent part of a payload's derived data (payload.py `derive`): layouts, main-lane steps, lanes.
   * @param {Trace} trace */
  function derive(trace) {
    const lanes = [{ method: trace.method, config: trace.config }, ...trace.lanes];
    const deriver = new Deriver(lanes);
    const steps = trace.parallel.steps.map((/** @type {Step} */ s) => deriver.step(s));
    const more = trace.lanes.map((lane, i) => ({
      steps: lane.run.steps.map((/** @type {Step} */ s) => deriver.step(s, i + 1)),
    }));
    return { layouts: deriver.layouts, steps, lanes: more };
  }

  /** The sum of a list. @param {number[]} xs */
  const sum = (xs) => xs.reduce((a, b) => a + b, 0);

  /** Draft tokens a step fed for verification (lade_core/metrics.py `drafted`): its layout's verification nodes, or
   * Jacobi decoding's guess block. @param {Step} step */
  const drafted = (step) =>
    step.kind === "prefill" || step.kind === "autoregressive"
      ? 0
      : step.kind === "jacobi"
        ? step.window
        : layoutOf(step).nodes;

  /** The practitioners' metrics of one lane (lade_core/metrics.py `run_metrics`, held to it by
   * tests/test_derive_js.py): over its decoding steps, the drafting steps, the tokens drafted and kept.
   * @param {{tokens: number[], steps: Step[]}} lane */
  function laneMetrics(lane) {
    const steps = lane.steps.slice(1),
      drafting = steps.filter((s) => drafted(s) > 0),
      keptAll = drafting.map(kept),
      total = sum(steps.map(drafted)),
      longest = Math.max(0, ...keptAll),
      accepted = sum(keptAll);
    return {
      mean_acceptance_length: drafting.length ? 1 + accepted / drafting.length : 1.0,
      per_position_acceptance: Array.from(
        { length: longest },
        (_, i) => keptAll.filter((k) => k > i).length / drafting.length,
      ),
      draft_acceptance_rate: total ? accepted / total : 0.0,
      drafted_per_step: steps.length ? total / steps.length : 0.0,
      drafting_steps: drafting.length,
      drafted_tokens: total,
      accepted_drafts: accepted,
      tokens_per_step: lane.steps.length ? lane.tokens.length / lane.steps.length : 0.0,
    };
  }

  /** Every lane's metrics by the page's lane ids (payload.py `metrics`). @param {Trace} trace */
  function metrics(trace) {
    /** @type {Record<string, RunMetrics>} */
    const out = { parallel: laneMetrics(trace.parallel), baseline: laneMetrics(trace.baseline) };
    (trace.lanes || []).forEach((l, i) => {
      out[`lane${i}`] = laneMetrics(l.run);
    });
    return out;
  }
  /** A lane's time on the race's clock: its steps' seconds. @param {{steps: Step[]}} lane */
  const time = (lane) => sum(lane.steps.map(window.Lade.engine.seconds));

  /** How far greedy's mean step time moved within the run, its first half of decoding steps against its second
   * (app/speed.py `own_spread`); null under 4 decoding steps. @param {Trace} trace @returns {BandPart | null} */
  function ownSpread(trace) {
    const steps = trace.baseline.steps.slice(1).map(window.Lade.engine.seconds);
    if (steps.length < 4) return null;
    const half = Math.floor(steps.length / 2),
      first = sum(steps.slice(0, half)) / half,
      second = sum(steps.slice(half)) / (steps.length - half);
    if (Math.min(first, second) <= 0) return null;
    return {
      what: "this run's greedy steps, first half against second",
      ratio: Math.max(first, second) / Math.min(first, second),
      source: "this run",
    };
  }

  /**
   * A finished run's speed by the one noise rule (app/speed.py `speed`, held to it by tests/test_derive_js.py): each
   * lane's speed-up over greedy and its verdict, the lanes as fast as the fastest, and the band: the wider of the
   * floor measured on the run's device in the process that ran it (`machine.noise`) and the run's own greedy drift;
   * with neither there is no band and no verdict (null).
   * @param {Trace} trace
   * @returns {Speed | null}
   */
  function speed(trace) {
    const noise = (trace.machine && trace.machine.noise) || 0,
      own = ownSpread(trace);
    const floor =
      noise >= 1
        ? {
            what: "a greedy step on this run's device, in the cost curve measured before the race, one half against the other",
            ratio: noise,
            source: "this run's device",
          }
        : null;
    const all = [...(floor ? [floor] : []), ...(own ? [own] : [])];
    if (!all.length) return null;
    const ratio = Math.max(...all.map((p) => p.ratio)),
      greedy = time(trace.baseline);
    /** @type {Record<string, LaneSpeed>} */
    const lanes = {};
    /** @type {[string, MethodRun][]} */
    const ids = [
      ["parallel", trace.parallel],
      ...trace.lanes.map((l, i) => /** @type {[string, MethodRun]} */ ([`lane${i}`, l.run])),
    ];
    for (const [id, method] of ids) {
      const t = time(method),
        v = t ? greedy / t : 0;
      lanes[id] = {
        speedup: v,
        bench: [],
        verdict: v > ratio ? "faster than greedy" : v < 1 / ratio ? "slower than greedy" : "about as fast as greedy",
      };
    }
    const top = Math.max(0, ...Object.values(lanes).map((l) => l.speedup));
    const fastest = Object.keys(lanes)
      .filter((id) => Math.max(lanes[id].speedup, top) <= ratio * Math.min(lanes[id].speedup, top))
      .sort((a, b) => lanes[b].speedup - lanes[a].speedup);
    return { band: { ratio, parts: all }, lanes, fastest };
  }

  return { Deriver, derive, packBits, speed, metrics };
})();
window.Lade = window.Lade || /** @type {LadeNamespace} */ ({});
window.Lade.derive = LadeDerive;
