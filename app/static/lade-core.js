// Lookahead Decoding Explorer, in the browser: the shared basics of the renderer.
//
// `Lade.h` builds DOM nodes (text only ever goes in through textContent: a prompt, a token or a trace field is data,
// never markup), `Lade.tok` shows a token (visible whitespace, bidirectional text isolated), `Lade.Run` wraps a run
// payload (app/render/payload.py: the trace file's JSON plus the engine-derived masks and pool rows) with the
// questions every view asks: which step is shown at clock step k, which tokens came out by then, how fast.
// Later files add the charts (lade-charts.js), the views (lade-views.js), the lesson (lade-lesson.js) and the stage
// that mounts them and plays the run (lade-stage.js). No build step, no network.
(() => {
  "use strict";
  const Lade = (window.Lade = window.Lade || {});

  // One colour per meaning, everywhere (the CSS uses the same names): see the legend in lade-views.js.
  Lade.COLORS = {
    baseline: "#64748b", parallel: "#2563eb", x: "#0f172a", window: "#2563eb", verify: "#d97706",
    right: "#15803d", wrong: "#b91c1c", bonus: "#7c3aed", unchecked: "#94a3b8",
  };

  // h("div", {class: "a", title: "b", onclick: f}, child, "text", [more]) -> element. Strings become text nodes.
  Lade.h = function h(tag, attrs, ...children) {
    const node = tag.includes(":") ? document.createElementNS("http://www.w3.org/2000/svg", tag.split(":")[1])
      : document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else if (key === "dataset") Object.assign(node.dataset, value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    append(node, children);
    return node;
  };

  function append(node, children) {
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      if (Array.isArray(child)) append(node, child);
      else node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }

  // Replace an element's content (one DOM write per view per step).
  Lade.fill = function fill(node, ...children) {
    const fresh = document.createDocumentFragment();
    append(fresh, children);
    node.replaceChildren(fresh);
    return node;
  };

  // A token for a grid cell: whitespace made visible, invisible and control characters named, cut to `limit`.
  const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;
  Lade.cellText = function cellText(text, limit = 10) {
    let shown = text.replace(/ /g, "␣").replace(/\n/g, "↵").replace(/\t/g, "⇥")
      .replace(INVISIBLE, (c) => `⟨U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}⟩`);
    if (!shown) shown = "∅";
    return [...shown].length > limit ? [...shown].slice(0, limit - 1).join("") + "…" : shown;
  };

  // A token as a span: cell text by default, raw text for running prose; always bidi-isolated (CSS .tk).
  Lade.tok = function tok(run, id, cls = "", limit = 10, raw = false) {
    const text = run.text(id);
    return Lade.h("span", { class: `tk ${cls}`.trim(), title: `token ${id}: ${JSON.stringify(text)}` },
      raw ? text : Lade.cellText(text, limit));
  };

  // where a run opens: its first step that accepted the most tokens
  Lade.interestingStep = function interestingStep(run) {
    const steps = run.parallel.steps, best = Math.max(0, ...steps.map((s) => s.accepted.length));
    return Math.max(0, steps.findIndex((s) => s.accepted.length === best));
  };

  Lade.plural = (n, one, many = one + "s") => `${n} ${n === 1 ? one : many}`;
  Lade.fmt = (x, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : "–");

  // The bits of a mask (base64, row-major, packed most significant bit first) as a function (q, k) -> bool.
  Lade.maskBits = function maskBits(layout) {
    if (!layout.mask) return null;
    if (!layout._bits) {
      const raw = atob(layout.mask);
      layout._bits = Uint8Array.from(raw, (c) => c.charCodeAt(0));
    }
    const bits = layout._bits, q = layout.size;
    return (row, col) => ((bits[(row * q + col) >> 3] >> (7 - ((row * q + col) & 7))) & 1) === 1;
  };

  // A recorded (or streaming) run and the questions the views ask of it.
  class Run {
    constructor(payload, name) {
      this.name = name || payload.trace.title || "run";
      this.t = payload.trace;
      this.d = payload.derived;
    }
    get parallel() { return this.t.parallel; }
    get baseline() { return this.t.baseline; }
    get config() { return this.t.config; }
    get method() { return this.t.method; }
    get greedy() { return this.t.sampling.temperature === 0; }
    get promptLength() { return this.t.prompt_ids.length; }
    text(id) {
      const t = this.t.token_text[String(id)];
      return t === undefined ? `<${id}>` : t;
    }
    lastStep() { return Math.max(this.parallel.steps.length, this.baseline.steps.length, 1) - 1; }
    clock(lane, k) { return Math.max(0, Math.min(k, this.t[lane].steps.length - 1)); }
    step(k) { // the parallel method's step shown at clock step k
      const steps = this.parallel.steps;
      return steps.length ? steps[this.clock("parallel", k)] : null;
    }
    derived(k) { return this.d.steps[this.clock("parallel", k)] || {}; }
    layout(k) {
      const i = this.derived(k).layout;
      return i === undefined || i < 0 ? null : this.d.layouts[i];
    }
    // [{step, token}] of every token `lane` emitted in steps 0..k
    tokensUpTo(lane, k) {
      const out = [], steps = this.t[lane].steps, upto = this.clock(lane, k);
      for (let i = 0; i <= upto && i < steps.length; i++) for (const token of steps[i].accepted) out.push({ step: i, token });
      return out;
    }
    // steps, tokens, seconds and rates of `lane` after clock step k (prefill included)
    numbers(lane, k) {
      const steps = this.t[lane].steps.slice(0, this.clock(lane, k) + 1);
      let tokens = 0, seconds = 0;
      for (const s of steps) { tokens += s.accepted.length; seconds += s.forward_s + s.overhead_s; }
      return { steps: steps.length, tokens, seconds, perStep: steps.length ? tokens / steps.length : 0,
        perSecond: seconds > 0 ? tokens / seconds : 0 };
    }
    finished(lane, k) { return k >= this.t[lane].steps.length - 1 && this.t[lane].stop_reason !== "running"; }
    laneName(lane) {
      if (lane === "baseline") return this.greedy ? "Greedy" : "Sampling";
      return this.method === "jacobi" ? "Jacobi" : "Lookahead";
    }
    // the output token at absolute position `pos`, if the run got that far (prompt positions excluded)
    finalAt(pos) {
      const i = pos - this.promptLength, tokens = this.parallel.tokens;
      return i >= 0 && i < tokens.length ? tokens[i] : undefined;
    }
    // draft tokens a step kept: the winner's matched prefix, cut where the run ended inside it
    fromCandidate(step) {
      const matched = step.winner >= 0 ? step.match_lengths[step.winner] : 0;
      return Math.min(matched, step.accepted.length);
    }
    // whether the step's last token is the model's own (the bonus), or the run ended inside the candidate
    hasBonus(step) { return step.accepted.length > this.fromCandidate(step); }
    // mean time of a decoding step, prefill excluded
    meanStep(lane) {
      const steps = this.t[lane].steps.slice(1);
      return steps.length ? steps.reduce((a, s) => a + s.forward_s + s.overhead_s, 0) / steps.length : 0;
    }
    // tokens a step fed to the model (the prompt for a prefill)
    tokensFedOf(step) {
      if (step.kind === "prefill") return this.promptLength;
      if (step.kind === "autoregressive") return 1;
      const d = this.d.steps[step.index], layout = d && d.layout >= 0 ? this.d.layouts[d.layout] : null;
      return layout ? layout.size : 1;
    }
    compression(lane = "parallel") {
      const m = this.t[lane];
      return m.steps.length ? m.tokens.length / m.steps.length : 0;
    }
  }
  Lade.Run = Run;
})();
