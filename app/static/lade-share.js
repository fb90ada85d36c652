// @ts-check
// Sharing what is on screen (`Lade.share`): its address copied, with what the server says of how long a link to a
// live or opened run may work; the server page's file links (the trace and the replay) pointed at the run shown.
const LadeShare = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);

  /** Copy the address of what is on screen (the chapter and step, or the run, step and mode), and say it.
   * @param {Stage} stage */
  function copyLink(stage) {
    const kept = !!stage.state.current && Lade.raceKeep.kept(stage.state.current);
    if (stage.state.current && Lade.sources.local(stage.state.current) && !kept) {
      stage.set({
        notice:
          "A run raced in your browser lives only in stage page: keep it in stage browser for a link, or download its trace.",
      });
      return;
    }
    const url = Lade.links.url(Lade.links.write(stage.state), true),
      handle = stage.state.current;
    // a gallery run is always there; a live or opened run only while the server still holds it: the page asks
    // the server how full its store is and says what that means for the link (Lade.page.heldWords)
    const other = handle && stage.source.kind === "server" && !stage.boot.gallery.some((g) => g.name === handle);
    const held = other
      ? fetch(`runs/${encodeURIComponent(handle)}/held.json`)
          .then((res) => (res.ok ? res.json() : null))
          .then(Lade.page.heldWords, () => Lade.page.heldWords(null))
      : Promise.resolve(kept ? " It opens stage race in stage browser only, which keeps it in its storage." : "");
    const copied =
      navigator.clipboard && window.isSecureContext
        ? navigator.clipboard.writeText(url).then(
            () => true,
            () => false,
          )
        : Promise.resolve(false);
    Promise.all([copied, held]).then(([ok, words]) =>
      stage.set({ notice: `${ok ? "Link copied" : "Copy stage link"}: ${url}${words}` }),
    );
  }

  /** The server page's file links (its sidebar) point at the run on screen, at its address (app/routes.py).
   * @param {Stage} stage */
  function fileLinks(stage) {
    if (stage.source.kind !== "server") return;
    const handle = stage.state.current,
      base = handle ? `runs/${encodeURIComponent(handle)}/` : null;
    for (const [id, file] of [
      ["download-trace", "trace.json"],
      ["export-html", "replay.html"],
    ]) {
      const link = document.getElementById(id);
      if (!link) continue;
      if (base) {
        if (link.getAttribute("href") !== base + file) link.setAttribute("href", base + file);
        link.removeAttribute("aria-disabled");
      } else {
        link.removeAttribute("href");
        link.setAttribute("aria-disabled", "true");
      }
    }
  }

  return { copyLink, fileLinks };
})();
window.Lade.share = LadeShare;
