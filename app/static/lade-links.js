// @ts-check
// The page's address (`Lade.links`): the keys it reads and writes (a chapter, a run, a step, a view, an embed's span,
// the mode, the lab's settings, Present, the theme), read back with a plain-text notice for what it cannot show
// (`read`), written from the state (`write`, `url`), and a value from it made safe to echo (`shown`). The one reader
// of a deep link; lade-address.js keeps the history in step with it.
const LadeLinks = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);

  const STEP = /^\d{1,6}$/,
    MARKUP = /[<>[\]()`&]/g,
    HANDLE = new RegExp(`^(?:${Lade.constants.stored_handle})$`), // a run the server holds (payload.py)
    DEVICE = /^[a-z0-9-]{1,24}$/,
    SIZE = /^\d{1,4}(?:\.\d{1,2})?[MB]$/;
  /** The address's keys this page reads and writes; any other (a host's own) is kept as it is. */
  const KEYS = [
    ...[
      "lesson",
      "run",
      "step",
      "view",
      "embed",
      "from",
      "to",
      "mode",
      "device",
      "size",
      "batch",
      "devices",
      "present",
    ],
    ...["__theme", "contrast"], // the theme (lade-theme.js): `__theme` is Gradio's own key, read by its frame too
  ];
  /** A value from the address for a notice: printable, no markup characters, at most 40. @param {string} value */
  const shown = (value) => {
    const chars = [...String(value)]
      .filter((c) => c === " " || !/[\p{C}\p{Z}]/u.test(c))
      .join("")
      .replace(MARKUP, "");
    const text = [...chars];
    return text.length > 40 ? text.slice(0, 40).join("") + "…" : chars;
  };

  const links = {
    /** The page's own address with `params` (the site's base where the page is a static site); `keep`: the
     * address's other keys (a host's own, e.g. a theme) stay. @param {Record<string, string | number | boolean>} params
     * @param {boolean} [keep] */
    url(params, keep = false) {
      const base = `${location.origin}${location.pathname}`,
        out = new URLSearchParams(keep ? location.search : "");
      for (const key of KEYS) out.delete(key);
      for (const [k, v] of Object.entries(params)) out.set(k, String(v));
      return `${base}?${out}`;
    },
    /**
     * The address of a state, the inverse of `read`: a chapter and its step; a run, its step and the mode (the lab
     * with its selection); an embed's view; and the theme, where it is not the system's.
     * @param {State} state @returns {Record<string, string | number>}
     */
    write(state) {
      return { ...this.place(state), ...Lade.theme.write(state.theme) };
    },
    /** `write` less the theme. @param {State} state @returns {Record<string, string | number>} */
    place(state) {
      /** @type {Record<string, number>} an embed, with its slide's span (lade-slide.js) */
      const embed = state.embed ? { embed: 1 } : state.present ? { present: 1 } : {};
      const e = state.embed || {},
        span = Object.fromEntries(
          /** @type {("from" | "to")[]} */ (["from", "to"]).flatMap((key) =>
            typeof e[key] === "number" ? [[key, e[key]]] : [],
          ),
        );
      if (state.mode === "lesson") return { lesson: state.chapter, step: state.k, ...embed, ...span };
      if (!state.current) return { mode: state.mode };
      const at = { run: state.current, step: state.k, ...(state.embed ? {} : embed) };
      if (state.mode === "lab") {
        const { device, size, batch, devices } = state.lab;
        return { ...at, mode: "lab", device, size, batch, devices };
      }
      return state.embed && state.embed.view ? { ...at, view: state.embed.view, ...embed, ...span } : at;
    },
    /**
     * What the address asks for: the one reading of a link (the server reads none; an embed hides the server page's
     * sidebar by the page's mode, lade.css). A bad value falls back (chapter 1, the run's opening step, every view)
     * with a one-line notice that echoes the address as plain text (`shown`).
     * @param {string} search @param {Boot} boot @param {number} chapters @returns {Link}
     */
    read(search, boot, chapters) {
      // a key given twice counts by its last value, as the server reads it
      const params = new URLSearchParams(search),
        q = {
          get: (/** @type {string} */ k) => {
            const all = params.getAll(k);
            return all.length ? all[all.length - 1] : null;
          },
        };
      const names = boot.gallery.map((g) => g.name);
      const yes = (/** @type {string} */ k) => ["1", "true", "yes"].includes((q.get(k) || "").toLowerCase());
      const embed = yes("embed");
      const present = !embed && yes("present");
      // the theme only where the address names one: Back to an entry written before a theme was chosen keeps it
      const theme = params.has("__theme") || params.has("contrast") ? Lade.theme.read(params) : null;
      // "Race it in your browser" open: a key the page reads but never writes, so it stays in the address
      const race = yes("race");
      const lesson = q.get("lesson"),
        wanted = q.get("run"),
        step = q.get("step"),
        view = q.get("view");
      // an embed's slide: the steps it spans (lade-slide.js), as its snippet writes them
      const [from, to] = ["from", "to"].map((k) => {
        const v = (q.get(k) || "").trim();
        return embed && STEP.test(v) ? +v : null;
      });
      if (lesson !== null) {
        const text = lesson.trim(),
          at = step !== null && STEP.test(step.trim()) ? +step.trim() : null;
        if (STEP.test(text) && +text >= 1 && +text <= chapters)
          return { lesson: +text, step: at, embed, from, present, theme, race, notice: "" };
        return {
          lesson: 1,
          embed,
          theme,
          race,
          notice: `There is no chapter “${shown(lesson)}” (chapters 1 to ${chapters}); showing chapter 1.`,
        };
      }
      const notices = [];
      let run = null;
      if (wanted !== null) {
        const w = wanted.trim().toLowerCase();
        run = names.find((n) => n.toLowerCase() === w || n.replace(/-W\d+N\d+G\d+$/, "").toLowerCase() === w) || null;
        // a run the server holds (a live race, an opened file) is asked of it; one it no longer holds says so
        if (!run && boot.source === "server" && HANDLE.test(wanted.trim())) run = wanted.trim();
        // a race this browser keeps (lade-race-keep.js) is asked of its storage
        if (!run && boot.engine && Lade.raceKeep.HANDLE.test(wanted.trim())) run = wanted.trim();
        if (!run) notices.push(`No gallery run is called “${shown(wanted)}”; the explorer's gallery menu lists them.`);
      }
      const mode = q.get("mode"),
        lab = /** @type {Partial<LabInputs>} */ ({});
      if (run && mode === "lab") {
        const [device, size, batch, devices] = ["device", "size", "batch", "devices"].map((k) =>
          (q.get(k) || "").trim(),
        );
        if (DEVICE.test(device)) lab.device = device;
        if (SIZE.test(size)) lab.size = size;
        if (STEP.test(batch)) lab.batch = +batch;
        if (STEP.test(devices)) lab.devices = +devices;
      }
      let number = null;
      if (step !== null && run) {
        if (STEP.test(step.trim())) number = +step.trim();
        else notices.push(`Step “${shown(step)}” is not a step number; showing the run's opening step.`);
      }
      let v = view;
      if (v !== null && !boot.views.ids.includes(v) && !Object.hasOwn(boot.views.groups, v)) {
        if (run) notices.push(`There is no view “${shown(v)}”; showing every view.`);
        v = null;
      }
      return {
        run,
        step: number,
        view: run ? v : null,
        embed: embed && !!run,
        from,
        to,
        present,
        theme,
        race,
        notice: notices.join(" "),
        ...(run && (mode === "lab" || mode === "explorer") ? { mode, lab } : {}),
      };
    },
  };

  return { ...links, shown };
})();
window.Lade.links = LadeLinks;
