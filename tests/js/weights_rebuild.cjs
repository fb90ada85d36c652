// Rebuilds the graph's weights from the GGUF with app/static/lade-weights.js, as a visitor's browser does, checking
// every tensor against the manifest's SHA-256 of the Python converter's (it throws, naming the tensor, on the first
// that differs). Prints {tensors, bytes, seconds}. Usage: node tests/js/weights_rebuild.cjs GGUF MANIFEST.json
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");

globalThis.window = globalThis;
vm.runInThisContext(fs.readFileSync(path.join(__dirname, "../../app/static/lade-weights.js"), "utf8"));

async function main() {
  const file = fs.readFileSync(process.argv[2]);
  const gguf = file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength);
  const manifest = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
  const start = performance.now();
  let count = 0;
  const out = await globalThis.Lade.weights.rebuild(gguf, manifest, (done) => (count = done));
  process.stdout.write(JSON.stringify({ tensors: count, bytes: out.length, seconds: (performance.now() - start) / 1000 }));
}
main().catch((e) => {
  process.stderr.write(`${e.stack || e}\n`);
  process.exit(1);
});
