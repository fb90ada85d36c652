// Derives runs with app/static/lade-derive.js (over lade-engine.js's rules): reads a JSON list of RunTrace data on
// stdin, prints the list of their derived data. Usage: node tests/js/derive.cjs < TRACES.json
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");

globalThis.window = globalThis;
for (const name of ["lade-engine.js", "lade-derive.js"])
  vm.runInThisContext(fs.readFileSync(path.join(__dirname, "../../app/static", name), "utf8"));
const traces = JSON.parse(fs.readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(traces.map((t) => globalThis.Lade.derive.derive(t))));
