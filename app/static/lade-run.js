// @ts-check
// A run in the browser (`Lade.Run`): the payload (app/render/payload.py: the trace file's JSON plus what only the
// engine's code derives, masks and pool rows) and the answers to what every view asks of it, each computed once and
// kept inside the run: which step is shown at clock step k, a step's seconds, the tokens and seconds by then, the
// window's cells with their positions and rightness, a column's n-gram, where the run opens. A live run grows by
// `append` (run-owned arrays, one version number); views read, never write.
const LadeRun = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const PARALLEL = "parallel",
    BASELINE = "baseline",
    CUT = Lade.constants.cut; // stop reasons of a lane stopped before its end (payload.py `CUT`)

  class Run {
    /** @param {Payload} payload @param {string} handle */
    constructor(payload, handle) {
      this.handle = handle;
      this.t = payload.trace;
      this.d = payload.derived;
      this.version = 0;
      /** @type {Map<string, unknown>} answers computed for this version, each as `once` was asked for it */
      this.cache = new Map();
    }

    /** @template T @param {string} key @param {() => T} make @returns {T} */
    once(key, make) {
      if (!this.cache.has(key)) this.cache.set(key, make());
      return /** @type {T} */ (this.cache.get(key));
    }

    get config() {
      return this.t.config;
    }
    get method() {
      return this.t.method;
    }
    get greedy() {
      return this.t.sampling.temperature === 0;
    }
    get promptLength() {
      return this.t.prompt_ids.length;
    }
    get parallel() {
      return this.t.parallel;
    }
    get baseline() {
      return this.t.baseline;
    }

    /** A title for people: the recorded title, else the prompt's first words (a live run is titled from its prompt). */
    get title() {
      const t = this.t.title;
      if (t && t !== "live") return t;
      const words = this.t.prompt.trim().split(/\s+/).slice(0, 8).join(" ");
      return `“${words}${this.t.prompt.trim().split(/\s+/).length > 8 ? " …" : ""}”`;
    }

    /** The lanes of the race, the step views' method first: [{id, method, kind, run}]. `kind` is the method, or
     * `Lade.dom.HYBRID` for a lookahead lane that also verifies prompt lookup's copies (`config.lookup` > 0). */
    lanes() {
      const kind = (/** @type {string} */ method, /** @type {Trace["config"]} */ config) =>
        method === "lookahead" && config && config.lookup > 0 ? Lade.dom.HYBRID : method;
      return this.once("lanes", () => [
        { id: PARALLEL, method: this.method, kind: kind(this.method, this.t.config), run: this.t.parallel },
        {
          id: BASELINE,
          method: this.greedy ? "greedy" : "sampling",
          kind: this.greedy ? "greedy" : "sampling",
          run: this.t.baseline,
        },
        ...(this.t.lanes || []).map((lane, i) => ({
          id: `lane${i}`,
          method: lane.method,
          kind: kind(lane.method, lane.config),
          run: lane.run,
        })),
      ]);
    }

    /** A lane's settings: its lookahead `config` and its `draft` (the main lane's are the run's). @param {string} lane */
    settings(lane) {
      const raced = lane.startsWith("lane") ? (this.t.lanes || [])[+lane.slice(4)] : null;
      return raced ? { config: raced.config, draft: raced.draft } : { config: this.t.config, draft: this.t.draft };
    }

    /** Whether this step's candidate c is one prompt lookup copied (the last `step.copied` of them). @param {Step} step @param {number} c */
    isCopy(step, c) {
      return c >= step.candidates.length - (step.copied || 0);
    }

    /** @param {string} lane */
    lane(lane) {
      const found = this.lanes().find((l) => l.id === lane);
      if (!found) throw new Error(`no lane ${lane}`);
      return found.run;
    }

    /** A lane's method as named inside a sentence (the engine's one table, `derived.names`). @param {string} lane */
    laneWord(lane) {
      const kind = (this.lanes().find((l) => l.id === lane) || { kind: lane }).kind;
      return Object.hasOwn(this.d.names, kind) ? this.d.names[kind] : kind;
    }

    /** The run's settings in a line, read off the trace. */
    settingsText() {
      const c = this.config,
        s = this.t.sampling;
      const mode =
        s.temperature === 0
          ? "greedy"
          : `sampling at temperature ${s.temperature}, top-p ${s.top_p}, sampling seed ${s.sample_seed}`;
      if (this.method === "jacobi") return `Jacobi decoding, a block of W=${c.window} guesses, ${mode}`;
      if (this.method !== "lookahead") return `${this.laneName("parallel")} decoding, ${mode}`;
      const extra = [`${c.pool} pool`, c.tree ? "token tree" : null, c.adaptive ? "adaptive sizes" : null].filter(
        Boolean,
      );
      return `W=${c.window}, N=${c.ngram}, G=${c.guess} (${extra.join(", ")}), ${mode}`;
    }

    /** A lane's method as named at the start of a sentence or a label. @param {string} lane */
    laneName(lane) {
      const word = this.laneWord(lane);
      return word.charAt(0).toUpperCase() + word.slice(1);
    }

    /** @param {number} id */
    text(id) {
      const t = this.t.token_text[String(id)];
      return t === undefined ? `<${id}>` : t;
    }

    /** @param {number[]} ids */
    joined(ids) {
      return ids.map((id) => this.text(id)).join("");
    }

    lastStep() {
      return Math.max(1, ...this.lanes().map((l) => l.run.steps.length)) - 1;
    }

    /** The lane's step shown at clock step k. @param {string} lane @param {number} k */
    clock(lane, k) {
      return Math.max(0, Math.min(k, this.lane(lane).steps.length - 1));
    }

    /** The parallel method's step shown at clock step k. @param {number} k @returns {Step | null} */
    step(k) {
      const steps = this.t.parallel.steps;
      return steps.length ? steps[this.clock(PARALLEL, k)] : null;
    }

    /** @param {number} k @returns {DerivedStep} */
    derived(k) {
      return this.d.steps[this.clock(PARALLEL, k)] || { layout: -1, kept: 0 };
    }

    /** @param {number} k @returns {LayoutRow | null} */
    layout(k) {
      const i = this.derived(k).layout;
      return i === undefined || i < 0 ? null : this.d.layouts[i];
    }

    /** A step's time: its forward pass, the engine's work around it, and any drafting (trace.py
     * `StepTrace.seconds`, the home of the rule; tests/test_race_end.py holds this and the means below to Python's on
     * every gallery run). @param {Step} step */
    seconds(step) {
      return step.forward_s + step.overhead_s + (step.draft_s || 0);
    }

    /** Running totals of a lane: tokens[i] and seconds[i] after its step i. @param {string} lane */
    totals(lane) {
      return this.once(`totals:${lane}`, () => {
        const tokens = [],
          seconds = [];
        let t = 0,
          s = 0;
        for (const step of this.lane(lane).steps) {
          t += step.accepted.length;
          s += this.seconds(step);
          tokens.push(t);
          seconds.push(s);
        }
        return { tokens, seconds };
      });
    }

    /** Steps, tokens, seconds and rates of a lane after clock step k (prefill included). @param {string} lane @param {number} k */
    numbers(lane, k) {
      const { tokens, seconds } = this.totals(lane),
        n = this.lane(lane).steps.length;
      if (!n) return { steps: 0, tokens: 0, seconds: 0, perStep: 0, perSecond: 0 };
      const i = this.clock(lane, k);
      return {
        steps: i + 1,
        tokens: tokens[i],
        seconds: seconds[i],
        perStep: tokens[i] / (i + 1),
        perSecond: seconds[i] > 0 ? tokens[i] / seconds[i] : 0,
      };
    }

    /** @param {string} lane */
    running(lane) {
      return this.lane(lane).stop_reason === "running";
    }

    /** @param {string} lane @param {number} k */
    finished(lane, k) {
      return k >= this.lane(lane).steps.length - 1 && !this.running(lane);
    }

    /** Mean seconds of a decoding step's forward pass alone, prefill excluded (app/speed.py `mean_forward_s`).
     * @param {string} lane */
    meanForward(lane) {
      const steps = this.lane(lane).steps.slice(1);
      return steps.length ? steps.reduce((a, s) => a + s.forward_s, 0) / steps.length : 0;
    }

    /** Mean seconds of a decoding step, prefill excluded (app/speed.py `mean_step_s`). @param {string} lane */
    meanStep(lane) {
      const steps = this.lane(lane).steps.slice(1);
      return steps.length ? steps.reduce((a, s) => a + this.seconds(s), 0) / steps.length : 0;
    }

    /** A lane's whole time. @param {string} lane */
    time(lane) {
      const { seconds } = this.totals(lane);
      return seconds.length ? seconds[seconds.length - 1] : 0;
    }

    /** @param {string} [lane] */
    compression(lane = PARALLEL) {
      const m = this.lane(lane);
      return m.steps.length ? m.tokens.length / m.steps.length : 0;
    }

    /** How a lane ended, by its stop reason: "finished" (it wrote the end of its answer, or every token asked
     * for), "stopped" (Stop, or the server's time limit for one run, before its end: payload.py `CUT`) or
     * "running". The one home of this rule on the page. @param {string} lane @returns {"finished" | "stopped" | "running"} */
    ended(lane) {
      const reason = this.lane(lane).stop_reason;
      return reason === "running" ? "running" : CUT.includes(reason) ? "stopped" : "finished";
    }

    /**
     * A lane's text against another's (greedy's by default), compared over the tokens both wrote: `n` of them,
     * `part` the first where they differ (-1: none), and the verdict: "identical" (both finished, token for token),
     * "agrees" (the same over the `n` both wrote, where the shorter was cut short or is still running: a lane cut
     * short is never called different for tokens it did not write), "differs" (a token both wrote differs, or the
     * shorter finished where the other wrote on), "none" (no token both wrote).
     * @param {string} lane @param {string} [other]
     * @returns {{n: number, part: number, verdict: "identical" | "agrees" | "differs" | "none"}}
     */
    against(lane, other = BASELINE) {
      const a = this.lane(lane).tokens,
        b = this.lane(other).tokens,
        n = Math.min(a.length, b.length);
      for (let i = 0; i < n; i++) if (a[i] !== b[i]) return { n, part: i, verdict: "differs" };
      const shorter = a.length < b.length ? lane : b.length < a.length ? other : null;
      if (shorter !== null && this.ended(shorter) === "finished") return { n, part: n, verdict: "differs" };
      if (shorter === null && this.ended(lane) === "finished" && this.ended(other) === "finished")
        return { n, part: -1, verdict: "identical" };
      return { n, part: -1, verdict: n ? "agrees" : "none" };
    }

    /** Whether the run's texts are token-identical (greedy runs, both finished). */
    identical() {
      return this.t.parallel.tokens.join() === this.t.baseline.tokens.join();
    }

    /** The output token at absolute position `pos`, if the run got that far (prompt positions excluded). @param {number} pos */
    finalAt(pos) {
      const i = pos - this.promptLength,
        tokens = this.t.parallel.tokens;
      return i >= 0 && i < tokens.length ? tokens[i] : undefined;
    }

    /** The index of an absolute position in the output (#0 is the first new token). @param {number} pos */
    outputIndex(pos) {
      return pos - this.promptLength;
    }

    /** Draft tokens a step of the parallel method kept, as the engine counts them (its derived row). @param {Step} step */
    fromCandidate(step) {
      const d = this.d.steps[step.index];
      return d ? d.kept : 0;
    }

    /** Whether the step's last token is the model's own (the bonus). @param {Step} step */
    hasBonus(step) {
      return step.accepted.length > this.fromCandidate(step);
    }

    /** Tokens a step fed the model (the prompt for a prefill). @param {Step} step */
    tokensFed(step) {
      if (step.kind === "prefill") return this.promptLength;
      if (step.kind === "autoregressive") return 1;
      const d = this.d.steps[step.index],
        layout = d && d.layout >= 0 ? this.d.layouts[d.layout] : null;
      return layout ? layout.size : 1;
    }

    /** Mean tokens fed per decoding step of the parallel method. */
    meanFed() {
      return this.once("meanFed", () => {
        const steps = this.t.parallel.steps.slice(1);
        return steps.length ? steps.reduce((a, s) => a + this.tokensFed(s), 0) / steps.length : 1;
      });
    }

    // -- the window ---------------------------------------------------------------------------------------------
    /**
     * The cells of a step's window: every fed guess (level l, column j) and the new level, each with the absolute
     * position it guesses (p + 1 + l + j; the new level one level further), its token, whether the final text has
     * that token there, and the guess the step before made for the same position. The one place the position rule
     * lives. @param {Step} step @returns {WindowCells}
     */
    window(step) {
      return this.once(`window:${step.index}`, () => {
        const L = step.levels_before.length,
          p = step.position;
        const before = step.index > 1 ? this.guesses(this.t.parallel.steps[step.index - 1]) : new Map();
        /** @param {number} token @param {number} level @param {number} col @returns {Cell} */
        const cell = (token, level, col) => {
          const pos = p + 1 + level + col,
            earlier = before.get(pos);
          return {
            level,
            col,
            pos,
            token,
            right: this.finalAt(pos) === token,
            earlier: earlier !== undefined && earlier !== token ? earlier : undefined,
          };
        };
        const levels = step.levels_before.map((lv, l) => lv.map((t, j) => cell(t, l, j)));
        const fresh = step.new_level.map((t, j) => cell(t, L, j));
        return {
          levels,
          fresh,
          full: L === this.config.ngram - 1,
          rightFed: levels.flat().filter((c) => c.right).length,
          rightNew: fresh.filter((c) => c.right).length,
        };
      });
    }

    /** What a step guessed for each absolute position: its fed levels and its new level. @param {Step} step */
    guesses(step) {
      /** @type {Map<number, number>} */
      const out = new Map(),
        L = step.levels_before.length,
        p = step.position;
      step.levels_before.forEach((level, l) => {
        level.forEach((t, j) => {
          out.set(p + 1 + l + j, t);
        });
      });
      step.new_level.forEach((t, j) => {
        out.set(p + 1 + L + j, t);
      });
      return out;
    }

    /** Column j of a full window read top to bottom, then the new level: the n-gram it gives the pool.
     * @param {Step} step @param {number} j */
    column(step, j) {
      return [...step.levels_before.map((level) => level[j]), step.new_level[j]];
    }

    /** Jacobi steps: the fed guesses that were right, kept, and right but not kept (stranded), over the run. */
    jacobiTally() {
      return this.once("jacobiTally", () => {
        let fed = 0,
          right = 0,
          kept = 0;
        for (const s of this.t.parallel.steps.slice(1)) {
          const w = this.window(s);
          fed += w.levels.flat().length;
          right += w.rightFed;
          kept += this.fromCandidate(s);
        }
        return { fed, right, kept, stranded: right - kept };
      });
    }

    /** Over the run: the new-level guesses made, and those right at their position. */
    guessTally() {
      return this.once("guessTally", () => {
        let made = 0,
          right = 0;
        for (const s of this.t.parallel.steps.slice(1)) {
          const w = this.window(s);
          made += w.fresh.length;
          right += w.rightNew;
        }
        return { made, right };
      });
    }

    /** Where a run opens: its first step that accepted the most tokens (the one home of this rule). */
    interestingStep() {
      const steps = this.t.parallel.steps,
        best = Math.max(0, ...steps.map((s) => s.accepted.length));
      return Math.max(
        0,
        steps.findIndex((s) => s.accepted.length === best),
      );
    }

    /** The first step index >= from that passes `test`, or -1. @param {(s: Step) => boolean} test @param {number} [from] */
    find(test, from = 1) {
      const steps = this.t.parallel.steps;
      for (let i = from; i < steps.length; i++) if (test(steps[i])) return i;
      return -1;
    }

    // -- a live run -----------------------------------------------------------------------------------------------
    /** Append a live run's new steps (from the server's delta) and bump the version. @param {LiveDelta} delta */
    append(delta) {
      for (const lane of this.lanes()) {
        const fresh = delta.lanes[lane.id] || [];
        for (const s of fresh) {
          lane.run.steps.push(s);
          lane.run.tokens.push(...s.accepted);
        }
      }
      this.d.steps.push(...(delta.derived || []));
      this.d.layouts.push(...(delta.layouts || []));
      Object.assign(this.t.token_text, delta.token_text || {});
      this.version += 1;
      this.cache.clear();
    }

    /** What the page has, for the next pull: steps per lane and layouts. */
    have() {
      /** @type {Record<string, number>} */
      const out = { layouts: this.d.layouts.length };
      for (const lane of this.lanes()) out[lane.id] = lane.run.steps.length;
      return out;
    }
  }

  return Run;
})();
window.Lade.Run = LadeRun;
