// @ts-check
// A race run in the visitor's browser, kept (`Lade.raceKeep`): a race lives only in the page that ran it, so the
// page offers two ways to keep it, and says what a reload drops.
// - As a trace file (`traceFile`): the same JSON `lade trace` writes, which "Open a saved run" and the command line
//   read (the schema's name and version come with the boot: lade_core/trace.py).
// - In this browser's storage (IndexedDB, `keep`): reopened by its address (`?run=browser-…`) in this browser only,
//   at most `MOST` races, the oldest kept going first; nothing is sent anywhere.
// - A finished race not kept is noted for the tab (sessionStorage, `unkept`); after a reload the page says that the
//   reload dropped it (`dropped`).
const LadeRaceKeep = (() => {
  "use strict";
  const DB = "lade-races",
    STORE = "races",
    NOTE = "lade-unkept-race";
  const MOST = 20; // races kept in one browser
  const HANDLE = /^browser-[0-9a-f]{8,32}$/;
  /** @type {Set<string>} the handles this page knows are kept */
  const known = new Set();

  /** A kept race, as the database holds it: its handle, its payload and when it was kept (ms since the epoch).
   * @typedef {{handle: string, payload: Payload, saved_at: number}} KeptRace */

  /** The browser's database of kept races, or null where the browser refuses it (a private window, storage off). */
  function open() {
    return new Promise((resolve) => {
      try {
        const req = indexedDB.open(DB, 1);
        req.onupgradeneeded = () => req.result.createObjectStore(STORE, { keyPath: "handle" });
        req.onsuccess = () => resolve(req.result);
        req.onerror = () => resolve(null);
      } catch {
        resolve(null);
      }
    });
  }

  /** One transaction's request, as a promise. @param {IDBDatabase} db @param {IDBTransactionMode} mode
   * @param {(store: IDBObjectStore) => IDBRequest} ask */
  const request = (db, mode, ask) =>
    new Promise((resolve, reject) => {
      const req = ask(db.transaction(STORE, mode).objectStore(STORE));
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });

  /** Keep a race's payload under its handle; {kept, dropped}: how many races this browser now keeps, and how many
   * older ones went to stay within `MOST`; null where the browser keeps nothing.
   * @param {string} handle @param {Payload} payload */
  async function keep(handle, payload) {
    const db = /** @type {IDBDatabase | null} */ (await open());
    if (!db) return null;
    try {
      await request(db, "readwrite", (s) => s.put({ handle, payload, saved_at: Date.now() }));
      const all = /** @type {KeptRace[]} */ (await request(db, "readonly", (s) => s.getAll()));
      all.sort((a, b) => a.saved_at - b.saved_at);
      const extra = all.slice(0, Math.max(0, all.length - MOST));
      for (const old of extra) {
        await request(db, "readwrite", (s) => s.delete(old.handle));
        known.delete(old.handle);
      }
      known.add(handle);
      settle(handle);
      return { kept: all.length - extra.length, dropped: extra.length };
    } finally {
      db.close();
    }
  }

  /** A kept race, as the stage's source answers: {payload} or {error}. @param {string} handle */
  async function load(handle) {
    const db = HANDLE.test(handle) ? /** @type {IDBDatabase | null} */ (await open()) : null;
    const got = db
      ? /** @type {KeptRace | undefined | null} */ (
          await request(db, "readonly", (s) => s.get(handle)).catch(() => null)
        )
      : null;
    if (db) db.close();
    if (got && got.payload) {
      known.add(handle);
      return { payload: got.payload };
    }
    return {
      error:
        "This browser keeps no race at that address: a race raced in a browser is kept only in that browser, and only " +
        "when “Keep in this browser” was pressed (its storage may have been cleared since).",
    };
  }

  /** Whether this page knows `handle` is kept (so its address opens it again). @param {string} handle */
  const kept = (handle) => known.has(handle);

  /** A race's trace file, as `lade trace` writes it. @param {Trace} trace @param {{schema: string, version: number}} format */
  const traceFile = (trace, format) =>
    new Blob([JSON.stringify({ schema: format.schema, version: format.version, run: trace })], {
      type: "application/json",
    });

  /** Note, for this tab, a finished race that is not kept. @param {string} handle @param {string} words */
  function unkept(handle, words) {
    try {
      sessionStorage.setItem(NOTE, JSON.stringify({ handle, words, at: new Date().toTimeString().slice(0, 5) }));
    } catch {
      // a tab that keeps nothing: no notice after a reload
    }
  }

  /** The race `handle` is kept (or downloaded): no notice after a reload. @param {string} handle */
  function settle(handle) {
    try {
      const note = JSON.parse(sessionStorage.getItem(NOTE) || "null");
      if (note && note.handle === handle) sessionStorage.removeItem(NOTE);
    } catch {
      // nothing noted
    }
  }

  /** What the last reload dropped, in a sentence, once; null if nothing. */
  function dropped() {
    try {
      const note = JSON.parse(sessionStorage.getItem(NOTE) || "null");
      sessionStorage.removeItem(NOTE);
      if (!note || typeof note.words !== "string" || typeof note.at !== "string") return null;
      return (
        `Reloading dropped the race run in this browser at ${note.at.slice(0, 5)} (${note.words.slice(0, 160)}): it was ` +
        "not kept. Keep a race in this browser or download its trace before leaving the page."
      );
    } catch {
      return null;
    }
  }

  return { MOST, HANDLE, keep, load, kept, traceFile, unkept, settle, dropped };
})();
window.Lade.raceKeep = LadeRaceKeep;
