// Runs app/static/lade-engine.js in Node on cases written by tests/test_engine_js.py: each case's forward is an
// oracle that checks the step's input (tokens, positions, mask, rows read, rows kept) against what the Python engine
// fed at that step and answers with the Python model's argmax there. Prints the JS engine's runs as JSON.
// Usage: node tests/js/engine_parity.cjs CASES.json
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");

globalThis.window = globalThis;
vm.runInThisContext(fs.readFileSync(path.join(__dirname, "../../app/static/lade-engine.js"), "utf8"));
const { Greedy, Lookahead, generate } = globalThis.Lade.engine;

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** The Python engine's forwards, in order; every input compared before its output is given. */
function oracle(expected, where) {
  let i = 0;
  const check = (what, got, want) => {
    if (!same(got, want)) throw new Error(`${where}, forward ${i}: ${what} ${JSON.stringify(got)} != ${JSON.stringify(want)}`);
  };
  return {
    prefill(ids) {
      const f = expected[i];
      check("prompt length", ids.length, f.prompt_length);
      i++;
      return f.out[0];
    },
    step(input) {
      const f = expected[i];
      check("tokens", input.tokens, f.tokens);
      check("positions", input.positions, f.positions);
      check("mask", input.mask.map((row) => row.map((v) => (v ? "1" : "0")).join("")), f.mask);
      check("rows", input.rows, f.rows);
      this.pending = f;
      return f.out;
    },
    keep(position, rows) {
      const f = this.pending;
      check("kept position", position, f.positions[0]);
      check("kept rows", rows, f.keep);
      i++;
    },
  };
}

async function main() {
  const cases = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
  const out = [];
  for (const c of cases) {
    const forward = oracle(c.forwards, c.name);
    const decoder = c.config
      ? new Lookahead(forward, c.prompt_ids, c.config, c.context)
      : new Greedy(forward, c.prompt_ids);
    out.push(await generate(decoder, new Set(c.eos_ids), c.max_new_tokens));
  }
  process.stdout.write(JSON.stringify(out));
}
main().catch((e) => {
  process.stderr.write(`${e.stack || e}\n`);
  process.exit(1);
});
