// Runs app/static/lade-auto.js (over lade-engine.js's PyRandom) in Node on inputs written by tests/test_auto_js.py:
// each case's ranking of swept settings under a cost curve (Auto's rule), each seed's shuffled order of widths, each
// sample list's median and quartiles. Prints them as JSON. Usage: node tests/js/auto.cjs < INPUT.json
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");

globalThis.window = globalThis;
for (const name of ["lade-engine.js", "lade-auto.js"])
  vm.runInThisContext(fs.readFileSync(path.join(__dirname, "../../app/static", name), "utf8"));
const A = globalThis.Lade.auto;
const { cases, shuffles, samples } = JSON.parse(fs.readFileSync(0, "utf8"));
const out = {
  ranked: cases.map((c) => A.rankConfigs(c.points, A.stepCost(c.curve), c.pool)),
  best: cases.map((c) => A.best(c.points, c.curve, c.pool)),
  orders: shuffles.map((s) => A.shuffle([...Array(s.n).keys()], new globalThis.Lade.engine.PyRandom(s.seed))),
  summaries: samples.map((xs) => A.summarise(xs)),
};
process.stdout.write(JSON.stringify(out));
