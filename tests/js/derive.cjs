// Derives runs with app/static/lade-derive.js (over lade-engine.js's rules): reads {"traces": [RunTrace data]} on
// stdin, prints the list of their derived data (with the lanes' metrics), each with its `speed` by the noise rule (judged by the run's own
// device and drift). Usage: node tests/js/derive.cjs < INPUT.json
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");

globalThis.window = globalThis;
for (const name of ["lade-constants.js", "lade-engine.js", "lade-derive.js"])
  vm.runInThisContext(fs.readFileSync(path.join(__dirname, "../../app/static", name), "utf8"));
const { traces } = JSON.parse(fs.readFileSync(0, "utf8"));
const D = globalThis.Lade.derive;
const out = traces.map((t) => ({ ...(t.derive ? { ...D.derive(t), metrics: D.metrics(t) } : {}), speed: D.speed(t) }));
process.stdout.write(JSON.stringify(out));
