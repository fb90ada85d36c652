// The page's words without a browser: loads the page's scripts over a small stand-in for the DOM (elements that
// keep their children and attributes, text nodes), then, for each job on stdin, builds a `Lade.Run` from its payload
// and prints the text an expression over it draws. Reads {"boot": Boot, "jobs": [{"payload": Payload, "expr": "..."}]}
// (`expr` sees `Lade`, `run`, `boot` and `text(node)`); prints [{text, prose: the text less commands (code, kbd)}
// | {error}]. Usage: node tests/js/words.cjs < IN.json
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");

class Node {
  constructor() {
    this.childNodes = [];
    this.parentNode = null;
  }
  appendChild(c) {
    if (c && c.fragment) for (const k of [...c.childNodes]) this.appendChild(k);
    else {
      this.childNodes.push(c);
      c.parentNode = this;
    }
    return c;
  }
  append(...cs) {
    for (const c of cs) this.appendChild(typeof c === "string" ? new Text(c) : c);
  }
  replaceChildren(...cs) {
    this.childNodes = [];
    this.append(...cs);
  }
  insertBefore(c) {
    return this.appendChild(c);
  }
  removeChild(c) {
    this.childNodes = this.childNodes.filter((k) => k !== c);
    return c;
  }
  remove() {
    if (this.parentNode) this.parentNode.removeChild(this);
  }
  get firstChild() {
    return this.childNodes[0] || null;
  }
  get lastChild() {
    return this.childNodes[this.childNodes.length - 1] || null;
  }
  get textContent() {
    return this.childNodes.map((c) => c.textContent).join("");
  }
  set textContent(v) {
    this.childNodes = [new Text(String(v))];
  }
  addEventListener() {}
  removeEventListener() {}
  cloneNode() {
    return this;
  }
}
class Text extends Node {
  constructor(data) {
    super();
    this.data = data;
  }
  get textContent() {
    return this.data;
  }
}
class Element extends Node {
  constructor(tag) {
    super();
    this.tagName = tag.toUpperCase();
    this.attributes = {};
    this.dataset = {};
    this.style = { setProperty() {}, removeProperty() {} };
    const classes = new Set();
    this.classList = {
      add: (...c) => c.forEach((x) => classes.add(x)),
      remove: (...c) => c.forEach((x) => classes.delete(x)),
      toggle: (c, on) => ((on ?? !classes.has(c)) ? classes.add(c) : classes.delete(c)),
      contains: (c) => classes.has(c),
    };
  }
  setAttribute(k, v) {
    this.attributes[k] = String(v);
  }
  getAttribute(k) {
    return this.attributes[k] ?? null;
  }
  removeAttribute(k) {
    delete this.attributes[k];
  }
  setAttributeNS(_ns, k, v) {
    this.setAttribute(k, v);
  }
  querySelector() {
    return null;
  }
  querySelectorAll() {
    return [];
  }
  closest() {
    return null;
  }
  getBoundingClientRect() {
    return { width: 0, height: 0, left: 0, right: 0, top: 0, bottom: 0 };
  }
  get children() {
    return this.childNodes.filter((c) => c instanceof Element);
  }
}
const frag = () => Object.assign(new Node(), { fragment: true });
globalThis.Node = Node;
globalThis.Element = Element;
globalThis.HTMLElement = Element;
globalThis.window = globalThis;
globalThis.requestAnimationFrame = () => 0;
globalThis.matchMedia = () => ({ matches: false, addEventListener() {} });
globalThis.document = {
  createElement: (t) => new Element(t),
  createElementNS: (_ns, t) => new Element(t),
  createTextNode: (s) => new Text(s),
  createDocumentFragment: frag,
  addEventListener() {},
  querySelector: () => null,
  querySelectorAll: () => [],
  documentElement: new Element("html"),
  body: new Element("body"),
};
globalThis.localStorage = { getItem: () => null, setItem() {} };
globalThis.location = new URL("http://localhost/");
globalThis.history = { replaceState() {}, pushState() {} };

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
