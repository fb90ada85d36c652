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
     * @param {OrtModule} ort the onnxruntime-web module @param {OrtSession} session an InferenceSession of the graph
     * @param {ModelShape} shape
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
     * @param {OrtModule} ort @param {Uint8Array} graph @param {Uint8Array} weights @param {ModelShape} shape
     * @param {string} [file] @param {string} [provider]
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
      const feeds = this.feeds(tokens, positions, mask, rows);
      const out = await this.session.run(feeds, this.names()); // not the logits: only their argmax is read
      this.hold(out);
      this.fed = tokens.length;
      return Array.from(out.argmax.data, Number);
    }

    /** The outputs a forward asks for: the argmax and every layer's K/V. */
    names() {
      const names = ["argmax"];
      for (let i = 0; i < this.shape.layers; i++) names.push(`present_key_${i}`, `present_value_${i}`);
      return names;
    }

    /** A forward's inputs: the step's ids at their positions, the additive mask over the cache and the step, the
     * rows read, and the cache. @param {number[]} tokens @param {number[]} positions @param {boolean[][]} mask
     * @param {number[]} rows @returns {Record<string, OrtTensor>} */
    feeds(tokens, positions, mask, rows) {
      const { ort } = this,
        q = tokens.length,
        total = this.length + q;
      const additive = new Float32Array(q * total);
      for (let i = 0; i < q; i++)
        for (let j = 0; j < q; j++) if (!mask[i][j]) additive[i * total + this.length + j] = NEG;
      /** @type {Record<string, OrtTensor>} */
      const feeds = {
        input_ids: new ort.Tensor("int64", BigInt64Array.from(tokens, BigInt), [1, q]),
        position_ids: new ort.Tensor("int64", BigInt64Array.from(positions, BigInt), [1, q]),
        attention_mask: new ort.Tensor("float32", additive, [1, 1, q, total]),
        logit_rows: new ort.Tensor("int64", BigInt64Array.from(rows, BigInt), [rows.length]),
      };
      return Object.assign(feeds, this.cache());
    }

    /** The cache as the forward's past_key_i / past_value_i inputs. @returns {Record<string, OrtTensor>} */
    cache() {
      const { layers, kv_heads, head_dim } = this.shape,
        dims = [1, kv_heads, this.length, head_dim];
      /** @type {Record<string, OrtTensor>} */
      const feeds = {};
      for (let i = 0; i < layers; i++) {
        feeds[`past_key_${i}`] = new this.ort.Tensor("float32", this.past[2 * i], dims);
        feeds[`past_value_${i}`] = new this.ort.Tensor("float32", this.past[2 * i + 1], dims);
      }
      return feeds;
    }

    /** Hold a forward's K/V (cache and step rows) until `keep` says which rows stay. @param {Record<string, OrtTensor>} out */
    hold(out) {
      this.present = [];
      for (let i = 0; i < this.shape.layers; i++)
        this.present.push(
          /** @type {Float32Array} */ (out[`present_key_${i}`].data),
          /** @type {Float32Array} */ (out[`present_value_${i}`].data),
        );
    }

    /** Forget the last forward's K/V without keeping any of it: the cache stays as it was (a cost curve's timed
     * forwards, lade-auto.js, leave the prefix as Python's crop leaves it). */
    drop() {
      this.present = null;
    }

    /** The lane is done: its cache goes. */
    close() {
      this.past = [];
      this.present = null;
      this.length = 0;
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
      await this.keep(
        0,
        Array.from(ids, (_, i) => i),
      );
      return out[0];
    }

    /** One step's forward; the argmax at the rows it reads. @param {ForwardInput} input */
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

  /**
   * The forward on WebGPU: the K/V cache never leaves the GPU. Each forward's K/V comes back as GPU buffers, and the
   * rows a step keeps are gathered there by a second small graph (onnx_graph.py `build_keep_graph`), as `keep`
   * keeps them on the page for WebAssembly; only the ids, positions, mask and argmax cross between GPU and page.
   */
  class GpuForward extends OrtForward {
    /** @param {OrtModule} ort @param {OrtSession} session @param {OrtSession} keeper the keep graph's session
     * @param {ModelShape} shape */
    constructor(ort, session, keeper, shape) {
      super(ort, session, shape);
      this.keeper = keeper;
      /** @type {OrtTensor[] | null} the cache per layer, keys then values, as tensors on the GPU (null: empty) */
      this.kv = null;
      /** @type {OrtTensor[] | null} the last forward's K/V on the GPU */
      this.out = null;
    }

    /**
     * The forward's and the keep graph's sessions on WebGPU, every K/V output left on the GPU (a name of its own, not
     * `create`: it takes the keep graph too, so it cannot stand where `OrtForward.create` is called).
     * @param {OrtModule} ort @param {Uint8Array} graph @param {Uint8Array} keepGraph @param {Uint8Array} weights
     * @param {ModelShape} shape @param {string} file
     */
    static async createWithKeeper(ort, graph, keepGraph, weights, shape, file) {
      /** @type {Record<string, OrtLocation>} */
      const onGpu = {};
      for (let i = 0; i < shape.layers; i++) onGpu[`present_key_${i}`] = onGpu[`present_value_${i}`] = "gpu-buffer";
      const session = await ort.InferenceSession.create(graph, {
        executionProviders: ["webgpu"],
        externalData: [{ path: file, data: weights }],
        graphOptimizationLevel: "all",
        preferredOutputLocation: onGpu,
      });
      try {
        const keeper = await ort.InferenceSession.create(keepGraph, {
          executionProviders: ["webgpu"],
          preferredOutputLocation: "gpu-buffer",
        });
        return new GpuForward(ort, session, keeper, shape);
      } catch (err) {
        await session.release(); // its weights leave the GPU before WebAssembly loads its own copy
        throw err;
      }
    }

    cache() {
      if (!this.kv) return super.cache(); // empty: the prompt's forward
      /** @type {Record<string, OrtTensor>} */
      const feeds = {};
      for (let i = 0; i < this.shape.layers; i++) {
        feeds[`past_key_${i}`] = this.kv[2 * i];
        feeds[`past_value_${i}`] = this.kv[2 * i + 1];
      }
      return feeds;
    }

    /** @param {Record<string, OrtTensor>} out */
    hold(out) {
      this.out = [];
      for (let i = 0; i < this.shape.layers; i++) this.out.push(out[`present_key_${i}`], out[`present_value_${i}`]);
    }

    /** Keep, of the last forward's rows, only `rows` in the cache, on the GPU. @param {number} position @param {number[]} rows */
    async keep(position, rows) {
      if (position !== this.length)
        throw new Error(`cache holds ${this.length} positions, the step starts at ${position}`);
      const { ort } = this,
        out = /** @type {OrtTensor[]} */ (this.out),
        kept = [...Array(position).keys(), ...rows.map((r) => position + r)];
      /** @type {Record<string, OrtTensor>} */
      const feeds = { kept: new ort.Tensor("int64", BigInt64Array.from(kept, BigInt), [kept.length]) };
      for (let i = 0; i < this.shape.layers; i++) {
        feeds[`present_key_${i}`] = out[2 * i];
        feeds[`present_value_${i}`] = out[2 * i + 1];
      }
      const got = await this.keeper.run(feeds);
      for (const t of [...out, ...(this.kv || [])]) t.dispose(); // GPU buffers are freed by hand
      this.kv = [];
      for (let i = 0; i < this.shape.layers; i++) this.kv.push(got[`past_key_${i}`], got[`past_value_${i}`]);
      this.length = kept.length;
      this.out = null;
    }

    drop() {
      for (const t of this.out || []) t.dispose();
      this.out = null;
    }

    /** Free the GPU buffers this lane holds (its cache and its last forward's K/V); the lane is done. */
    close() {
      for (const t of [...(this.out || []), ...(this.kv || [])]) t.dispose();
      this.out = this.kv = null;
      this.length = 0;
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

  /**
   * One of the engine's files the manifest hashes (the graphs, the tokenizer, the runtime's WebAssembly binary),
   * checked against its SHA-256: from the browser's storage where kept and whole, else downloaded (a stored copy
   * that fails is deleted first). So a returning visitor downloads none of them again.
   * @param {Cache | null} cache @param {string} base @param {string} name @param {EngineManifest} manifest
   */
  async function fileOf(cache, base, name, manifest) {
    const want = (manifest.files || {})[name];
    for (const from of cache ? [cache, null] : [null]) {
      const { bytes, stored } = await bytesOf(from, new URL(name, base));
      if ((await window.Lade.weights.sha256(bytes)) === want) return bytes;
      await forget();
      if (!stored) break;
    }
    throw new Error(`${name}: its SHA-256 is not the manifest's`);
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

  /** The manifest's text, fetched (the worker reads it first, to choose the runtime's build). @param {string} base */
  async function manifestText(base) {
    return (await fetched(new URL("manifest.json", base))).text();
  }

  /**
   * Fetch the engine's files under `base` (the folder `lade export-site` writes as engine/: manifest, GGUF chunks,
   * graph, tokenizer, runtime files), rebuild the weights and start one session. The GGUF's chunks, the graphs, the
   * tokenizer and the runtime's WebAssembly binary are kept in the browser's Cache Storage (`storage`), so a later
   * visit reads them from disk. `progress(stage, done, total)` reports the download ("download", or "storage" for
   * bytes read from the browser's storage) and the rebuild (tensors). Returns the manifest, the tokenizer's data,
   * the seconds each stage took, the bytes read from storage and `lane()`, a fresh forward (its own K/V cache) on
   * the one session, one per lane of a race.
   * `gpu`: the WebGPU adapter's description where onnxruntime-web's WebGPU build is loaded (`GpuForward`: the K/V
   * cache stays on the GPU; experimental), else null for WebAssembly (`OrtForward`) on `threads` threads (more than
   * one only where the page is cross-origin isolated). `text`: the manifest's text where it was read already.
   * @param {OrtModule} ort @param {string} base
   * @param {{progress?: (stage: LoadStage, done: number, total: number) => void, gpu?: string | null,
   *   threads?: number, text?: string}} [opts]
   */
  async function load(ort, base, opts = {}) {
    const progress = opts.progress || (() => {});
    let gpu = opts.gpu ?? null;
    const t0 = performance.now();
    ort.env.wasm.wasmPaths = new URL("ort/", base).href;
    ort.env.logLevel = "error"; // not its warnings about shape operators it runs on the CPU beside WebGPU
    ort.env.wasm.numThreads = self.crossOriginIsolated ? Math.max(1, opts.threads || 1) : 1;
    const text = opts.text ?? (await manifestText(base));
    const manifest = /** @type {EngineManifest} */ (JSON.parse(text)),
      cache = await storage(text);
    const runtime = manifest.runtimes[gpu !== null ? "webgpu" : "wasm"];
    ort.env.wasm.wasmBinary = await fileOf(cache, base, runtime.binary, manifest);
    const tokenizer = /** @type {TokenizerData} */ (
      JSON.parse(new TextDecoder().decode(await fileOf(cache, base, "tokenizer.json", manifest)))
    );
    const total = manifest.chunks.reduce((a, c) => a + c.bytes, 0);
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
    const graph = await fileOf(cache, base, "forward.onnx", manifest);
    const t1 = performance.now();
    let weights;
    try {
      weights = await window.Lade.weights.rebuild(gguf.buffer, manifest, (d, n) => progress("rebuild", d, n));
    } catch (err) {
      // files that fail their hashes are not kept (downloaded just now and stored, or stored before): the next race
      // downloads afresh
      await forget();
      throw err;
    }
    const t2 = performance.now();
    /** @type {OrtForward} */
    let first,
      fallback = null;
    try {
      first =
        gpu !== null
          ? await GpuForward.createWithKeeper(
              ort,
              graph,
              await fileOf(cache, base, "keep.onnx", manifest),
              weights,
              manifest.shape,
              manifest.weights.file,
            )
          : await OrtForward.create(ort, graph, weights, manifest.shape, manifest.weights.file);
    } catch (err) {
      if (gpu === null) throw err;
      fallback = /** @type {Error} */ (err).message; // WebGPU would not start: WebAssembly, in the same build
      gpu = null;
      first = await OrtForward.create(ort, graph, weights, manifest.shape, manifest.weights.file);
    }
    const t3 = performance.now();
    const threads = ort.env.wasm.numThreads;
    return {
      manifest,
      tokenizer,
      backend:
        gpu !== null
          ? `your GPU through WebGPU, experimental: ${gpu}`
          : `your browser's WebAssembly, ${threads} thread${threads === 1 ? "" : "s"}`,
      seconds: { download: (t1 - t0) / 1000, rebuild: (t2 - t1) / 1000, session: (t3 - t2) / 1000 },
      stored_bytes: fromStore, // of the model's bytes, those read from this browser's storage, not downloaded
      fallback, // why WebGPU did not start, where it was asked for and WebAssembly ran instead
      gpu, // the adapter it runs on, or null on WebAssembly
      threads,
      lane: () =>
        first instanceof GpuForward
          ? new GpuForward(ort, first.session, first.keeper, manifest.shape)
          : new OrtForward(ort, first.session, manifest.shape),
    };
  }

  return { OrtForward, GpuForward, load, manifestText, fetched, stored, forget };
})();
window.Lade = window.Lade || /** @type {LadeNamespace} */ ({});
window.Lade.forward = LadeForward;
