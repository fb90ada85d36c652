// Derives runs with app/static/lade-derive.js (over lade-engine.js's rules): reads {"traces": [RunTrace data],
// "parts": [the noise spreads to judge them by]} on stdin, prints the list of their derived data, each with its
// `speed` by the noise rule. Usage: node tests/js/derive.cjs < INPUT.json
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");

globalThis.window = globalThis;
for (const name of ["lade-engine.js", "lade-derive.js"])
  vm.runInThisContext(fs.readFileSync(path.join(__dirname, "../../app/static", name), "utf8"));
const { traces, parts } = JSON.parse(fs.readFileSync(0, "utf8"));
const D = globalThis.Lade.derive;
const out = traces.map((t) => ({ ...(t.derive ? D.derive(t) : {}), speed: D.speed(t, parts) }));
process.stdout.write(JSON.stringify(out));
