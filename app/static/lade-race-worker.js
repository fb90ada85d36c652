// @ts-check
// The browser race's worker: everything that takes longer than a frame happens here, off the page's thread (the
// page, lade-browser-race.js, only draws what this posts). It loads the engine once (the manifest, onnxruntime-web's
// build, the GGUF, the weights rebuilt and checked, the session: lade-forward.js), measures this device's cost curve
// the way a race runs its forwards and proposes W, N, G from it (lade-auto.js), then races greedy against lookahead
// decoding on one clock (lade-engine.js), posting the run so far whenever the page asks for more, and a Stop is
// honoured before the next step begins. A file beside the engine's (engine/), never a blob: a Content-Security-Policy
// with `worker-src 'self'` and `'wasm-unsafe-eval'` allows it.
//
// Messages in:  {type: "load", base, threads, info}  {type: "race", settings}  {type: "more"}  {type: "stop"}
//               {type: "forget"} (the model's files out of this browser's storage)
// Messages out: {type: "progress", stage, done, total}  {type: "ready", engine, machine, curve, auto}
//               {type: "snapshot", payload}  {type: "done", payload}  {type: "forgot", bytes}
//               {type: "error", message, refused, partial}
// (their types: `RaceWorkerIn` and `RaceWorkerOut`, engine-types.d.ts)
(() => {
  "use strict";
  const scope = /** @type {RaceWorkerScope} */ (/** @type {unknown} */ (self));
  scope.window = scope; // the engine's scripts register on `window.Lade`, as on a page

  // the engine's scripts, beside this file (engine/); onnxruntime-web's build is chosen when loading
  scope.importScripts(
    "lade-constants.js",
    "lade-weights.js",
    "lade-engine.js",
    "lade-forward.js",
    "lade-tokenizer.js",
    "lade-derive.js",
    "lade-auto.js",
  );

  /** A refusal the visitor can act on (a setting, the prompt): shown as it is. */
  class Refused extends Error {}

  /** A race as the worker runs it: the visitor's prompt (and its ids with the chat template), the setting, the new
   * tokens asked for and the device in a few words.
   * @typedef {{prompt: string, prompt_ids: number[], config: import("./contract").LookaheadConfig,
   *   max_new_tokens: number, device: string}} RaceAsked */

  const state = {
    /** @type {LoadedEngine | null} */ engine: null,
    /** @type {BpeTokenizer | null} */ tokenizer: null,
    /** @type {Set<number>} */ eos: new Set(),
    /** @type {EngineBoot | null} */ info: null,
    /** @type {import("./contract").Machine | null} */ machine: null,
    stop: false,
    more: true, // the page is ready for the run so far
    races: 0,
  };

  /** A macrotask's pause: messages the page posted (Stop, "more") are handled before the next step. */
  const channel = new MessageChannel();
  /** @type {(() => void)[]} */
  const waiting = [];
  channel.port1.onmessage = () => waiting.shift()?.();
  const between = () =>
    new Promise((resolve) => {
      waiting.push(() => resolve(undefined));
      channel.port2.postMessage(0);
    });

  /** The GPU this browser offers through WebGPU, in words, or null (no WebGPU, no adapter, a software one). */
  async function gpuAdapter() {
    const gpu = /** @type {{gpu?: GpuEntry}} */ (navigator).gpu;
    if (!gpu) return null;
    try {
      const adapter = await gpu.requestAdapter();
      const info = (adapter && adapter.info) || {};
      // a software adapter (SwiftShader and the like) runs on the CPU, many times slower than WebAssembly
      if (!adapter || info.isFallbackAdapter || adapter.isFallbackAdapter) return null;
      const words = [info.vendor, info.architecture, info.description].filter(Boolean).join(" ");
      return String(words || "an adapter that gives no name")
        .replace(/[^\w .,()+-]/g, "")
        .slice(0, 60);
    } catch {
      return null;
    }
  }

  /** Load the engine (once per worker), measure this device's curve and propose a setting from it.
   * @param {Extract<RaceWorkerIn, {type: "load"}>} msg */
  async function load(msg) {
    const { base, info } = msg;
    state.info = info;
    const gpu = msg.webgpu === false ? null : await gpuAdapter(); // WebGPU where there is an adapter, else WebAssembly
    const text = await fetch(new URL("manifest.json", base)).then((res) => {
      if (!res.ok) throw new Error(`manifest.json: the site answered ${res.status}`);
      return res.text();
    });
    const manifest = /** @type {EngineManifest} */ (JSON.parse(text));
    scope.importScripts(new URL(manifest.runtimes[gpu !== null ? "webgpu" : "wasm"].script, base).href);
    const progress = (/** @type {LoadStage} */ stage, /** @type {number} */ done, /** @type {number} */ total) =>
      scope.postMessage({ type: "progress", stage, done, total });
    const engine = await scope.Lade.forward.load(scope.ort, base, { progress, gpu, threads: msg.threads, text });
    state.engine = engine;
    state.tokenizer = new scope.Lade.tokenizer.Tokenizer(engine.tokenizer);
    state.eos = new Set(engine.tokenizer.eos);
    // this device's curve, the way a race runs it: once per worker, in the process that races
    progress("measure", 0, 1);
    const lane = engine.lane();
    let curve;
    try {
      curve = await scope.Lade.auto.measureCurve(lane);
    } finally {
      lane.close();
    }
    progress("measure", 1, 1);
    const words =
      engine.gpu !== null
        ? `browser: WebGPU, ${engine.gpu}`
        : `browser: WebAssembly, ${engine.threads} thread${engine.threads === 1 ? "" : "s"}`;
    state.machine = {
      description: words.slice(0, 200),
      cores: Math.min(navigator.hardwareConcurrency || 0, 100000),
      threads: engine.threads,
      kernels: "",
      versions: `onnxruntime-web ${(scope.ort.env.versions && scope.ort.env.versions.web) || "unknown"}`,
      load: -1,
      curve: curve.points,
      curve_at: curve.measured_at,
      bandwidth: 0,
      flops: 0,
      noise: curve.greedy_drift,
    };
    const auto = info.sweeps.length ? scope.Lade.auto.best(info.sweeps, curve) : null;
    scope.postMessage({
      type: "ready",
      engine: {
        backend: engine.backend,
        threads: engine.threads,
        gpu: engine.gpu,
        fallback: engine.fallback,
        seconds: engine.seconds,
        stored_bytes: engine.stored_bytes,
        isolated: Boolean(self.crossOriginIsolated),
      },
      machine: state.machine,
      curve,
      auto,
      swept: info.sweeps.length,
    });
  }

  /** The trace and payload of a race so far (the renderer's contract: trace.py, payload.py).
   * @param {RaceAsked} race @param {Record<string, MethodRun>} runs @returns {Payload} */
  function payload(race, runs) {
    const info = /** @type {EngineBoot} */ (state.info); // `load` set it, as every part of the state, before a race
    const ids = new Set([...race.prompt_ids]);
    for (const run of Object.values(runs))
      for (const s of run.steps)
        for (const t of [
          s.input_token,
          ...s.accepted,
          ...s.new_level,
          ...s.levels_before.flat(),
          ...s.candidates.flat(),
          ...s.predictions.flat(),
          ...s.ngrams_added.flat(),
          ...s.ngrams_evicted.flat(),
        ])
          ids.add(t);
    /** @type {Record<string, string>} */
    const text = {};
    for (const id of [...ids].sort((a, b) => a - b)) text[id] = /** @type {BpeTokenizer} */ (state.tokenizer).piece(id);
    const lane = (/** @type {MethodRun} */ run) => ({ ...run, tokens: [...run.tokens], steps: [...run.steps] });
    /** @type {Trace} */
    const trace = {
      prompt: race.prompt,
      prompt_ids: race.prompt_ids,
      model: info.model,
      device: race.device,
      dtype: "float32",
      vocab_size: info.vocab_size,
      context: info.context,
      method: "lookahead",
      config: race.config,
      sampling: info.sampling,
      max_new_tokens: race.max_new_tokens,
      parallel: lane(runs.parallel),
      baseline: lane(runs.baseline),
      token_text: text,
      title: "Raced in your browser",
      recorded_at: new Date().toISOString().slice(0, 10),
      draft: info.draft,
      lanes: [],
      machine: /** @type {import("./contract").Machine} */ (state.machine),
    };
    /** @type {Derived} */
    // the lanes' metrics by the server's derivation (payload.py `metrics`): the methods table reads them
    const derived = {
      ...info.derived,
      ...scope.Lade.derive.derive(trace),
      metrics: scope.Lade.derive.metrics(trace),
    };
    // judged by the one noise rule only when both lanes finished (a race stopped early states no speed-up: payload.py)
    const whole = [trace.parallel, trace.baseline].every(
      (m) => m.stop_reason !== "running" && !scope.Lade.constants.cut.includes(m.stop_reason),
    );
    const sp = whole ? scope.Lade.derive.speed(trace) : null;
    if (sp) derived.speed = sp;
    return { trace, derived };
  }

  /** Race greedy against lookahead decoding on the visitor's prompt and setting, posting the run as it grows.
   * @param {{prompt: string, window: number, ngram: number, guess: number, max_new_tokens: number}} settings */
  async function race(settings) {
    const engine = /** @type {LoadedEngine} */ (state.engine), // `load` set them, before a race
      info = /** @type {EngineBoot} */ (state.info);
    const E = scope.Lade.engine;
    const config = { ...info.config, window: settings.window, ngram: settings.ngram, guess: settings.guess };
    const race = {
      prompt: settings.prompt,
      prompt_ids: /** @type {BpeTokenizer} */ (state.tokenizer).encode(settings.prompt),
      config,
      max_new_tokens: settings.max_new_tokens,
      device: /** @type {import("./contract").Machine} */ (state.machine).description.slice(0, 40),
    };
    if (race.prompt_ids.length > info.limits.prompt_tokens)
      throw new Refused(
        `The prompt is ${race.prompt_ids.length} tokens with the chat template; a race here takes at most ${info.limits.prompt_tokens}. Shorten it.`,
      );
    state.stop = false;
    state.more = true;
    const lanes = [engine.lane(), engine.lane()]; // each its own K/V cache, freed when the race ends
    const decoders = {
      parallel: new E.Lookahead(lanes[0], race.prompt_ids, config, info.context),
      baseline: new E.Greedy(lanes[1], race.prompt_ids),
    };
    /** @type {Record<string, Pick<MethodRun, "tokens" | "steps">>} the lanes' runs once a step is made */
    let sofar = { parallel: { tokens: [], steps: [] }, baseline: { tokens: [], steps: [] } };
    try {
      const runs = await E.race(
        decoders,
        state.eos,
        race.max_new_tokens,
        async (_lane, _step, now) => {
          sofar = now;
          if (state.more) {
            state.more = false; // the page asks for the next when it has drawn this one
            scope.postMessage({ type: "snapshot", payload: payload(race, now) });
          }
          await between(); // a Stop posted meanwhile is seen before the next step begins
        },
        () => state.stop,
      );
      scope.postMessage({ type: "done", payload: payload(race, runs) });
    } catch (err) {
      // a race that failed half way is kept as it stood, its lanes cut (not "running" for ever)
      const cut = (/** @type {MethodRun} */ r) => ({
        ...r,
        stop_reason: r.stop_reason === "running" ? "cancelled" : r.stop_reason,
      });
      const partial = sofar.parallel.steps.length
        ? payload(race, {
            // a step made: the race's own runs
            parallel: cut(/** @type {MethodRun} */ (sofar.parallel)),
            baseline: cut(/** @type {MethodRun} */ (sofar.baseline)),
          })
        : null;
      throw Object.assign(/** @type {Error} */ (err), { partial });
    } finally {
      for (const lane of lanes) lane.close();
    }
  }

  /** @param {Partial<Error> & {partial?: Payload | null}} err a refusal, an error (a race's with the race as it stood,
   * `partial`), or whatever else was thrown */
  const failed = (err) =>
    scope.postMessage({
      type: "error",
      message: String((err && err.message) || err),
      refused: err instanceof Refused,
      partial: (err && err.partial) || null,
    });

  scope.onmessage = (ev) => {
    /** @type {RaceWorkerIn | {type?: undefined}} */
    const msg = ev.data || {};
    if (msg.type === "stop") state.stop = true;
    else if (msg.type === "more") state.more = true;
    else if (msg.type === "load") {
      state.stop = false;
      load(msg).catch(failed);
    } else if (msg.type === "race") race(msg.settings).catch(failed);
    else if (msg.type === "forget")
      (async () => {
        const bytes = await scope.Lade.forward.stored();
        await scope.Lade.forward.forget();
        scope.postMessage({ type: "forgot", bytes });
      })().catch(failed);
  };
})();
