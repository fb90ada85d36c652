// @ts-check
// Where the page's runs come from (`Lade.sources`): every run at its one address, `runs/<handle>.json` beside the page,
// on the server (app/routes.py) and on a static site alike; a trace file posted to the server's `runs`; the boot
// document in the page's head. (A race run in stage browser is kept by lade-race-keep.js; the export carries its one
// run inline.)
const LadeSources = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);

  /**
   * A run by its one address, `runs/<handle>.json` beside the page, on the server (app/routes.py) and on a static
   * site alike: a payload, or (a live run on the server) what the page lacks of it since the steps it has.
   * @param {string} handle @param {Record<string, number> | null} since @returns {Promise<Loaded>}
   */
  async function fetchRun(handle, since) {
    const query = since ? `?since=${encodeURIComponent(JSON.stringify(since))}` : "";
    let res;
    try {
      res = await fetch(`runs/${encodeURIComponent(handle)}.json${query}`);
    } catch {
      return { error: `Could not reach the server for the run ${Lade.links.shown(handle)}.` };
    }
    const body = await res.json().catch(() => null);
    if (!res.ok || !body) {
      return { error: (body && body.error) || `Could not load the run ${Lade.links.shown(handle)} (${res.status}).` };
    }
    return body.trace && body.derived ? { payload: body } : body;
  }

  /**
   * A whole run's lab figures (the speed lab's predictions) at `runs/<handle>/lab.json`: the server computes them
   * when asked, once per run, in turn with others' (told to wait its turn, this waits and asks again, twice at
   * most); a static site holds them as files. The figures, or a sentence saying why there are none.
   * @param {string} handle @param {number} [tries] @returns {Promise<{ lab?: LabRunData, error?: string }>}
   */
  async function fetchLab(handle, tries = 3) {
    let res;
    try {
      res = await fetch(`runs/${encodeURIComponent(handle)}/lab.json`);
    } catch {
      return { error: "Could not reach the server for this run's lab figures." };
    }
    const wait = Number(res.headers.get("Retry-After"));
    if ((res.status === 429 || res.status === 503) && tries > 1 && wait > 0 && wait <= 30) {
      await new Promise((done) => window.setTimeout(done, wait * 1000));
      return fetchLab(handle, tries - 1);
    }
    const body = await res.json().catch(() => null);
    if (!res.ok || !body)
      return { error: (body && body.error) || `Could not load this run's lab figures (${res.status}).` };
    return { lab: body };
  }

  /**
   * Post a trace file to the server's `runs` (app/routes.py), its JSON as the body: the handle it is kept under, or
   * the server's sentence saying why it cannot be opened.
   * @param {Blob} file @returns {Promise<{ handle?: string, error?: string }>}
   */
  async function postRun(file) {
    let res;
    try {
      res = await fetch("runs", { method: "POST", body: file, headers: { "Content-Type": "application/json" } });
    } catch {
      return { error: "Could not reach the server to open that file." };
    }
    const body = await res.json().catch(() => null);
    if (res.ok && body && typeof body.handle === "string") return { handle: body.handle };
    return {
      error: (body && typeof body.error === "string" && body.error) || `Could not open that file (${res.status}).`,
    };
  }

  /** Whether a run lives only in stage page (raced in the browser, lade-browser-race.js). @param {string} handle */
  const local = (handle) => handle.startsWith("browser-");

  /** The page's source of runs on the server: every run at its one address. @returns {Source} */
  const server = () => ({ kind: "server", load: fetchRun });

  /** A static site's source: the gallery's runs at the same addresses, as files. @param {Boot} boot @returns {Source} */
  const site = (boot) => ({
    kind: "site",
    load: async (handle) =>
      boot.gallery.some((g) => g.name === handle)
        ? fetchRun(handle, null)
        : { error: `No gallery run is called ${Lade.links.shown(handle)}.` },
  });

  /** The boot document in the page's head. @returns {Boot} */
  const readBoot = () => {
    if (Lade.boot) return Lade.boot;
    const el = document.getElementById("lade-boot");
    return /** @type {Boot} */ (JSON.parse((el && el.textContent) || "{}"));
  };

  return { fetchRun, fetchLab, postRun, local, server, site, readBoot };
})();
window.Lade.sources = LadeSources;
