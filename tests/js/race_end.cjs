// Draws how a race on the server ended, with the page's own scripts under a small stand-in for the DOM (enough
// for `Lade.dom.h`: elements, text, attributes): reads {"payloads": [Payload]} on stdin, prints for each the race
// box's title and lanes (lade-page.js `race`), the two output panels (their status and badge), the methods
// table's rows (lade-views.js) and the honest note on speed (lade-notes.js), as text. Usage: node tests/js/race_end.cjs < INPUT.json
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");

const { findAll } = require("./dom.cjs");

for (const name of [
  "lade-constants.js",
  "lade-core.js",
  "lade-run.js",
  "lade-curves.js",
  "lade-notes.js",
  "lade-views.js",
  "lade-page.js",
  "lade-race-words.js",
])
  vm.runInThisContext(fs.readFileSync(path.join(__dirname, "../../app/static", name), "utf8"));

const { payloads } = JSON.parse(fs.readFileSync(0, "utf8"));
const Lade = globalThis.Lade;
const out = payloads.map((/** @type {any} */ payload) => {
  const run = new Lade.Run(payload, "live-x"),
    k = run.lastStep();
  const box = Lade.page.race(run, "running");
  const panel = (/** @type {string} */ id) => {
    const node = Lade.views.render[id]({ run, k });
    const [badge] = findAll(node, ".badge");
    const [status] = findAll(node, ".muted");
    return { status: status ? status.textContent : null, badge: badge ? badge.textContent : null };
  };
  const table = Lade.views.render["relatives-view"]({ run, k, compact: false });
  const rows = findAll(table, "tr").map((/** @type {any} */ tr) => tr.childNodes.map((c) => c.textContent));
  return {
    title: findAll(box, ".race-title")[0].textContent,
    lanes: findAll(box, ".lane-num").map((/** @type {any} */ n) => n.textContent),
    // the sentences one by one, where the page has them (a race stopped before its end)
    sentences:
      Lade.raceWords.stoppedRace && run.lanes().some((/** @type {any} */ l) => run.ended(l.id) === "stopped")
        ? Lade.raceWords.stoppedRace(run).map((/** @type {any} */ s) => s.text)
        : null,
    // what the race in the visitor's browser would say of it (its summary's sentences)
    browser: Lade.raceWords.summary(payload, { engine: {} }).map((/** @type {any} */ s) => s.text),
    // the honest note on speed under the run (no lab data: it names no curve)
    honest: Lade.notes.honestNote(run, { lab: null, paper: { one_device: "P1", several: "P2", source: "" } })
      .textContent,
    baseline: panel("ar-output"),
    parallel: panel("la-output"),
    table: rows,
  };
});
process.stdout.write(JSON.stringify(out));
