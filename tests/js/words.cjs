// The page's words without a browser: loads the page's scripts over a small stand-in for the DOM (elements that
// keep their children and attributes, text nodes), then, for each job on stdin, builds a `Lade.Run` from its payload
// and prints the text an expression over it draws. Reads {"boot": Boot, "jobs": [{"payload": Payload, "expr": "..."}]}
// (`expr` sees `Lade`, `run`, `boot` and `text(node)`); prints [{text, prose: the text less commands (code, kbd)}
// | {error}]. Usage: node tests/js/words.cjs < IN.json
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");

const { Text } = require("./dom.cjs");

const SCRIPTS = process.env.LADE_SCRIPTS.split(",");
for (const name of SCRIPTS)
  vm.runInThisContext(fs.readFileSync(path.join(__dirname, "../../app/static", name), "utf8"), { filename: name });

/** The text of what an expression draws: a node's text (a block's children apart by a space), a list's items',
 * a string itself. */
const BLOCK = new Set(["P", "LI", "DIV", "H2", "H3", "TR", "TD", "TH", "DT", "DD", "OPTION", "SUMMARY", "CAPTION", "TEXT"]);
const words = (n, code) => {
  if (n === null || n === undefined || n === false) return "";
  if (Array.isArray(n)) return n.map((c) => words(c, code)).join("");
  if (typeof n !== "object") return String(n);
  if (n instanceof Text) return n.data;
  if (!code && (n.tagName === "CODE" || n.tagName === "KBD")) return " ";
  const inner = n.childNodes.map((c) => words(c, code)).join("");
  return n.tagName && BLOCK.has(n.tagName) ? ` ${inner} ` : inner;
};
const text = (n) => words(n, true);
/** @param {string} s */
const squeeze = (s) => s.replace(/\s+/g, " ").trim();
const { boot, jobs } = JSON.parse(fs.readFileSync(0, "utf8"));
const Lade = globalThis.Lade;
const out = jobs.map((job) => {
  try {
    const run = job.payload ? new Lade.Run(job.payload, job.handle || "run") : null;
    const got = new Function("Lade", "run", "boot", "text", `return (${job.expr});`)(Lade, run, boot, text);
    return { text: squeeze(words(got, true)), prose: squeeze(words(got, false)) };
  } catch (e) {
    return { error: String(e && e.stack ? e.stack : e) };
  }
});
process.stdout.write(JSON.stringify(out));
