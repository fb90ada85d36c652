// A small stand-in for the DOM, enough for the page's scripts to build what they draw without a browser: elements
// that keep their children and attributes, text nodes, fragments, and the few globals the scripts read. Requiring it
// installs it on `globalThis`. Used by the runners that print what the page's scripts draw (words.cjs, race_end.cjs).
"use strict";

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
    return []; // nothing is found, so no script goes on to change what it drew (`findAll` below finds)
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
globalThis.innerWidth = 1280;

/** Descendants of `node` by tag name, or by class (".badge"): what a runner's checks ask of what was drawn.
 * @param {Node} node @param {string} selector */
function findAll(node, selector) {
  const out = [];
  const match = (el) =>
    selector.startsWith(".")
      ? (el.attributes.class || "").split(" ").includes(selector.slice(1))
      : el.tagName === selector.toUpperCase();
  const walk = (n) => {
    for (const c of n.childNodes)
      if (c instanceof Element) {
        if (match(c)) out.push(c);
        walk(c);
      }
  };
  walk(node);
  return out;
}
module.exports = { findAll, Node, Text, Element };
