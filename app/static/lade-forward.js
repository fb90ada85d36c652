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
     * A session of the graph with its weights: `graph` the .onnx bytes, `weights` the external data file's bytes,
     * on onnxruntime-web's `provider` ("wasm", or "webgpu" where the page loaded the WebGPU build).
     * @param {any} ort @param {Uint8Array} graph @param {Uint8Array} weights @param {any} shape @param {string} file
     * @param {string} [provider]
     */
    static async create(ort, graph, weights, shape, file = "weights.bin", provider = "wasm") {
      const session = await ort.InferenceSession.create(graph, {
        executionProviders: [provider],
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

  const STORE = "lade-engine-"; // the browser's Cache Storage: one cache per set of model files, named by its manifest

  /**
   * The model's files kept in the browser's Cache Storage between visits, under a name made of the manifest's hash
   * (new files, a new name; older sets are deleted when a new one is stored). Null where the browser has none (an
   * insecure page, a private window that refuses it): then every visit downloads, as the HTTP cache allows.
   * @param {string} manifestText
   */
  async function storage(manifestText) {
    if (!self.caches) return null;
    try {
      const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(manifestText)));
      const name = STORE + Array.from(digest.slice(0, 8), (b) => b.toString(16).padStart(2, "0")).join("");
      for (const old of await caches.keys()) if (old.startsWith(STORE) && old !== name) await caches.delete(old);
      return await caches.open(name);
    } catch {
      return null;
    }
  }

  /** The bytes of one of the engine's files: from the browser's storage where kept there, else downloaded (and kept).
   * @param {Cache | null} cache @param {URL} url @returns {Promise<{bytes: Uint8Array, stored: boolean}>} */
  async function bytesOf(cache, url) {
    const hit = cache ? await cache.match(url).catch(() => undefined) : undefined;
    if (hit) return { bytes: new Uint8Array(await hit.arrayBuffer()), stored: true };
    const res = await fetched(url);
    const bytes = new Uint8Array(await res.arrayBuffer());
    const kept = new Response(bytes, { headers: { "content-length": String(bytes.length) } });
    if (cache) await cache.put(url, kept).catch(() => {}); // a full disk: the next visit downloads
    return { bytes, stored: false };
  }

  /** Whether this browser keeps the model's files, and how many bytes of them. */
  async function stored() {
    if (!self.caches) return 0;
    let bytes = 0;
    for (const name of await caches.keys()) {
      if (!name.startsWith(STORE)) continue;
      const cache = await caches.open(name);
      for (const req of await cache.keys())
        bytes += Number((await cache.match(req))?.headers.get("content-length") || 0);
    }
    return bytes;
  }

  /** Delete the model's files from this browser's storage. */
  async function forget() {
    if (self.caches) for (const name of await caches.keys()) if (name.startsWith(STORE)) await caches.delete(name);
  }

  /**
   * Fetch the engine's files under `base` (the folder `lade export-site` writes as engine/: manifest, GGUF chunks,
   * graph, runtime files), rebuild the weights and start one session. The GGUF's chunks and the graph are kept in
   * the browser's Cache Storage (`storage`), so a later visit reads them from disk. `progress(stage, done, total)`
   * reports the download ("download", or "storage" for bytes read from the browser's storage) and the rebuild
   * (tensors). Returns the manifest, the seconds each stage took, the bytes read from storage and `lane()`, a fresh
   * forward (its own K/V cache) on the one session, one per lane of a race.
   * `gpu`: the WebGPU adapter's description where the page loaded onnxruntime-web's WebGPU build (experimental: the
   * K/V cache goes back and forth between the GPU and this page each step), else null for WebAssembly.
   * @param {any} ort @param {string} base @param {(stage: string, done: number, total: number) => void} [progress]
   * @param {string | null} [gpu]
   */
  async function load(ort, base, progress = () => {}, gpu = null) {
    const t0 = performance.now();
    ort.env.wasm.wasmPaths = new URL("ort/", base).href;
    ort.env.wasm.numThreads = self.crossOriginIsolated ? Math.min(4, navigator.hardwareConcurrency || 1) : 1;
    const text = await (await fetched(new URL("manifest.json", base))).text();
    const manifest = JSON.parse(text),
      cache = await storage(text);
    const total = manifest.chunks.reduce((/** @type {number} */ a, /** @type {any} */ c) => a + c.bytes, 0);
    const gguf = new Uint8Array(total);
    let done = 0,
      fromStore = 0;
    for (const chunk of manifest.chunks) {
      const { bytes, stored } = await bytesOf(cache, new URL(chunk.file, base));
      if (bytes.length !== chunk.bytes) {
        await forget();
        throw new Error(`${chunk.file}: ${bytes.length} bytes, the manifest says ${chunk.bytes}`);
      }
      gguf.set(bytes, done);
      done += bytes.length;
      if (stored) fromStore += bytes.length;
      progress(stored ? "storage" : "download", done, total);
    }
    const graph = (await bytesOf(cache, new URL("forward.onnx", base))).bytes;
    const t1 = performance.now();
    let weights;
    try {
      weights = await window.Lade.weights.rebuild(gguf.buffer, manifest, (d, n) => progress("rebuild", d, n));
    } catch (err) {
      // a copy kept in this browser that no longer matches its hashes is deleted: the next race downloads afresh
      if (fromStore) await forget();
      throw err;
    }
    const t2 = performance.now();
    const create = (/** @type {string} */ provider) =>
      OrtForward.create(ort, graph, weights, manifest.shape, manifest.weights.file, provider);
    let first,
      fallback = null;
    try {
      first = await create(gpu !== null ? "webgpu" : "wasm");
    } catch (err) {
      if (gpu === null) throw err;
      fallback = /** @type {Error} */ (err).message; // WebGPU would not start: WebAssembly, in the same build
      gpu = null;
      first = await create("wasm");
    }
    const t3 = performance.now();
    const threads = ort.env.wasm.numThreads;
    return {
      manifest,
      backend:
        gpu !== null
          ? `your GPU through WebGPU, experimental: ${gpu}`
          : `your browser's WebAssembly, ${threads} thread${threads === 1 ? "" : "s"}`,
      seconds: { download: (t1 - t0) / 1000, rebuild: (t2 - t1) / 1000, session: (t3 - t2) / 1000 },
      stored_bytes: fromStore, // of the model's bytes, those read from this browser's storage, not downloaded
      fallback, // why WebGPU did not start, where it was asked for and WebAssembly ran instead
      gpu, // the adapter it runs on, or null on WebAssembly
      threads,
      lane: () => new OrtForward(ort, first.session, manifest.shape),
    };
  }

  return { OrtForward, load, fetched, stored, forget };
})();
window.Lade = window.Lade || /** @type {any} */ ({});
window.Lade.forward = LadeForward;
