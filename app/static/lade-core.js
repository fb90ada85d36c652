// @ts-check
// Lookahead Decoding Explorer, in the browser: the DOM basics every other file uses (`Lade.dom`).
//
// `h` builds nodes, and text only ever goes in through text nodes: a prompt, a token or a trace field is data, never
// markup. `cellText` shows a token in a grid cell (whitespace made visible, invisible and control characters named),
// `tok` a token as a span (bidirectional text isolated, CSS .tk); `label` any other text from a run shown as a label
// (a title, a model's name, a device, a date: isolated, invisible characters named), and `labelText` the same for
// where nothing can be isolated (the browser tab's title). `memo` keeps the last build of a costly view. No
// build step, no network; each file of the renderer adds one module to `window.Lade`.
const LadeDom = (() => {
  "use strict";
  window.Lade = window.Lade || /** @type {LadeNamespace} */ ({});

  /** One colour per meaning, everywhere: the stage's palette variables (lade.css declares each colour once, light
   * and dark), named by meaning for the charts' marks; see the legends in lade-views.js. */
  const COLORS = {
    baseline: "var(--muted)",
    parallel: "var(--win)",
    x: "var(--x)",
    window: "var(--win)",
    verify: "var(--ver)",
    right: "var(--ok)",
    wrong: "var(--bad)",
    bonus: "var(--bonus)",
    unchecked: "var(--edge)",
  };

  /**
   * h("div", {class: "a", onclick: f}, child, "text", [more]) -> element; "svg:rect" makes an SVG element.
   * @template {keyof HTMLElementTagNameMap} K
   * @overload
   * @param {K} tag
   * @param {Attrs | null} [attrs]
   * @param {...Kid} children
   * @returns {HTMLElementTagNameMap[K]}
   */
  /**
   * @template {keyof SVGElementTagNameMap} S
   * @overload
   * @param {`svg:${S}`} tag
   * @param {Attrs | null} [attrs]
   * @param {...Kid} children
   * @returns {SVGElementTagNameMap[S]}
   */
  /**
   * @param {string} tag
   * @param {Attrs | null} [attrs]
   * @param {...Kid} children
   * @returns {Element}
   */
  function h(tag, attrs, ...children) {
    const node = tag.startsWith("svg:")
      ? document.createElementNS("http://www.w3.org/2000/svg", tag.slice(4))
      : document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key.startsWith("on")) node.addEventListener(key.slice(2), /** @type {EventListener} */ (value));
      else if (key === "dataset") Object.assign(/** @type {HTMLElement} */ (node).dataset, value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    append(node, children);
    return node;
  }

  /** @param {Node} node @param {Kid[]} children */
  function append(node, children) {
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      if (Array.isArray(child)) append(node, child);
      else node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }

  /** Replace an element's content (one DOM write per region per render).
   * @template {Element} E @param {E} node @param {...Kid} children @returns {E} */
  function fill(node, ...children) {
    const fresh = document.createDocumentFragment();
    append(fresh, children);
    node.replaceChildren(fresh);
    return node;
  }

  // Characters that show nothing, or change how their neighbours show, are named: controls, format characters
  // (bidi controls, zero-width characters, Unicode tags), default-ignorable ones (variation selectors, Hangul
  // fillers, U+180E ...), line and paragraph separators and every space but the plain one.
  const INVISIBLE =
    /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/gu;
  /** @param {string} c */
  const named = (c) => `⟨U+${(c.codePointAt(0) || 0).toString(16).toUpperCase().padStart(4, "0")}⟩`;

  /** A token for a grid cell, cut to `limit` characters (0: no limit). @param {string} text @param {number} [limit] */
  function cellText(text, limit = 10) {
    let shown = text.replace(/ /g, "␣").replace(/\n/g, "↵").replace(/\t/g, "⇥").replace(INVISIBLE, named);
    if (!shown) shown = "∅";
    const chars = [...shown];
    return limit && chars.length > limit ? chars.slice(0, limit - 1).join("") + "…" : shown;
  }

  // In running prose newlines and tabs stay, and so do the joiner and the emoji selector that emoji sequences need.
  const KEPT_IN_PROSE = new Set(["\n", "\t", "\r", " ", "\u200d", "\ufe0f"]);
  /** A text for running prose: invisible characters named, whitespace kept. @param {string} text */
  function proseText(text) {
    return text.replace(INVISIBLE, (c) => (KEPT_IN_PROSE.has(c) ? c : named(c)));
  }

  /** Text from a run as a label says what it holds: every invisible or bidirectional control character named
   * (a title ending in U+202E "gnp.exe" read "exe.png"), the emoji joiner and selector kept. The one rule for a
   * run's title, model, device and date wherever they are shown; the browser tab's title gets this text (it
   * cannot isolate). @param {unknown} text */
  function labelText(text) {
    return String(text ?? "").replace(INVISIBLE, (c) => (c === "\u200d" || c === "\ufe0f" ? c : named(c)));
  }

  /** Text from a run as a label on the page: `labelText`, isolated for bidirectional text (<bdi>), so that
   * right-to-left text in it cannot reorder what follows. @param {unknown} text */
  function label(text) {
    return h("bdi", { class: "label" }, labelText(text));
  }

  /**
   * A token as a span: cell text by default, prose text with `raw`; always bidi-isolated.
   * @param {{text: (id: number) => string}} run @param {number} id @param {string} [cls] @param {number} [limit]
   * @param {boolean} [raw]
   */
  function tok(run, id, cls = "", limit = 10, raw = false) {
    const text = run.text(id),
      shown = raw ? proseText(text) : cellText(text, limit);
    // a token drawn with glyphs (␣ ↵ ⇥, a named character, cut short) is read out in words, not as symbol names
    const words = shown === text ? {} : { role: "img", "aria-label": spoken(text) };
    return h("span", { class: `tk ${cls}`.trim(), title: `token ${id}: ${JSON.stringify(text)}`, ...words }, shown);
  }

  /** A text as a screen reader should say it: whitespace and invisible characters in words ("space class",
   * "newline 4 spaces def"), a space between two words left a space, "empty" for nothing. @param {string} text */
  function spoken(text) {
    if (!text) return "empty";
    const named = text.replace(INVISIBLE, (c) =>
      KEPT_IN_PROSE.has(c) ? c : ` character U+${(c.codePointAt(0) || 0).toString(16).toUpperCase()} `,
    );
    const parts = named.match(/\r?\n|\t| +|\s|\S+/g) || [];
    const word = (/** @type {string | undefined} */ p) => p !== undefined && /^\S/.test(p);
    /** @type {string[]} */
    const out = [];
    parts.forEach((p, i) => {
      if (/^\r?\n$/.test(p)) out.push("newline");
      else if (p === "\t") out.push("tab");
      else if (/^ +$/.test(p)) {
        if (!(p.length === 1 && word(parts[i - 1]) && word(parts[i + 1])))
          out.push(p.length === 1 ? "space" : `${p.length} spaces`);
      } else if (/^\s$/.test(p)) out.push("whitespace");
      else out.push(p);
    });
    return out.join(" ");
  }

  /** @param {number} n @param {string} one @param {string} [many] */
  const plural = (n, one, many = one + "s") => `${n} ${n === 1 ? one : many}`;
  /** @param {number} x @param {number} [digits] */
  const fmt = (x, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : "–");
  /** A share as a percentage: whole percents, one decimal below 10% (3 of 600 is 0.5%, not 1%). @param {number} x */
  const pct = (x) => {
    const p = 100 * x;
    return p > 0 && p < 10 ? `${p.toFixed(1)}%` : `${Math.round(p)}%`;
  };

  /**
   * The bits of a mask (base64, row-major, most significant bit first) as (row, col) -> visible, decoded once.
   * @param {LayoutRow} layout
   * @returns {((row: number, col: number) => boolean) | null}
   */
  function maskBits(layout) {
    if (!layout.mask) return null;
    const bits = memo(layout, "bits", () =>
      Uint8Array.from(atob(/** @type {string} */ (layout.mask)), (c) => c.charCodeAt(0)),
    );
    const q = layout.size;
    return (row, col) => ((bits[(row * q + col) >> 3] >> (7 - ((row * q + col) & 7))) & 1) === 1;
  }

  /** @type {WeakMap<object, Map<string, {version: number, value: unknown}>>} */
  const MEMO = new WeakMap();
  /**
   * The value `build()` made for (owner, key) at `version`, built again only when the version moves (a live run
   * grows): the one memo of the renderer, for the costly views and decoded masks.
   * @template T @param {object} owner @param {string} key @param {() => T} build @param {number} [version] @returns {T}
   */
  function memo(owner, key, build, version = 0) {
    let table = MEMO.get(owner);
    if (!table) {
      table = new Map();
      MEMO.set(owner, table);
    }
    const hit = table.get(key);
    if (hit && hit.version === version) return /** @type {T} */ (hit.value);
    const value = build();
    table.set(key, { version, value });
    return value;
  }

  /** A box that scrolls sideways, reachable and scrollable from the keyboard; while it holds more than it shows,
   * a cue in words says so (a phone clipped views with no sign). @param {string} label @param {...Kid} children */
  function scroller(label, ...children) {
    const hint = h("span", { class: "scroll-hint", "aria-hidden": "true", hidden: true }, "⇆ scroll sideways for more");
    const box = h("div", { class: "scroll", tabindex: 0, role: "region", "aria-label": label }, hint, ...children);
    const check = () => {
      hint.hidden = box.scrollWidth <= box.clientWidth + 2;
    };
    requestAnimationFrame(check);
    if (typeof ResizeObserver !== "undefined") new ResizeObserver(check).observe(box);
    return box;
  }

  /** Text only screen readers read. @param {...Kid} children */
  const sr = (...children) => h("span", { class: "sr-only" }, ...children);

  /** A number computed from the run or the page's data, named so a test can read it against its own reading.
   * @param {string} name @param {string | number} value */
  const fact = (name, value) => h("span", { class: "fact", dataset: { fact: name } }, String(value));
  /** Text taken as is from a register of outside facts (`assets/lab/*.json`: the paper, a GPU, a server), named by
   * its register so a test can find it there. @param {string} register @param {...Kid} children */
  const cite = (register, ...children) => h("span", { class: "cite", dataset: { register } }, ...children);

  /** A paragraph. @param {...Kid} children */
  const P = (...children) => h("p", {}, ...children);
  /** Secondary material one click away (a chapter's, the notes'), so the view follows the main words on a phone
   * (its facts are on the page, read by the tests, whether it is open or not). @param {string} summary
   * @param {...Kid} children */
  const More = (summary, ...children) => h("details", { class: "more" }, h("summary", {}, summary), ...children);

  /** The kind of a lookahead lane that also verifies prompt lookup's copies: a hybrid, named as one everywhere. */
  const HYBRID = "lookahead+pld";

  return {
    COLORS,
    h,
    fill,
    cellText,
    proseText,
    labelText,
    label,
    tok,
    spoken,
    plural,
    fmt,
    pct,
    maskBits,
    memo,
    scroller,
    sr,
    fact,
    cite,
    P,
    More,
    HYBRID,
  };
})();
window.Lade.dom = LadeDom;
