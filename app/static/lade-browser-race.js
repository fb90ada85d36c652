// @ts-check
// "Race it in your browser" (`Lade.browserRace`): lookahead decoding against greedy decoding on the visitor's own
// prompt, on the visitor's own device, with no server. This file is the page's half and only draws: loading the
// engine's files (engine/, written by `lade export-site`: app/render/engine_files.py), rebuilding the weights,
// starting the session, measuring this device and racing all happen in a worker (lade-race-worker.js), which posts
// progress, this device's cost curve with the setting Auto proposes from it, and the run as it grows; the page holds
// each on the stage (the same views as any recorded run) and says how the race ended, sentence by sentence, from
// its trace (lade-race-words.js). Every time shown is measured on the visitor's device, and the run names the
// backend and threads that ran it. What the page states before anything downloads (sizes, memory) comes from the
// boot (`boot.engine`).
const LadeBrowserRace = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { h, fmt, plural } = Lade.dom;

  /** A refusal the visitor can act on (a setting, the prompt): shown as it is, not blamed on the browser. */
  class Refused extends Error {}

  /** What this browser lacks to run the engine, or null. */
  function lacking() {
    if (typeof WebAssembly !== "object") return "WebAssembly";
    if (typeof Worker !== "function") return "Web Workers";
    if (!window.isSecureContext || !crypto || !crypto.subtle)
      return "a secure page (https, or this machine's own address) to check the weights' hashes";
    return null;
  }

  let override = 0; // threads asked for by a benchmark (`setThreads`); 0: as the page allows

  /** The threads a race may use here, and why no more: several only where the page is cross-origin isolated. */
  function threading() {
    const cores = navigator.hardwareConcurrency || 1;
    if (self.crossOriginIsolated) {
      const threads = override || Math.min(4, cores);
      return { threads, cores, why: "" };
    }
    const framed = window.top !== window;
    return {
      threads: 1,
      cores,
      why: framed
        ? "this page is shown inside another page that is not cross-origin isolated (a slide, a Space's frame), so " +
          "the browser lets it use one thread; open it in a tab of its own to race on more of your cores"
        : "this page is not cross-origin isolated (its host sends no isolation headers, and this browser did not " +
          "add them), so the browser lets it use one thread",
    };
  }

  /** On a static host that sends no isolation headers, the site's service worker adds them (one reload on the
   * first visit; never in a frame, which its host's isolation decides). @param {EngineBoot} info */
  function isolate(info) {
    const sw = navigator.serviceWorker;
    if (!info.isolation || self.crossOriginIsolated || !sw || window.top !== window || !window.isSecureContext) return;
    const once = "lade-isolation-reloaded";
    sw.register(new URL(info.isolation, location.href).href)
      .then(() => {
        if (sw.controller || sessionStorage.getItem(once)) return;
        sw.addEventListener("controllerchange", () => {
          sessionStorage.setItem(once, "1"); // once per tab: a browser that will not isolate is not reloaded again
          location.reload();
        });
      })
      .catch(() => {}); // no service worker here: one thread, and the panel says why
  }

  /** The worker and what it has loaded, kept for the page's life (the engine loads and the device is measured once).
   * `on(message)` gets what the worker posts. */
  class Session {
    /** @param {EngineBoot} info */
    constructor(info) {
      this.info = info;
      this.base = new URL(info.base, location.href).href;
      this.worker = new Worker(new URL("lade-race-worker.js", this.base));
      /** @type {RaceReady | null} what the worker said when loaded: engine, machine, curve, auto */
      this.ready = null;
      /** @type {(m: RaceWorkerOut) => void} */
      this.on = () => {};
      this.worker.onmessage = (ev) => this.on(/** @type {RaceWorkerOut} */ (ev.data));
      this.worker.onerror = (ev) => this.on({ type: "error", message: ev.message || "the worker would not start" });
    }

    /** Ask the worker and follow its answers until `until` says done (`M`, its answer); `each` gets what it says
     * before that (`E`: what the worker says to that question), an error rejects.
     * @template {RaceWorkerOut} M @template {RaceWorkerOut} E
     * @param {RaceWorkerIn} msg @param {(m: RaceWorkerOut) => m is M} until @param {(m: E) => void} [each]
     * @returns {Promise<M>} */
    ask(msg, until, each = () => {}) {
      return new Promise((resolve, reject) => {
        this.on = (m) => {
          if (m.type === "error")
            reject(Object.assign(m.refused ? new Refused(m.message) : new Error(m.message), { partial: m.partial }));
          else if (until(m)) resolve(m);
          else each(/** @type {E} */ (m));
        };
        this.worker.postMessage(msg);
      });
    }

    /** @param {(m: RaceWorkerSays<"progress">) => void} progress @returns {Promise<RaceReady>} */
    async load(progress) {
      if (!this.ready) {
        /** @type {RaceWorkerIn} */
        const msg = { type: "load", base: this.base, threads: threading().threads, info: this.info };
        this.ready = await this.ask(msg, (m) => m.type === "ready", progress);
      }
      return this.ready;
    }

    /** @param {RaceSettings} settings @param {(payload: Payload) => void} snapshot */
    race(settings, snapshot) {
      return this.ask(
        { type: "race", settings },
        (m) => m.type === "done",
        (/** @type {RaceWorkerSays<"snapshot">} */ m) => snapshot(m.payload),
      );
    }
  }

  /** @type {Session | null} */
  let session = null;

  /** End the worker (Stop while loading or measuring, a failure): what waits on it is told, and the next race starts
   * a new one. */
  function endSession() {
    if (session) {
      session.worker.terminate();
      session.on({ type: "error", message: "stopped" });
    }
    session = null;
  }

  /**
   * The race itself: load (once), measure the device (once), race, holding the run on the stage as it grows (as
   * often as drawing stays under a fifth of the time), and say how it ended. `ui.auto()` says whether Auto chooses W,
   * N, G; `ui.proposed(ready)` shows what it measured and proposes, and returns the setting to race.
   * @param {Stage} stage @param {RaceSettings} settings
   * @param {{status: (text: string) => void, progress: (done: number, total: number, what: string) => void,
   *   proposed: (ready: RaceReady) => Partial<RaceSettings>, stopped: () => boolean}} ui
   */
  async function run(stage, settings, ui) {
    const info = /** @type {EngineBoot} */ (stage.boot.engine); // the panel is there only where the boot has it
    const missing = lacking();
    if (missing)
      throw new Refused(`This browser cannot race here: it needs ${missing}. The recorded runs still replay.`);
    if (!session) session = new Session(info);
    const here = session;
    const t0 = performance.now();
    let said = "";
    const ready = await here.load((m) => {
      const what = {
        download: ["Downloading the model", "Downloading the model and its runtime…"],
        storage: ["Reading the model from this browser's storage", "Reading the model kept in this browser…"],
        rebuild: ["Rebuilding the weights", "Rebuilding the weights from the GGUF, each tensor checked…"],
        measure: ["Measuring this device", "Measuring this device: forwards of each width a race feeds, in turn…"],
      }[/** @type {string} */ (m.stage)] || [m.stage, m.stage];
      ui.progress(m.done, m.total, what[0]);
      if (what[1] !== said) ui.status(what[1]); // one announcement per stage; the numbers are the progress bar's
      said = what[1];
    });
    if (ui.stopped()) throw new Refused("Stopped before the race began; nothing was raced.");
    const setting = { ...settings, ...ui.proposed(ready) };
    const handle = `browser-${Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, "0")).join("")}`;
    const e = ready.engine;
    const loaded = (performance.now() - t0) / 1000;
    ui.status(
      `Racing W=${setting.window}, N=${setting.ngram}, G=${setting.guess} on ${e.backend} (ready in ${fmt(loaded, 1)} s)…`,
    );
    let made = 0;
    const payload = await here
      .race(setting, (p) => {
        const t = performance.now();
        stage.hold(handle, p);
        made = p.trace.parallel.tokens.length + p.trace.baseline.tokens.length;
        ui.progress(made, 2 * setting.max_new_tokens, "Racing: tokens written by both lanes");
        // the next drawing once this one is on screen (its layout and paint counted too) and has cost at most a
        // fifth of the time since: drawing is the page's only work, and it shares the device with the race
        requestAnimationFrame(() =>
          setTimeout(() => {
            const cost = performance.now() - t;
            setTimeout(() => here.worker.postMessage({ type: "more" }), Math.max(100, 4 * cost));
          }),
        );
      })
      .then((m) => m.payload)
      .catch((/** @type {Error & {partial?: Payload | null}} */ err) => {
        if (err.partial) stage.hold(handle, err.partial); // kept as it stood, its lanes cut
        throw err;
      });
    stage.hold(handle, payload);
    ui.progress(1, 1, "Race finished");
    return { handle, payload, ready };
  }

  /** A number field. @param {string} id @param {string} label @param {number} value @param {number} min @param {number} max */
  const num = (id, label, value, min, max) =>
    h(
      "label",
      { for: id },
      label,
      " ",
      h("input", { id, type: "number", min, max, value, step: 1, inputmode: "numeric" }),
    );

  /** The panel: the prompt, Auto or W, N, G, new tokens within the public limits, what loading costs, the threads
   * this page may use, Race and Stop; after a race, how it ended, and keeping it. @param {Stage} stage */
  function panel(stage) {
    const info = /** @type {EngineBoot} */ (stage.boot.engine), // made only where the boot has it (lade-frame.js)
      lim = info.limits;
    isolate(info);
    const status = h("p", { id: "browser-race-status", role: "status", "aria-live": "polite" }, "");
    const bar = h("progress", { id: "browser-race-progress", max: 1, value: 0, "aria-label": "Loading and racing" });
    const why = h("div", { id: "browser-race-auto-why", class: "muted", hidden: true });
    const ended = h("div", { id: "browser-race-summary", hidden: true });
    let stopped = false,
      busy = false;
    const go = h("button", { type: "submit", class: "primary", id: "browser-race-go" }, "Race in my browser");
    const stop = h(
      "button",
      {
        type: "button",
        id: "browser-race-stop",
        disabled: true,
        onclick: () => {
          stopped = true;
          if (session && session.ready) session.worker.postMessage({ type: "stop" });
          else endSession(); // still loading or measuring: that work ends now, and the next race starts afresh
        },
      },
      "Stop",
    );
    const forget = h(
      "button",
      {
        type: "button",
        id: "browser-race-forget",
        onclick: async () => {
          try {
            if (!session) session = new Session(info);
            const { bytes } = await session.ask({ type: "forget" }, (m) => m.type === "forgot");
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
    const auto = h("input", { type: "checkbox", id: "browser-race-auto", checked: true });
    const fields = ["w", "n", "g"].map((k) => `#browser-race-${k}`);
    const lock = () => {
      for (const f of fields) /** @type {HTMLInputElement} */ (form.querySelector(f)).disabled = auto.checked;
    };
    auto.addEventListener("change", lock);
    const { threads, cores, why: oneThread } = threading();
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
        " and its runtime). While loading and racing, Chromium's processes used at most ",
        h("strong", {}, `${fmt(info.memory_bytes / 1e9, 1)} GB`),
        " of memory added together (memory they share counted in each, so what a device needs is less), measured ",
        h("span", { class: "source" }, info.memory_source),
        ". ",
        self.caches
          ? "It tries to keep the model in this browser's storage, so that a later visit reads it from disk (Delete below frees it). "
          : "This page cannot keep the model between visits (the browser's storage is off here). ",
        "Where your browser offers a GPU through WebGPU it runs there (experimental: ",
        fmt((info.runtime_bytes.webgpu - info.runtime_bytes.wasm) / 1e6, 0),
        " MB more, and no figure has been measured on a real GPU yet); else on WebAssembly. Before racing, the page ",
        "times forwards of each width on your device, the way a race runs them, and Auto proposes the W, N, G ",
        "predicted fastest there.",
      ),
      h(
        "p",
        { id: "browser-race-threads" },
        oneThread
          ? `One thread: ${oneThread}.`
          : `This page is cross-origin isolated, so the race may use ${plural(threads, "thread")} of the ${plural(cores, "core")} your browser reports.`,
      ),
      h("label", { for: "browser-race-prompt" }, "Your prompt"),
      h("textarea", { id: "browser-race-prompt", rows: 3, maxlength: lim.prompt_chars, required: true }, ""),
      h(
        "p",
        { class: "row" },
        h("label", { for: "browser-race-auto" }, auto, " Auto: W, N, G for this device, from its own measured curve"),
      ),
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
      why,
      ended,
    );
    lock();
    const value = (/** @type {string} */ id) =>
      Number(/** @type {HTMLInputElement} */ (form.querySelector(`#${id}`)).value);
    const setValue = (/** @type {string} */ id, /** @type {number} */ v) => {
      /** @type {HTMLInputElement} */ (form.querySelector(`#${id}`)).value = String(v);
    };
    /** The proposal shown, and (with Auto) put in the fields and raced. @param {RaceReady} ready
     * @returns {Partial<RaceSettings>} */
    const proposed = (ready) => {
      why.replaceChildren(
        h("p", { id: "browser-race-proposal" }, Lade.raceWords.autoWords(ready)),
        Lade.raceWords.curveChart(ready, info),
      );
      why.hidden = false;
      if (!auto.checked || !ready.auto) return {};
      setValue("browser-race-w", ready.auto.window);
      setValue("browser-race-n", ready.auto.ngram);
      setValue("browser-race-g", ready.auto.guess);
      return { window: ready.auto.window, ngram: ready.auto.ngram, guess: ready.auto.guess };
    };
    /** How the race ended, and the ways to keep it. @param {{handle: string, payload: Payload, ready: RaceReady}} done */
    const finished = (done) => {
      const sentences = Lade.raceWords.summary(done.payload, done.ready);
      const t = done.payload.trace;
      const note = h("p", { id: "browser-race-kept", role: "status" }, "");
      const keep = h(
        "button",
        {
          type: "button",
          id: "browser-race-keep",
          onclick: async () => {
            const kept = await Lade.raceKeep.keep(done.handle, done.payload).catch(() => null);
            if (!kept) {
              note.textContent =
                "This browser would not keep it (its storage is off here): download the trace instead.";
              return;
            }
            note.textContent =
              `Kept in this browser: its address opens it again here, and only here (${plural(kept.kept, "race")} kept, at most ${Lade.raceKeep.MOST}` +
              `${kept.dropped ? `; the oldest ${plural(kept.dropped, "race")} went` : ""}).`;
            if (stage.state.current === done.handle) stage.set({}); // the address now names it
          },
        },
        "Keep in this browser",
      );
      const download = h(
        "a",
        {
          class: "button",
          id: "browser-race-download",
          href: "#",
          download: `${done.handle}.json`,
          // the file is made when asked for (a trace's JSON is not made on every race)
          onclick: (/** @type {MouseEvent} */ ev) => {
            const link = /** @type {HTMLAnchorElement} */ (ev.currentTarget);
            if (link.href.endsWith("#")) link.href = URL.createObjectURL(Lade.raceKeep.traceFile(t, info.trace_format));
            Lade.raceKeep.settle(done.handle);
          },
        },
        "Download the trace",
      );
      ended.replaceChildren(
        h("h3", {}, "How the race ended"),
        h(
          "ul",
          { id: "browser-race-sentences" },
          sentences.map((s) => h("li", { dataset: { sentence: s.id } }, s.text)),
        ),
        h("p", {}, "This race lives only in this page: a reload drops it unless you keep it. ", keep, " ", download),
        note,
      );
      ended.hidden = false;
      const words = `W=${t.config.window}, N=${t.config.ngram}, G=${t.config.guess}, ${plural(t.parallel.tokens.length, "token")} of lookahead`;
      Lade.raceKeep.unkept(done.handle, words);
      const first = sentences.slice(0, 2).some((s) => s.text.includes("stopped by Stop")) ? "Stopped" : "Done";
      status.textContent = `${first} on ${done.ready.engine.backend}. ${sentences[sentences.length - 2].text}`;
    };
    form.addEventListener("submit", async (/** @type {SubmitEvent} */ ev) => {
      ev.preventDefault();
      if (busy) return;
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
      ]).filter(([id]) => !auto.checked || id === "browser-race-tokens");
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
      busy = true;
      go.disabled = forget.disabled = auto.disabled = true;
      stop.disabled = false;
      ended.hidden = true;
      try {
        const settings = {
          prompt,
          window: value("browser-race-w"),
          ngram: value("browser-race-n"),
          guess: value("browser-race-g"),
          max_new_tokens: value("browser-race-tokens"),
        };
        const done = await run(stage, settings, {
          status: (t) => (status.textContent = t),
          progress: (done, total, what) => {
            bar.max = total;
            bar.value = done;
            bar.setAttribute("aria-label", what);
          },
          proposed,
          stopped: () => stopped,
        });
        await new Promise((next) => setTimeout(next)); // the summary in a task of its own, after the run is drawn
        finished(done);
      } catch (err) {
        if (!(err instanceof Refused) || !session || !session.ready) endSession();
        status.textContent =
          err instanceof Refused
            ? err.message
            : stopped
              ? "Stopped while loading or measuring this device; nothing was raced."
              : `This browser could not run the engine (${/** @type {Error} */ (err).message}). The gallery's recorded runs still replay here.`;
      } finally {
        busy = false;
        go.disabled = forget.disabled = auto.disabled = false;
        stop.disabled = true;
        lock();
      }
    });
    return form;
  }

  /** Race on `n` threads from now on (where the page is isolated; a benchmark's switch): the engine loads afresh.
   * @param {number} n */
  function setThreads(n) {
    override = n;
    endSession();
  }

  return { panel, run, threading, setThreads };
})();
window.Lade.browserRace = LadeBrowserRace;
