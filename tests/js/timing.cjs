// A run's times as the page reads them (lade-run.js: a step's seconds, the running totals, the mean step and forward
// times, a lane's whole time) and as the browser's engine clocks them (lade-engine.js `seconds`): reads
// {"traces": [RunTrace data]} on stdin, prints per trace and lane id what each gives. tests/test_race_end.py holds
// both to Python's (trace.py `StepTrace.seconds`, app/speed.py `mean_step_s`, `mean_forward_s`).
// Usage: node tests/js/timing.cjs < INPUT.json
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");

globalThis.window = globalThis;
for (const name of ["lade-constants.js", "lade-core.js", "lade-run.js", "lade-engine.js"])
  vm.runInThisContext(fs.readFileSync(path.join(__dirname, "../../app/static", name), "utf8"));
const Lade = globalThis.Lade;
const { traces } = JSON.parse(fs.readFileSync(0, "utf8"));
const out = traces.map((/** @type {any} */ trace) => {
  const run = new Lade.Run({ trace, derived: { steps: [], layouts: [], names: {} } }, "timing");
  return Object.fromEntries(
    run.lanes().map((/** @type {any} */ l) => [
      l.id,
      {
        seconds: l.run.steps.map((/** @type {any} */ s) => run.seconds(s)),
        engine: l.run.steps.map(Lade.engine.seconds),
        totals: run.totals(l.id).seconds,
        mean_step_s: run.meanStep(l.id),
        mean_forward_s: run.meanForward(l.id),
        time: run.time(l.id),
      },
    ]),
  );
});
process.stdout.write(JSON.stringify(out));
