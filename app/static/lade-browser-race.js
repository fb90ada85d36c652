// @ts-check
// "Race it in your browser" (`Lade.browserRace`): lookahead decoding against greedy decoding on the visitor's own
// prompt, on the visitor's own device, with no server: the engine's files beside the page (engine/, written by
// `lade export-site`: app/render/engine_files.py) are loaded on demand, the two lanes race on one clock as the
// server's race does (record.py), and the run is drawn by the same renderer as any recorded run, its steps derived
// with the engine's own rules (lade-derive.js). Every time shown is measured on the visitor's device, and the run
// says which backend ran it. What the page states before anything downloads (sizes, memory) comes from the boot
// (`boot.engine`, measured when the files were written).
const LadeBrowserRace = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { h, fmt } = Lade.dom;
  const SCRIPTS = ["lade-weights.js", "lade-engine.js", "lade-forward.js"];
  const RUNTIME = { wasm: "ort/ort.wasm.min.js", webgpu: "ort/ort.webgpu.min.js" }; // onnxruntime-web's builds

  /** The GPU this browser offers through WebGPU, in words, or null (no WebGPU, no adapter, or it would not say). */
  async function gpuAdapter() {
    const gpu = /** @type {any} */ (navigator).gpu;
    if (!gpu) return null;
    try {
      const adapter = await gpu.requestAdapter();
      const info = (adapter && adapter.info) || {};
      // a software adapter (SwiftShader and the like) runs on the CPU, many times slower than WebAssembly
      if (!adapter || info.isFallbackAdapter || adapter.isFallbackAdapter) return null;
      const words = [info.vendor, info.architecture, info.description].filter(Boolean).join(" ");
      return Lade.dom.labelText(words || "an adapter that gives no name").slice(0, 60);
    } catch {
      return null;
    }
  }
  const MORE = ["lade-tokenizer.js", "lade-derive.js"];

  /** @type {Promise<any> | null} the engine, loaded once per page */
  let loading = null;
  let races = 0;

  /** A refusal the visitor can act on (a setting, the prompt): shown as it is, not blamed on the browser. */
  class Refused extends Error {}

  /** What this browser lacks to run the engine, or null. */
  function lacking() {
    if (typeof WebAssembly !== "object") return "WebAssembly";
    if (!window.isSecureContext || !crypto || !crypto.subtle)
      return "a secure page (https, or this machine's own address) to check the weights' hashes";
    return null;
  }

  /** @param {string} src */
  const script = (src) =>
    new Promise((resolve, reject) => {
      const el = document.createElement("script");
      el.src = src;
      el.onload = resolve;
      el.onerror = () => reject(new Error(`could not load ${src}`));
      document.head.append(el);
    });

  /** The engine, its tokenizer and the derive rules, loaded once. @param {any} info @param {(stage: string, done: number, total: number) => void} progress */
  function load(info, progress) {
    if (!loading)
      loading = (async () => {
        const base = new URL(info.base, location.href).href;
        const gpu = await gpuAdapter(); // WebGPU where the browser offers an adapter, else WebAssembly
        for (const name of [RUNTIME[gpu !== null ? "webgpu" : "wasm"], ...SCRIPTS, ...MORE])
          await script(new URL(name, base).href);
        const tokens = await (await window.Lade.forward.fetched(new URL("tokenizer.json", base))).json();
        const engine = await window.Lade.forward.load(/** @type {any} */ (window).ort, base, progress, gpu);
        return { engine, tokenizer: new window.Lade.tokenizer.Tokenizer(tokens), eos: new Set(tokens.eos) };
      })().catch((err) => {
        loading = null;
        throw err;
      });
    return loading;
  }

  /** The trace and payload of a race so far (the renderer's contract: trace.py, payload.py).
   * @param {any} info @param {any} race @param {Record<string, any>} runs */
  function payload(info, race, runs) {
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
    for (const id of [...ids].sort((a, b) => a - b)) text[id] = race.tokenizer.piece(id);
    const lane = (/** @type {any} */ run) => ({ ...run, tokens: [...run.tokens], steps: [...run.steps] });
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
    };
    /** @type {Record<string, any>} */
    const derived = { ...info.derived, ...window.Lade.derive.derive(trace) };
    // a finished race is judged by the one noise rule (no spreads on file for this device: its own drift, with the
    // project's machine's in-process spread as a floor); a race still running or stopped early is not (payload.py)
    const whole = [trace.parallel, trace.baseline].every(
      (m) => !["running", "cancelled", "budget"].includes(m.stop_reason),
    );
    const sp = whole ? window.Lade.derive.speed(trace) : null;
    if (sp) derived.speed = sp;
    return { trace, derived };
  }

  /**
   * The race itself: load (once), tokenise, race greedy and lookahead decoding, hold the run on the stage as it
   * grows (as often as drawing stays under a fifth of the time) and open it when it ends. @param {any} stage @param {any} settings
   * @param {{status: (text: string) => void, progress: (done: number, total: number, what: string) => void, stop: () => boolean}} ui
   */
  async function run(stage, settings, ui) {
    const info = stage.boot.engine;
    const missing = lacking();
    if (missing)
      throw new Refused(`This browser cannot race here: it needs ${missing}. The recorded runs still replay.`);
    const gpuMore = (info.runtime_bytes.webgpu - info.runtime_bytes.wasm) / 1e6;
    ui.status(
      `Loading the engine: ${fmt(info.download_bytes / 1e6, 0)} MB the first time (${fmt(info.download_bytes / 1e6 + gpuMore, 0)} MB with WebGPU)…`,
    );
    const t0 = performance.now();
    let said = "";
    const { engine, tokenizer, eos } = await load(info, (stage, done, total) => {
      const what = {
        download: ["Downloading the model", "Downloading the model and its runtime…"],
        storage: ["Reading the model from this browser's storage", "Reading the model kept in this browser…"],
        rebuild: ["Rebuilding the weights", "Rebuilding the weights from the GGUF, each tensor checked…"],
      }[stage] || [stage, stage];
      ui.progress(done, total, what[0]);
      const now = what[1];
      if (now !== said) ui.status(now); // one announcement per stage; the numbers are the progress bar's
      said = now;
    });
    const loaded = (performance.now() - t0) / 1000;
    const E = window.Lade.engine;
    const config = { ...info.config, window: settings.window, ngram: settings.ngram, guess: settings.guess };
    const race = {
      prompt: settings.prompt,
      prompt_ids: tokenizer.encode(settings.prompt),
      config,
      tokenizer,
      max_new_tokens: settings.max_new_tokens,
      device: (engine.gpu !== null
        ? `browser: WebGPU, ${engine.gpu}`
        : `browser: WebAssembly, ${engine.threads} thread${engine.threads === 1 ? "" : "s"}`
      ).slice(0, 40),
    };
    if (race.prompt_ids.length > info.limits.prompt_tokens)
      throw new Refused(
        `The prompt is ${race.prompt_ids.length} tokens with the chat template; a race here takes at most ${info.limits.prompt_tokens}. Shorten it.`,
      );
    const handle = `browser-${++races}`;
    const lanes = [engine.lane(), engine.lane()]; // each its own K/V cache, freed when the race ends
    const decoders = {
      parallel: new E.Lookahead(lanes[0], race.prompt_ids, config, info.context),
      baseline: new E.Greedy(lanes[1], race.prompt_ids),
    };
    let last = 0,
      cost = 0,
      made = 0;
    const from = engine.stored_bytes ? "the model read from this browser's storage" : "the model downloaded";
    const fell = engine.fallback ? ` WebGPU would not start here (${engine.fallback.slice(0, 120)}).` : "";
    ui.status(`Racing on ${engine.backend} (loaded in ${fmt(loaded, 1)} s, ${from})…${fell}`);
    /** @type {Record<string, any> | null} */
    let latest = null;
    let runs;
    try {
      runs = await E.race(
        decoders,
        eos,
        race.max_new_tokens,
        (_lane, _step, sofar) => {
          latest = sofar;
          made = sofar.parallel.tokens.length + sofar.baseline.tokens.length;
          ui.progress(made, 2 * race.max_new_tokens, "Racing: tokens written by both lanes");
          // redrawn as often as drawing stays under a fifth of the time (drawing falls between steps, outside the
          // steps' measured times, but it delays the race's end)
          if (performance.now() - last > Math.max(100, 4 * cost)) {
            const t = performance.now();
            stage.hold(handle, payload(info, race, sofar));
            last = performance.now();
            cost = last - t;
          }
        },
        ui.stop,
      );
    } catch (err) {
      // a race that failed half way is kept as it stood, its lanes cut (not "running" for ever)
      const sofar = /** @type {Record<string, any> | null} */ (latest);
      if (sofar && stage.runs.has(handle)) {
        const cut = (/** @type {any} */ r) => ({
          ...r,
          stop_reason: r.stop_reason === "running" ? "cancelled" : r.stop_reason,
        });
        stage.hold(handle, payload(info, race, { parallel: cut(sofar.parallel), baseline: cut(sofar.baseline) }));
      }
      throw err;
    } finally {
      for (const lane of lanes) lane.close();
    }
    const done = payload(info, race, runs);
    stage.hold(handle, done);
    ui.progress(1, 1, "Race finished");
    const stopped = runs.parallel.stop_reason === "cancelled" || runs.baseline.stop_reason === "cancelled";
    const sp = done.derived.speed,
      steps = `lookahead wrote ${runs.parallel.tokens.length} tokens in ${runs.parallel.steps.length} steps, greedy in ${runs.baseline.steps.length}`;
    const plain = (/** @type {any[]} */ parts) => parts.flat(Infinity).join("");
    ui.status(
      stopped
        ? `Stopped on ${engine.backend}: both lanes stopped at once, so their times are no speed-up. Lookahead had written ${runs.parallel.tokens.length} tokens in ${runs.parallel.steps.length} steps, greedy ${runs.baseline.tokens.length}.`
        : sp
          ? `Done on ${engine.backend}: ${steps}. Lookahead ran at ${fmt(sp.lanes.parallel.speedup)}x greedy's speed, ${sp.lanes.parallel.verdict}: ${plain(Lade.lessonExtras.bandWords(sp.band, (_name, value) => String(value)))}. Every time was measured on your device.${fell}`
          : `Done on ${engine.backend}: ${steps}. Greedy made too few steps to measure your device's noise, so the race gets no verdict; every time was measured on your device.${fell}`,
    );
    return handle;
  }

  /** The panel: the prompt, W, N, G and new tokens within the public limits, what loading costs, Race and Stop.
   * @param {any} stage */
  function panel(stage) {
    const info = stage.boot.engine,
      lim = info.limits;
    const num = (
      /** @type {string} */ id,
      /** @type {string} */ label,
      /** @type {number} */ value,
      /** @type {number} */ min,
      /** @type {number} */ max,
    ) =>
      h(
        "label",
        { for: id },
        label,
        " ",
        h("input", { id, type: "number", min, max, value, step: 1, inputmode: "numeric" }),
      );
    const status = h("p", { id: "browser-race-status", role: "status", "aria-live": "polite" }, "");
    const bar = h("progress", { id: "browser-race-progress", max: 1, value: 0, "aria-label": "Loading and racing" });
    let stopped = false;
    const go = h("button", { type: "submit", class: "primary", id: "browser-race-go" }, "Race in my browser");
    const stop = h(
      "button",
      { type: "button", id: "browser-race-stop", disabled: true, onclick: () => (stopped = true) },
      "Stop",
    );
    const forget = h(
      "button",
      {
        type: "button",
        id: "browser-race-forget",
        onclick: async () => {
          try {
            if (!window.Lade.forward) await script(new URL("lade-forward.js", new URL(info.base, location.href)).href);
            const bytes = await window.Lade.forward.stored();
            await window.Lade.forward.forget();
            status.textContent = bytes
              ? `Deleted the model kept in this browser (${fmt(bytes / 1e6, 0)} MB). The next race downloads it again.`
              : "This browser keeps no copy of the model.";
          } catch (err) {
            status.textContent = `Could not delete the stored model (${/** @type {Error} */ (err).message}).`;
          }
        },
      },
      "Delete the stored model",
    );
    const form = h(
      "form",
      { id: "browser-race", class: "browser-race", novalidate: true },
      h("h2", {}, "Race it in your browser"),
      h(
        "p",
        {},
        "Lookahead decoding against greedy decoding on your prompt, on your device: nothing is sent anywhere. The first race downloads ",
        h("strong", {}, `${fmt(info.download_bytes / 1e6, 0)} MB`),
        " from this site (the model ",
        h("span", { class: "source" }, info.model),
        " and its runtime) and needs about ",
        h("strong", {}, `${fmt(info.memory_bytes / 1e9, 1)} GB`),
        " of memory (Chromium's processes together, at most, while loading and racing: ",
        h("span", { class: "source" }, info.memory_source),
        "). ",
        self.caches
          ? "It tries to keep the model in this browser's storage, so that a later visit reads it from disk (Delete below frees it). "
          : "This page cannot keep the model between visits (the browser's storage is off here). ",
        "Where your browser offers a GPU through WebGPU it runs there (experimental: its runtime is ",
        fmt((info.runtime_bytes.webgpu - info.runtime_bytes.wasm) / 1e6, 0),
        " MB more, and no figure has been measured on a real GPU yet); else on one WebAssembly thread, where ",
        "lookahead's wider steps cost time: measured on the project's machine at W = ",
        String(info.measured_setting.window),
        ", N = ",
        String(info.measured_setting.ngram),
        ", G = ",
        String(info.measured_setting.guess),
        ", lookahead took ",
        fmt(info.measured_ms.lookahead, 0),
        " ms a token against greedy's ",
        fmt(info.measured_ms.greedy, 0),
        " (",
        h("span", { class: "source" }, "BENCHMARKS.md §16"),
        "). Expect it to lose on a CPU.",
      ),
      h("label", { for: "browser-race-prompt" }, "Your prompt"),
      h("textarea", { id: "browser-race-prompt", rows: 3, maxlength: lim.prompt_chars, required: true }, ""),
      h(
        "div",
        { class: "row" },
        num("browser-race-w", "W (window columns)", 5, 1, lim.window),
        num("browser-race-n", "N (n-gram size)", 4, 2, lim.ngram),
        num("browser-race-g", "G (candidates)", 5, 0, lim.guess),
        num("browser-race-tokens", "new tokens", 32, 1, lim.tokens),
      ),
      h("div", { class: "row" }, go, stop, forget),
      bar,
      status,
    );
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const value = (/** @type {string} */ id) =>
        Number(/** @type {HTMLInputElement} */ (form.querySelector(`#${id}`)).value);
      const prompt = /** @type {HTMLTextAreaElement} */ (form.querySelector("#browser-race-prompt")).value;
      if (!prompt.trim()) {
        status.textContent = "Type a prompt first.";
        return;
      }
      const ranges = /** @type {[string, string, number, number][]} */ ([
        ["browser-race-w", "W", 1, lim.window],
        ["browser-race-n", "N", 2, lim.ngram],
        ["browser-race-g", "G", 0, lim.guess],
        ["browser-race-tokens", "new tokens", 1, lim.tokens],
      ]);
      for (const [id] of ranges) form.querySelector(`#${id}`)?.removeAttribute("aria-invalid");
      const bad = ranges.find(([id, , lo, hi]) => !Number.isInteger(value(id)) || value(id) < lo || value(id) > hi);
      if (bad) {
        status.textContent = `${bad[1]} must be a whole number from ${bad[2]} to ${bad[3]}.`;
        const field = /** @type {HTMLInputElement} */ (form.querySelector(`#${bad[0]}`));
        field.setAttribute("aria-invalid", "true");
        field.focus();
        return;
      }
      stopped = false;
      go.disabled = forget.disabled = true;
      stop.disabled = false;
      try {
        const settings = {
          prompt,
          window: value("browser-race-w"),
          ngram: value("browser-race-n"),
          guess: value("browser-race-g"),
          max_new_tokens: value("browser-race-tokens"),
        };
        await run(stage, settings, {
          status: (t) => (status.textContent = t),
          progress: (done, total, what) => {
            bar.max = total;
            bar.value = done;
            bar.setAttribute("aria-label", what);
          },
          stop: () => stopped,
        });
      } catch (err) {
        status.textContent =
          err instanceof Refused
            ? err.message
            : `This browser could not run the engine (${/** @type {Error} */ (err).message}). The gallery's recorded runs still replay here.`;
      } finally {
        go.disabled = forget.disabled = false;
        stop.disabled = true;
      }
    });
    return form;
  }

  return { panel, run, payload };
})();
window.Lade.browserRace = LadeBrowserRace;
