// @ts-check
// The engine's rules in the browser (`Lade.engine`): greedy decoding and lookahead decoding, step for step as the
// Python engine makes them (lade_core: window.py, pool.py, layout.py, verify.py, sizes.py' fixed sizes,
// lookahead.py, decoding.py), emitting steps in the trace schema so the renderer, the lesson and the export draw them
// unchanged. This is the one sanctioned second home of those rules: tests/test_engine_js.py holds it to Python on
// the same model outputs (identical step records). It runs greedy only, with fixed sizes, and no copied candidates:
// what the page races.
//
// The model is a `Forward`, an object the page supplies (onnxruntime-web, or in tests the Python engine's recorded
// outputs): `prefill(ids)` returns the argmax after the prompt; `step(input)` runs one forward over a step's tokens
// at their positions under its mask on top of the cache and returns the argmax at the rows the step reads
// (`logitRows`); `keep(position, rows)` keeps, of the rows the step appended at `position`, those `rows` in the cache.
// Each may return a promise.
const LadeEngine = (() => {
  "use strict";

  /**
   * Python's `random.Random(seed)` for what the window asks of it (`choice`): MT19937 seeded as CPython seeds an int
   * (init_by_array over its 32-bit words), and `_randbelow` by rejection over `getrandbits`.
   */
  class PyRandom {
    /** @param {number} seed a whole number, 0 <= seed < 2^53 */
    constructor(seed) {
      this.mt = new Uint32Array(624);
      this.i = 625;
      let n = Math.abs(seed);
      const key = [];
      do {
        key.push(n % 4294967296);
        n = Math.floor(n / 4294967296);
      } while (n > 0);
      this.initByArray(key);
    }

    /** @param {number} s */
    initGenrand(s) {
      const mt = this.mt;
      mt[0] = s >>> 0;
      for (let i = 1; i < 624; i++) {
        const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
        mt[i] = (Math.imul(1812433253, prev) + i) >>> 0;
      }
      this.i = 624;
    }

    /** @param {number[]} key */
    initByArray(key) {
      const mt = this.mt;
      this.initGenrand(19650218);
      let i = 1,
        j = 0;
      for (let k = Math.max(624, key.length); k > 0; k--) {
        const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
        mt[i] = ((mt[i] ^ Math.imul(prev, 1664525)) + key[j] + j) >>> 0;
        i++;
        j++;
        if (i >= 624) {
          mt[0] = mt[623];
          i = 1;
        }
        if (j >= key.length) j = 0;
      }
      for (let k = 623; k > 0; k--) {
        const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
        mt[i] = ((mt[i] ^ Math.imul(prev, 1566083941)) - i) >>> 0;
        i++;
        if (i >= 624) {
          mt[0] = mt[623];
          i = 1;
        }
      }
      mt[0] = 0x80000000;
    }

    /** The next 32 random bits. */
    uint32() {
      const mt = this.mt;
      if (this.i >= 624) {
        for (let k = 0; k < 624; k++) {
          const y = (mt[k] & 0x80000000) | (mt[(k + 1) % 624] & 0x7fffffff);
          mt[k] = mt[(k + 397) % 624] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
        }
        this.i = 0;
      }
      let y = mt[this.i++];
      y ^= y >>> 11;
      y ^= (y << 7) & 0x9d2c5680;
      y ^= (y << 15) & 0xefc60000;
      y ^= y >>> 18;
      return y >>> 0;
    }

    /** A whole number in [0, n), n < 2^32, as CPython draws it. @param {number} n */
    below(n) {
      const k = 32 - Math.clz32(n);
      let r = this.uint32() >>> (32 - k);
      while (r >= n) r = this.uint32() >>> (32 - k);
      return r;
    }

    /** @template T @param {T[]} seq @returns {T} */
    choice(seq) {
      return seq[this.below(seq.length)];
    }
  }

  /** The Jacobi window: up to N-1 levels of W guesses, oldest first (window.py). */
  class JacobiWindow {
    /** @param {number[]} prompt @param {number} width @param {number} ngram @param {number} seed */
    constructor(prompt, width, ngram, seed) {
      this.ngram = ngram;
      this.pick = new PyRandom(seed);
      this.source = prompt.slice();
      /** @type {number[][]} */
      this.levels = [this.fresh(width)];
    }

    /** @param {number} width */
    fresh(width) {
      return Array.from({ length: width }, () => this.pick.choice(this.source));
    }

    get width() {
      return this.levels[0].length;
    }

    get full() {
      return this.levels.length === this.ngram - 1;
    }

    /** @param {number} width */
    resize(width) {
      if (width === 0 || width === this.width) return;
      if (width < this.width) this.levels = this.levels.map((level) => level.slice(0, width));
      else this.levels = this.levels.map((level) => level.concat(this.fresh(width - level.length)));
    }

    /** The Jacobi update; the N-grams it completes (none in warm-up). @param {number[]} newLevel */
    update(newLevel) {
      if (!this.full) {
        this.levels.push(newLevel.slice());
        return [];
      }
      const ngrams = newLevel.map((t, j) => [...this.levels.map((level) => level[j]), t]);
      this.levels = [...this.levels.slice(1), newLevel.slice()];
      return ngrams;
    }
  }

  /** The n-gram pool: at most `perKey` continuations per first token, least recently added out first, each
   * remembering where it came from last ("window" or "text") (pool.py). */
  class NGramPool {
    /** @param {number} perKey */
    constructor(perKey) {
      this.perKey = perKey;
      /** @type {Map<number, Map<string, {cont: number[], source: string}>>} */
      this.byKey = new Map();
      this.size = 0;
    }

    /** @param {number[]} ngram @param {string} [source] @returns {number[] | null} the n-gram evicted */
    add(ngram, source = "window") {
      if (this.perKey === 0) return null;
      const key = ngram[0],
        cont = ngram.slice(1),
        id = cont.join(",");
      const bucket = this.byKey.get(key) || new Map();
      this.byKey.set(key, bucket);
      if (bucket.has(id)) {
        bucket.delete(id);
        bucket.set(id, { cont, source });
        return null;
      }
      bucket.set(id, { cont, source });
      this.size++;
      if (bucket.size > this.perKey) {
        const [oldest, old] = /** @type {[string, {cont: number[]}]} */ (bucket.entries().next().value);
        bucket.delete(oldest);
        this.size--;
        return [key, ...old.cont];
      }
      return null;
    }

    /** @param {number[][]} ngrams @param {string} [source] */
    addAll(ngrams, source = "window") {
      const evicted = [];
      for (const ngram of ngrams) {
        const gone = this.add(ngram, source);
        if (gone) evicted.push(gone);
      }
      return evicted;
    }

    /** Most recently added first, at most `limit`. @param {number} key @param {number} [limit] */
    lookup(key, limit = Number.POSITIVE_INFINITY) {
      const bucket = this.byKey.get(key);
      return bucket
        ? [...bucket.values()]
            .reverse()
            .slice(0, limit)
            .map((e) => e.cont)
        : [];
    }

    /** Where `cont` under `key` came from last, or null. @param {number} key @param {number[]} cont */
    source(key, cont) {
      const entry = this.byKey.get(key)?.get(cont.join(","));
      return entry ? entry.source : null;
    }

    /** Keys holding at least one continuation. */
    get keys() {
      return this.byKey.size;
    }
  }

  /** Every n-gram of a sequence, left to right. @param {number[]} tokens @param {number} n */
  function sequenceNgrams(tokens, n) {
    const out = [];
    for (let i = 0; i + n <= tokens.length; i++) out.push(tokens.slice(i, i + n));
    return out;
  }

  /** One step's input layout, positions, mask and the rows it reads back (layout.py, one device). */
  class StepLayout {
    /** @param {number} levels @param {number} window @param {number[][]} paths @param {number[]} parents */
    constructor(levels, window, paths, parents) {
      this.levels = levels;
      this.window = window;
      this.paths = paths;
      this.parents = parents;
    }

    /** Every candidate on its own nodes. @param {number} levels @param {number} window @param {number} count @param {number} len */
    static plain(levels, window, count, len) {
      const paths = [],
        parents = [];
      for (let c = 0; c < count; c++) {
        paths.push(Array.from({ length: len }, (_, k) => c * len + k));
        for (let k = 0; k < len; k++) parents.push(k === 0 ? -1 : c * len + k - 1);
      }
      return new StepLayout(levels, window, paths, parents);
    }

    /** Candidates as a token tree: a shared prefix fed once. @param {number} levels @param {number} window @param {number[][]} candidates */
    static tree(levels, window, candidates) {
      /** @type {Map<string, number>} */
      const nodes = new Map();
      const parents = [],
        paths = [];
      for (const cand of candidates) {
        const path = [];
        for (let k = 0; k < cand.length; k++) {
          const prefix = cand.slice(0, k + 1).join(",");
          if (!nodes.has(prefix)) {
            nodes.set(prefix, parents.length);
            parents.push(path.length ? path[path.length - 1] : -1);
          }
          path.push(/** @type {number} */ (nodes.get(prefix)));
        }
        paths.push(path);
      }
      return new StepLayout(levels, window, paths, parents);
    }

    get nodes() {
      return this.parents.length;
    }

    get verifyStart() {
      return 1 + this.levels * this.window;
    }

    get size() {
      return this.verifyStart + this.nodes;
    }

    /** @param {number[][]} candidates */
    nodeTokens(candidates) {
      const tokens = new Array(this.nodes).fill(0);
      candidates.forEach((cand, c) => {
        cand.forEach((t, k) => {
          tokens[this.paths[c][k]] = t;
        });
      });
      return tokens;
    }

    /** Input rows whose output a step reads: x, the newest level, every verification node. */
    logitRows() {
      const rows = [0];
      if (this.levels) for (let j = 0; j < this.window; j++) rows.push(1 + (this.levels - 1) * this.window + j);
      for (let r = this.verifyStart; r < this.size; r++) rows.push(r);
      return rows;
    }

    /** Kept rows of the newest level. */
    newLevelRows() {
      return Array.from({ length: this.levels ? this.window : 0 }, (_, j) => 1 + j);
    }

    /** Per candidate, the kept rows of the model's tokens for it: after x, then after each of its tokens. */
    predictionRows() {
      const first = 1 + (this.levels ? this.window : 0);
      return this.paths.map((path) => [0, ...path.map((node) => first + node)]);
    }

    /** Input rows kept in the cache when `accepted` tokens of `candidate` were accepted. @param {number} candidate @param {number} accepted */
    cacheRows(candidate, accepted) {
      const path = accepted ? this.paths[candidate].slice(0, accepted) : [];
      return [0, ...path.map((node) => this.verifyStart + node)];
    }

    /** Per input row: [part (0 x, 1 window, 2 verification), level, column, depth]. */
    parts() {
      const out = [[0, -1, -1, -1]];
      for (let l = 0; l < this.levels; l++) for (let j = 0; j < this.window; j++) out.push([1, l, j, -1]);
      const depth = new Array(this.nodes).fill(0);
      for (const path of this.paths)
        path.forEach((node, k) => {
          depth[node] = k;
        });
      for (let n = 0; n < this.nodes; n++) out.push([2, -1, -1, depth[n]]);
      return out;
    }

    /** Per input row: 0 x, 1 window level 0, 2 window level >= 1, 3 verification node. */
    kinds() {
      return this.parts().map(([part, level]) => (part === 0 ? 0 : part === 1 ? (level === 0 ? 1 : 2) : 3));
    }

    /** Per input row, a short name: x, L0.3 (level 0, column 3), c2.1 (candidate 2's token 1; a shared node is
     * named after the first candidate through it). */
    labels() {
      const owner = new Array(this.nodes).fill(-1);
      this.paths.forEach((path, c) => {
        for (const node of path) if (owner[node] < 0) owner[node] = c;
      });
      const v = this.verifyStart;
      return this.parts().map(([part, level, column, depth], r) =>
        part === 0 ? "x" : part === 1 ? `L${level}.${column}` : `c${owner[r - v] + 1}.${depth}`,
      );
    }

    /** Position offsets from p, per input row. */
    positions() {
      return this.parts().map(([part, level, column, depth]) =>
        part === 0 ? 0 : part === 1 ? 1 + level + column : 1 + depth,
      );
    }

    /** mask[q][k]: may query row q attend to key row k (besides the whole cache). */
    mask() {
      const parts = this.parts(),
        v = this.verifyStart;
      const rows = parts.map(([qp, ql, qc], q) =>
        parts.map(([kp, kl, kc], k) => {
          if (kp === 0) return true;
          if (qp === 1 && kp === 1) return (kl === 0 && kc <= qc) || (kl >= 1 && kl <= ql && kc === qc);
          if (qp === 2 && kp === 2) {
            for (let n = q - v; n >= 0; n = this.parents[n]) if (n === k - v) return true;
          }
          return false;
        }),
      );
      return rows;
    }
  }

  /** Greedy verification (verify.py): the longest accepted prefix, first among equals, plus the model's next token.
   * @param {number[][]} candidates @param {number[][]} predictions @param {number} first */
  function verifyGreedy(candidates, predictions, first) {
    if (!candidates.length) return { lengths: [], winner: -1, accepted: [first] };
    const lengths = candidates.map((cand, c) => {
      let m = 0;
      while (m < cand.length && cand[m] === predictions[c][m]) m++;
      return m;
    });
    let winner = 0;
    lengths.forEach((m, c) => {
      if (m > lengths[winner]) winner = c;
    });
    const m = lengths[winner];
    return { lengths, winner: m > 0 ? winner : -1, accepted: predictions[winner].slice(0, m + 1) };
  }

  /** A step record in the trace schema (trace.py `StepTrace`).
   * @param {Pick<Step, "index" | "kind" | "position" | "input_token" | "accepted" | "forward_s"> & Partial<Step>} fields
   * @returns {Step} */
  const record = (fields) => ({
    window: 0,
    ngram: 0,
    guess: 0,
    tree: false,
    levels_before: [],
    new_level: [],
    candidates: [],
    predictions: [],
    match_lengths: [],
    winner: -1,
    ngrams_added: [],
    ngrams_evicted: [],
    pool_size: 0,
    draws: [],
    draft_s: 0,
    draft_passes: 0,
    copied: 0,
    ranks: [],
    overhead_s: 0,
    kernels: "", // a CPU layout of the Python engine's (kernels.py); the browser's runtime has none
    ...fields,
  });

  const now = () => performance.now() / 1000;

  /** Autoregressive decoding: one token per forward (autoregressive.py, greedy). */
  class Greedy {
    /** @param {ModelForward} forward @param {number[]} prompt */
    constructor(forward, prompt) {
      this.forward = forward;
      this.committed = prompt.slice();
      this.index = 0;
    }

    async prefill() {
      const t0 = now();
      const token = await this.forward.prefill(this.committed);
      const p = this.committed.length - 1;
      return record({
        index: 0,
        kind: "prefill",
        position: p,
        input_token: this.committed[p],
        accepted: [token],
        forward_s: now() - t0,
      });
    }

    async step() {
      this.index++;
      const p = this.committed.length - 1,
        x = this.committed[p];
      const t0 = now();
      const [token] = await this.forward.step({ tokens: [x], positions: [p], mask: [[true]], rows: [0] });
      await this.forward.keep(p, [0]);
      return record({
        index: this.index,
        kind: "autoregressive",
        position: p,
        input_token: x,
        accepted: [token],
        forward_s: now() - t0,
      });
    }

    /** @param {number[]} tokens */
    commit(tokens) {
      this.committed.push(...tokens);
    }
  }

  /** Lookahead decoding, greedy with fixed sizes (lookahead.py). */
  class Lookahead extends Greedy {
    /** @param {ModelForward} forward @param {number[]} prompt @param {{window: number, ngram: number, guess: number, pool: string, tree: boolean, window_seed: number}} config @param {number} context */
    constructor(forward, prompt, config, context) {
      super(forward, prompt);
      this.config = config;
      this.context = context;
      this.window = new JacobiWindow(prompt, config.window, config.ngram, config.window_seed);
      this.pool = new NGramPool(config.guess);
    }

    async prefill() {
      const step = await super.prefill();
      if (this.config.pool !== "prompt") return step;
      const added = sequenceNgrams(this.committed, this.config.ngram);
      return {
        ...step,
        ngrams_added: added,
        ngrams_evicted: this.pool.addAll(added, "text"),
        pool_size: this.pool.size,
      };
    }

    /** W and G for a step at position p: the window narrows where it would pass the context (sizes.py). @param {number} p */
    room(p) {
      const { window, guess, ngram } = this.config;
      const width = Math.max(0, Math.min(window, this.context - p - Math.max(this.window.levels.length, 1)));
      return { width, guess: p + ngram - 1 < this.context ? guess : 0 };
    }

    async step() {
      const t0 = now();
      this.index++;
      const p = this.committed.length - 1,
        x = this.committed[p],
        N = this.config.ngram;
      const sizes = this.room(p);
      this.window.resize(sizes.width);
      const levels = sizes.width ? this.window.levels.map((level) => level.slice()) : [];
      const candidates = this.pool.lookup(x, sizes.guess);
      const layout = this.config.tree
        ? StepLayout.tree(levels.length, sizes.width, candidates)
        : StepLayout.plain(levels.length, sizes.width, candidates.length, N - 1);
      const tokens = [x, ...levels.flat(), ...layout.nodeTokens(candidates)];
      const t1 = now();
      const out = await this.forward.step({
        tokens,
        positions: layout.positions().map((o) => p + o),
        mask: layout.mask(),
        rows: layout.logitRows(),
      });
      const forward = now() - t1;
      const predictions = layout.predictionRows().map((rows) => rows.map((r) => out[r]));
      const verdict = verifyGreedy(candidates, predictions, out[0]);
      const newLevel = layout.newLevelRows().map((r) => out[r]);
      const added = sizes.width ? this.window.update(newLevel) : [];
      const recent = [...this.committed.slice(-(N - 1)), ...verdict.accepted];
      const text = this.config.pool === "paper" ? [] : sequenceNgrams(recent, N);
      const evicted = [...this.pool.addAll(added), ...this.pool.addAll(text, "text")];
      const matched = verdict.winner >= 0 ? verdict.lengths[verdict.winner] : 0;
      await this.forward.keep(p, layout.cacheRows(Math.max(verdict.winner, 0), matched));
      return record({
        index: this.index,
        kind: levels.length > 0 && levels.length < N - 1 ? "warmup" : "lookahead",
        position: p,
        input_token: x,
        accepted: verdict.accepted,
        window: sizes.width,
        ngram: N,
        guess: sizes.guess,
        tree: this.config.tree,
        levels_before: levels,
        new_level: newLevel,
        candidates,
        predictions,
        match_lengths: verdict.lengths,
        winner: verdict.winner,
        ngrams_added: [...added, ...text],
        ngrams_evicted: evicted,
        pool_size: this.pool.size,
        forward_s: forward,
        overhead_s: Math.max(now() - t0 - forward, 0),
      });
    }
  }

  /** Cut a step's tokens at the first EOS (kept) and at `room` (decoding.py `clip`).
   * @param {number[]} tokens @param {Set<number>} eos @param {number} room @returns {[number[], string | null]} */
  function clip(tokens, eos, room) {
    for (let i = 0; i < Math.min(tokens.length, room); i++)
      if (eos.has(tokens[i])) return [tokens.slice(0, i + 1), "eos"];
    if (tokens.length >= room) return [tokens.slice(0, room), "length"];
    return [tokens, null];
  }

  /** A step's time (trace.py `StepTrace.seconds`): its forward, the engine's work around it and its drafting.
   * @param {{forward_s: number, overhead_s: number, draft_s?: number}} step */
  const seconds = (step) => step.forward_s + step.overhead_s + (step.draft_s || 0);

  /**
   * A decoder's steps (decoding.py `steps`): each cut at EOS and the budget and committed before it is yielded;
   * `run` (a method run in the trace schema, its `stop_reason` "running" until the end) grows with them, its
   * `wall_s` the sum of its steps' seconds (record.py's clock). `stop()` is polled after each step is taken and
   * before the next begins, as Python polls it: a Stop seen between steps starts no further step.
   * @param {Greedy} decoder @param {Set<number>} eos @param {number} maxNew
   * @param {{tokens: number[], steps: Step[], wall_s: number, stop_reason: string}} run @param {() => boolean} [stop]
   */
  async function* steps(decoder, eos, maxNew, run, stop) {
    let step = await decoder.prefill();
    for (;;) {
      const [emitted, why] = clip(step.accepted, eos, maxNew - run.tokens.length);
      step = { ...step, accepted: emitted };
      decoder.commit(emitted);
      run.tokens.push(...emitted);
      run.steps.push(step);
      run.wall_s += seconds(step);
      if (why) run.stop_reason = why;
      yield step;
      if (!why && stop && stop()) run.stop_reason = "cancelled";
      if (run.stop_reason !== "running") return;
      step = await decoder.step();
    }
  }

  /** An empty method run, "running". @returns {MethodRun} */
  const newRun = () => ({
    tokens: /** @type {number[]} */ ([]),
    steps: /** @type {Step[]} */ ([]),
    wall_s: 0,
    stop_reason: "running",
  });

  /**
   * Run a decoder to the end; `onStep` gets each step as it is made. Returns the method run.
   * @param {Greedy} decoder @param {Set<number>} eos @param {number} maxNew
   * @param {(step: Step) => void} [onStep] @param {() => boolean} [stop]
   */
  async function generate(decoder, eos, maxNew, onStep, stop) {
    const run = newRun();
    for await (const step of steps(decoder, eos, maxNew, run, stop)) if (onStep) onStep(step);
    return run;
  }

  /**
   * Race decoders on one clock (record.py): the lane that has spent the least time makes the next step, so at every
   * moment the lanes stand where they would had they started together. `onStep(lane, step, runs)` gets each step
   * and the lanes' runs so far, and is awaited before the next step (a worker lets a Stop in there).
   * @param {Record<string, Greedy>} decoders @param {Set<number>} eos @param {number} maxNew
   * @param {(lane: string, step: Step, runs: Record<string, MethodRun>) => void | Promise<void>} [onStep]
   * @param {() => boolean} [stop]
   */
  async function race(decoders, eos, maxNew, onStep, stop) {
    /** @type {Record<string, ReturnType<typeof newRun>>} */
    const runs = {};
    const lanes = Object.entries(decoders).map(([name, decoder]) => {
      runs[name] = newRun();
      return { name, it: steps(decoder, eos, maxNew, runs[name], stop), done: false };
    });
    for (;;) {
      const open = lanes.filter((l) => !l.done);
      if (!open.length) return runs;
      const lane = open.reduce((a, b) => (runs[b.name].wall_s < runs[a.name].wall_s ? b : a));
      const next = await lane.it.next();
      if (next.done) lane.done = true;
      else if (onStep) await onStep(lane.name, next.value, runs);
    }
  }

  return {
    PyRandom,
    JacobiWindow,
    NGramPool,
    StepLayout,
    sequenceNgrams,
    verifyGreedy,
    Greedy,
    Lookahead,
    clip,
    seconds,
    steps,
    generate,
    race,
  };
})();
window.Lade = window.Lade || /** @type {LadeNamespace} */ ({});
window.Lade.engine = LadeEngine;
