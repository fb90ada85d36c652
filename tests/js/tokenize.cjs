// Tokenises with app/static/lade-tokenizer.js: reads {data, texts, ids} as JSON on stdin, prints {encoded: ids per
// text (the chat turn), pieces: text per id}. Usage: node tests/js/tokenize.cjs < INPUT.json
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");

globalThis.window = globalThis;
vm.runInThisContext(fs.readFileSync(path.join(__dirname, "../../app/static/lade-tokenizer.js"), "utf8"));
const input = JSON.parse(fs.readFileSync(0, "utf8"));
const tokenizer = new globalThis.Lade.tokenizer.Tokenizer(input.data);
process.stdout.write(
  JSON.stringify({
    encoded: input.texts.map((t) => tokenizer.encode(t)),
    pieces: input.ids.map((i) => tokenizer.piece(i)),
  }),
);
