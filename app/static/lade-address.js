// @ts-check
// The address and the history (`Lade.address`): the address follows the state (`write`), so reload, Back and Forward
// and a copied address land where the reader was; a page opens what its address asks for (`follow`), and Back and
// Forward restore it (`followHistory`). What an address says is read and written by `Lade.page.links`.
const LadeAddress = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);

  /** The address follows the state (`Lade.links.write`): a new chapter, mode or run is a new history entry,
   * a step or view replaces the entry, so reload, Back and Forward and a copied address land where the reader
   * was. Opening the page's own address replaces (whatever it named), so the first change after it pushes and
   * Back returns to it. Not written while playing (browsers throttle the history), nor in the HTML export (one
   * file, one run), and an embed only replaces (a slide's Back is the host's). @param {Stage} stage @param {State} before */
  function write(stage, before) {
    const s = stage.state;
    if (stage.standalone || s.playing || (!s.current && s.mode !== "lab")) return;
    // a run raced in stage page has no address to reload it from, unless stage browser keeps it (lade-race-keep.js)
    if (s.current && Lade.sources.local(s.current) && !Lade.raceKeep.kept(s.current)) return;
    const url = Lade.links.url(Lade.links.write(s), true);
    if (url === location.href) return;
    const moved = before.mode !== s.mode || before.chapter !== s.chapter || before.current !== s.current;
    try {
      if (moved && stage.landed && !stage.restoring && !s.embed) history.pushState(null, "", url);
      else history.replaceState(null, "", url);
    } catch {
      // an address the page may not write (a sandboxed frame): the state stays, unaddressed
    }
  }

  /** Open what the address asks for, or `fallback`; the page has then landed (`write`). @param {Stage} stage
   * @param {() => Promise<unknown> | void} fallback */
  async function follow(stage, fallback) {
    const link = Lade.links.read(location.search, stage.boot, Lade.lesson.CHAPTERS.length);
    await land(stage, link, fallback);
    const dropped = Lade.raceKeep.dropped(); // a race stage tab ran and did not keep, before a reload
    if (dropped) stage.set({ notice: dropped });
    stage.landed = true;
    // `?race=1`: "Race it in your browser" open, where stage page has the engine's files (a lecturer's link, an embed)
    if (link.race && stage.racePanel && stage.racePanel.hidden) stage.toggleRace(false);
  }

  /** Open the chapter, run or mode `link` names, else `fallback`. @param {Stage} stage @param {Link} link
   * @param {() => Promise<unknown> | void} fallback */
  async function land(stage, link, fallback) {
    if (link.notice) stage.set({ notice: link.notice });
    if (link.present) stage.set({ present: true });
    const theme = stage.state.theme;
    if (link.theme && (link.theme.scheme !== theme.scheme || link.theme.contrast !== theme.contrast))
      stage.set({ theme: link.theme });
    // an embed's slide spans `from` to `to` (a chapter's: from where it opens to its answer), at `step` within it
    const from = link.embed && typeof link.from === "number" ? link.from : null;
    if (link.lesson) {
      await stage.chapter(link.lesson, "none", { embed: link.embed ? { lesson: true } : null });
      const at = from !== null ? from : link.step;
      if (typeof at === "number") stage.go(at);
      if (link.embed) stage.set({ embed: { lesson: true, from: stage.state.k } });
      return;
    }
    if (link.run) {
      const embed = link.embed ? { view: link.view || "outputs" } : null;
      const extra = { embed, notice: link.notice, ...(link.mode ? { mode: link.mode } : {}) };
      if (link.mode === "lab") Object.assign(extra, { lab: { ...stage.state.lab, ...link.lab } });
      const step = typeof link.step === "number" ? link.step : from;
      if (!(await stage.open(link.run, step, extra, true)) || !embed) return;
      const start = from !== null ? from : stage.state.k,
        to = typeof link.to === "number" ? Math.max(start, link.to) : start;
      stage.set({ embed: { ...embed, from: start, to }, k: stage.state.k });
      return;
    }
    await fallback();
  }

  /** Back and Forward restore what the address says (no new history entry while restoring). @param {Stage} stage
   * @param {() => Promise<unknown> | void} fallback */
  function followHistory(stage, fallback) {
    window.addEventListener("popstate", async () => {
      stage.restoring = true;
      try {
        await follow(stage, fallback);
      } finally {
        stage.restoring = false;
      }
    });
  }

  return { write, follow, land, followHistory };
})();
window.Lade.address = LadeAddress;
