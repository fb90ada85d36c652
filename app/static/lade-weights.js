// @ts-check
// The model's fp32 weights rebuilt in the browser from the GGUF the project ships (`Lade.weights`): a GGUF reader,
// the dequantisers of the types it holds (F32, F16, Q8_0, Q4_1, as gguf-py computes them), llama.cpp's q/k row
// permutation undone, and each tensor laid out where the graph's external data wants it and checked against the
// SHA-256 of the Python converter's tensor (lade_core/gguf_weights.py writes the manifest). So a visitor downloads
// 98 MB instead of 538, and gets the same bits the Python engine loads.
const LadeWeights = (() => {
  "use strict";

  const TYPES = /** @type {Record<number, string>} */ ({ 0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 8: "Q8_0" });

  /** The tensors of a GGUF file: name -> {type, dims (fastest first), offset (absolute)}. @param {ArrayBuffer} buffer */
  function read(buffer) {
    const view = new DataView(buffer);
    let at = 0;
    /** @param {number} n the offset of the next n bytes, moving past them */
    const take = (n) => {
      at += n;
      return at - n;
    };
    const u32 = () => view.getUint32(take(4), true);
    const u64 = () => Number(view.getBigUint64(take(8), true));
    const text = () => {
      const n = u64();
      return new TextDecoder().decode(new Uint8Array(buffer, take(n), n));
    };
    const SIZES = /** @type {Record<number, number>} */ ({
      0: 1,
      1: 1,
      2: 2,
      3: 2,
      4: 4,
      5: 4,
      6: 4,
      7: 1,
      10: 8,
      11: 8,
      12: 8,
    });
    /** A key's value: text or a number as stored; null for what is skipped (arrays, other types).
     * @param {number} type @returns {string | number | null} */
    const value = (type) => {
      if (type === 8) return text();
      if (type === 9) {
        const inner = u32(),
          n = u64();
        if (inner !== 8 && inner !== 9) {
          at += n * SIZES[inner];
          return null; // arrays of numbers (the tokenizer's scores, types) are skipped here
        }
        for (let i = 0; i < n; i++) value(inner);
        return null;
      }
      if (type === 4) return view.getUint32(take(4), true);
      if (type === 5) return view.getInt32(take(4), true);
      if (type === 6) return view.getFloat32(take(4), true);
      if (type === 10 || type === 11) return u64();
      if (!(type in SIZES)) throw new Error(`GGUF: unknown value type ${type}`);
      at += SIZES[type];
      return null;
    };
    if (new TextDecoder().decode(new Uint8Array(buffer, 0, 4)) !== "GGUF") throw new Error("not a GGUF file");
    at = 4;
    const version = u32();
    if (version < 2) throw new Error(`GGUF version ${version} is too old`);
    const count = u64(),
      kvs = u64();
    let alignment = 32;
    for (let i = 0; i < kvs; i++) {
      const key = text(),
        v = value(u32());
      if (key === "general.alignment") alignment = /** @type {number} */ (v); // a u32
    }
    const infos = [];
    for (let i = 0; i < count; i++) {
      const name = text(),
        dims = Array.from({ length: u32() }, u64);
      infos.push({ name, dims, type: u32(), offset: u64() });
    }
    const start = Math.ceil(at / alignment) * alignment;
    /** @type {Map<string, {type: string, dims: number[], offset: number}>} */
    const tensors = new Map();
    for (const t of infos)
      tensors.set(t.name, { type: TYPES[t.type] || `type ${t.type}`, dims: t.dims, offset: start + t.offset });
    return { version, tensors };
  }

  /** An IEEE half as a float. @param {number} h */
  function half(h) {
    const s = h & 0x8000 ? -1 : 1,
      e = (h >> 10) & 0x1f,
      f = h & 0x3ff;
    if (e === 0) return s * f * 2 ** -24;
    if (e === 31) return f ? Number.NaN : s * Number.POSITIVE_INFINITY;
    return s * (1 + f / 1024) * 2 ** (e - 15);
  }

  /**
   * `count` values of `type` from `bytes` (the tensor's data) into `out` (fp32). Q8_0: blocks of 32, a half scale d
   * and 32 int8 q, value d*q. Q4_1: blocks of 32, a half scale d and minimum m and 16 bytes of nibbles, the low
   * nibbles the block's first 16 values, the high the last 16, value d*q + m (each product exact in fp32, so one
   * rounding, as gguf-py's).
   * @param {string} type @param {Uint8Array} bytes @param {Float32Array} out
   */
  function dequantize(type, bytes, out) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      n = out.length;
    if (type === "F32") out.set(new Float32Array(bytes.slice(0, 4 * n).buffer));
    else if (type === "F16") for (let i = 0; i < n; i++) out[i] = half(view.getUint16(2 * i, true));
    else if (type === "Q8_0")
      for (let b = 0; b < n / 32; b++) {
        const d = half(view.getUint16(34 * b, true));
        for (let j = 0; j < 32; j++) out[32 * b + j] = d * view.getInt8(34 * b + 2 + j);
      }
    else if (type === "Q4_1")
      for (let b = 0; b < n / 32; b++) {
        const d = half(view.getUint16(20 * b, true)),
          m = half(view.getUint16(20 * b + 2, true));
        for (let j = 0; j < 16; j++) {
          const q = bytes[20 * b + 4 + j];
          out[32 * b + j] = d * (q & 15) + m;
          out[32 * b + j + 16] = d * (q >> 4) + m;
        }
      }
    else throw new Error(`GGUF: no dequantiser for ${type}`);
  }

  /** Bytes a tensor of `n` values of `type` takes. @param {string} type @param {number} n */
  const stored = (type, n) => ({ F32: 4 * n, F16: 2 * n, Q8_0: (34 * n) / 32, Q4_1: (20 * n) / 32 })[type] || 0;

  /** llama.cpp's q/k rows back in the model's order: stored row (h, d, t) is row (h, t, d).
   * @param {Float32Array} w @param {number} rows @param {number} cols @param {number} heads */
  function unpermute(w, rows, cols, heads) {
    const out = new Float32Array(w.length),
      halfRows = rows / heads / 2;
    for (let h = 0; h < heads; h++)
      for (let t = 0; t < 2; t++)
        for (let d = 0; d < halfRows; d++) {
          const to = (h * 2 * halfRows + t * halfRows + d) * cols,
            from = (h * 2 * halfRows + d * 2 + t) * cols;
          out.set(w.subarray(from, from + cols), to);
        }
    return out;
  }

  /** Lowercase hex SHA-256 of bytes. @param {Uint8Array} bytes */
  async function sha256(bytes) {
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", /** @type {BufferSource} */ (bytes)));
    return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  /**
   * The graph's external data (one buffer, every tensor at its manifest offset) rebuilt from a GGUF, each tensor
   * checked against its hash; `progress(done, total)` after each. Throws, naming the tensor, on any mismatch.
   * @param {ArrayBuffer} gguf @param {EngineManifest} manifest @param {(done: number, total: number) => void} [progress]
   */
  async function rebuild(gguf, manifest, progress) {
    const file = read(gguf),
      out = new Uint8Array(manifest.weights.bytes);
    let done = 0;
    for (const t of manifest.tensors) {
      const info = file.tensors.get(t.gguf);
      if (!info) throw new Error(`GGUF: no tensor ${t.gguf} (for ${t.name})`);
      const n = t.shape.reduce((a, b) => a * b, 1);
      if (info.type !== t.type || info.dims.reduce((a, b) => a * b, 1) !== n)
        throw new Error(`GGUF: ${t.gguf} is ${info.type} [${info.dims}], the manifest wants ${t.type} of ${n} values`);
      let values = new Float32Array(n);
      dequantize(info.type, new Uint8Array(gguf, info.offset, stored(info.type, n)), values);
      if (t.heads) values = unpermute(values, t.shape[0], t.shape[1], t.heads);
      const bytes = new Uint8Array(values.buffer);
      const hash = await sha256(bytes);
      if (hash !== t.sha256) throw new Error(`weights: ${t.name} does not match the converter's (sha256 ${hash})`);
      out.set(bytes, t.offset);
      if (progress) progress(++done, manifest.tensors.length);
    }
    return out;
  }

  return { read, half, dequantize, unpermute, sha256, rebuild };
})();
window.Lade = window.Lade || /** @type {LadeNamespace} */ ({});
window.Lade.weights = LadeWeights;
