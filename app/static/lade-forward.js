// @ts-check
// The model's forward in the browser (`Lade.forward`): the project's ONNX graph (lade_core/onnx_graph.py) in
// onnxruntime-web, with the K/V cache kept here as `LM` keeps it in Python (model.py). It is the `Forward` the engine
// in the browser asks for (lade-engine.js): `prefill(ids)`, `step({tokens, positions, mask, rows})` and
// `keep(position, rows)`. The runtime (`ort`, from the onnxruntime-web files shipped with the page) and the weights
// (rebuilt from the GGUF, lade-weights.js) are handed in; nothing is fetched here.
const LadeForward = (() => {
  "use strict";

  const NEG = -3.4028234663852886e38; // float32's lowest: what `LM` adds to a masked score

  class OrtForward {
    /**
     * @param {any} ort the onnxruntime-web module @param {any} session an InferenceSession of the graph
     * @param {{layers: number, kv_heads: number, head_dim: number}} shape
     */
    constructor(ort, session, shape) {
      this.ort = ort;
      this.session = session;
      this.shape = shape;
      this.length = 0; // positions in the cache
      /** @type {Float32Array[]} per layer, keys then values: [kv_heads, length, head_dim] */
      this.past = Array.from({ length: 2 * shape.layers }, () => new Float32Array(0));
      /** @type {Float32Array[] | null} the last forward's K/V, cache and step rows together */
      this.present = null;
      this.fed = 0; // the last forward's tokens
    }

    /**
     * A session of the graph with its weights: `graph` the .onnx bytes, `weights` the external data file's bytes.
     * @param {any} ort @param {Uint8Array} graph @param {Uint8Array} weights @param {any} shape @param {string} file
     */
    static async create(ort, graph, weights, shape, file = "weights.bin") {
      const session = await ort.InferenceSession.create(graph, {
        executionProviders: ["wasm"],
        externalData: [{ path: file, data: weights }],
        graphOptimizationLevel: "all",
      });
      return new OrtForward(ort, session, shape);
    }

    /** @param {number[]} tokens @param {number[]} positions @param {boolean[][]} mask @param {number[]} rows */
    async run(tokens, positions, mask, rows) {
      const { ort } = this,
        { layers, kv_heads, head_dim } = this.shape,
        q = tokens.length,
        total = this.length + q;
      const additive = new Float32Array(q * total);
      for (let i = 0; i < q; i++)
        for (let j = 0; j < q; j++) if (!mask[i][j]) additive[i * total + this.length + j] = NEG;
      /** @type {Record<string, any>} */
      const feeds = {
        input_ids: new ort.Tensor("int64", BigInt64Array.from(tokens, BigInt), [1, q]),
        position_ids: new ort.Tensor("int64", BigInt64Array.from(positions, BigInt), [1, q]),
        attention_mask: new ort.Tensor("float32", additive, [1, 1, q, total]),
        logit_rows: new ort.Tensor("int64", BigInt64Array.from(rows, BigInt), [rows.length]),
      };
      const dims = [1, kv_heads, this.length, head_dim];
      for (let i = 0; i < layers; i++) {
        feeds[`past_key_${i}`] = new ort.Tensor("float32", this.past[2 * i], dims);
        feeds[`past_value_${i}`] = new ort.Tensor("float32", this.past[2 * i + 1], dims);
      }
      const names = ["argmax"];
      for (let i = 0; i < layers; i++) names.push(`present_key_${i}`, `present_value_${i}`);
      const out = await this.session.run(feeds, names); // not the logits: only their argmax is read
      this.present = [];
      for (let i = 0; i < layers; i++) this.present.push(out[`present_key_${i}`].data, out[`present_value_${i}`].data);
      this.fed = q;
      return Array.from(out.argmax.data, Number);
    }

    /** The prompt's forward (causal); the argmax after it. Its whole K/V stays. @param {number[]} ids */
    async prefill(ids) {
      const mask = ids.map((_, i) => ids.map((_, j) => j <= i));
      const out = await this.run(
        ids,
        ids.map((_, i) => i),
        mask,
        [ids.length - 1],
      );
      this.keep(
        0,
        Array.from(ids, (_, i) => i),
      );
      return out[0];
    }

    /** One step's forward; the argmax at the rows it reads. @param {{tokens: number[], positions: number[], mask: boolean[][], rows: number[]}} input */
    async step(input) {
      return this.run(input.tokens, input.positions, input.mask, input.rows);
    }

    /** Keep, of the last forward's rows (appended at `position`), only `rows` in the cache (model.py `keep_in_cache`).
     * @param {number} position @param {number[]} rows */
    keep(position, rows) {
      const present = /** @type {Float32Array[]} */ (this.present),
        { kv_heads, head_dim } = this.shape,
        before = this.length + this.fed,
        after = position + rows.length;
      if (position !== this.length)
        throw new Error(`cache holds ${this.length} positions, the step starts at ${position}`);
      this.past = present.map((t) => {
        const kept = new Float32Array(kv_heads * after * head_dim);
        for (let h = 0; h < kv_heads; h++) {
          const src = h * before * head_dim,
            dst = h * after * head_dim;
          kept.set(t.subarray(src, src + position * head_dim), dst);
          rows.forEach((r, k) => {
            const from = src + (position + r) * head_dim;
            kept.set(t.subarray(from, from + head_dim), dst + (position + k) * head_dim);
          });
        }
        return kept;
      });
      this.length = after;
      this.present = null;
    }
  }

  /** A file of the engine's, or an error naming it and the server's answer. @param {URL} url */
  async function fetched(url) {
    const res = await fetch(url);
    if (!res.ok) throw new Error(`${url.pathname.split("/").pop()}: the site answered ${res.status}`);
    return res;
  }

  /**
   * Fetch the engine's files under `base` (the folder `lade export-site` writes as engine/: manifest, GGUF chunks,
   * graph, runtime files), rebuild the weights and start one session. `progress(stage, done, total)` reports the
   * download (bytes) and the rebuild (tensors). Returns the manifest, the seconds each stage took and `lane()`, a
   * fresh forward (its own K/V cache) on the one session, one per lane of a race.
   * @param {any} ort @param {string} base @param {(stage: string, done: number, total: number) => void} [progress]
   */
  async function load(ort, base, progress = () => {}) {
    const t0 = performance.now();
    ort.env.wasm.wasmPaths = new URL("ort/", base).href;
    ort.env.wasm.numThreads = self.crossOriginIsolated ? Math.min(4, navigator.hardwareConcurrency || 1) : 1;
    const manifest = await (await fetched(new URL("manifest.json", base))).json();
    const total = manifest.chunks.reduce((/** @type {number} */ a, /** @type {any} */ c) => a + c.bytes, 0);
    const gguf = new Uint8Array(total);
    let done = 0;
    for (const chunk of manifest.chunks) {
      const bytes = new Uint8Array(await (await fetched(new URL(chunk.file, base))).arrayBuffer());
      if (bytes.length !== chunk.bytes)
        throw new Error(`${chunk.file}: ${bytes.length} bytes, the manifest says ${chunk.bytes}`);
      gguf.set(bytes, done);
      done += bytes.length;
      progress("download", done, total);
    }
    const graph = new Uint8Array(await (await fetched(new URL("forward.onnx", base))).arrayBuffer());
    const t1 = performance.now();
    const weights = await window.Lade.weights.rebuild(gguf.buffer, manifest, (d, n) => progress("rebuild", d, n));
    const t2 = performance.now();
    const first = await OrtForward.create(ort, graph, weights, manifest.shape, manifest.weights.file);
    const t3 = performance.now();
    const threads = ort.env.wasm.numThreads;
    return {
      manifest,
      backend: `your browser's WebAssembly, ${threads} thread${threads === 1 ? "" : "s"}`,
      seconds: { download: (t1 - t0) / 1000, rebuild: (t2 - t1) / 1000, session: (t3 - t2) / 1000 },
      lane: () => new OrtForward(ort, first.session, manifest.shape),
    };
  }

  return { OrtForward, load, fetched };
})();
window.Lade = window.Lade || /** @type {any} */ ({});
window.Lade.forward = LadeForward;
