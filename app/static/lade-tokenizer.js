// @ts-check
// The model's tokenizer in the browser (`Lade.tokenizer`): byte-level BPE as the Python engine's tokenizer does it
// (GPT-2's pre-tokenising pattern, bytes as printable characters, merges by rank), the chat template's frame around
// the visitor's text (lade_core/chat.py `chat_frame`: the template's control tokens are the template's, the visitor's
// text is only ever text), and each token's text for the trace. Its data (vocabulary, merges, special tokens, frame)
// is engine/tokenizer.json, written by app/render/engine_files.py from the tokenizer the Python engine loads;
// tests/test_tokenizer_js.py holds it to that tokenizer, id for id.
const LadeTokenizer = (() => {
  "use strict";

  // GPT-2's pattern, as the ByteLevel pre-tokenizer uses it
  const PATTERN = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

  /** Byte -> printable character (GPT-2's table: printable Latin-1 bytes stay, the others shift past 255). */
  function byteTable() {
    const keep = [];
    for (let b = 33; b <= 126; b++) keep.push(b);
    for (let b = 161; b <= 172; b++) keep.push(b);
    for (let b = 174; b <= 255; b++) keep.push(b);
    const chars = new Array(256);
    let shift = 0;
    for (let b = 0; b < 256; b++) chars[b] = String.fromCharCode(keep.includes(b) ? b : 256 + shift++);
    return chars;
  }

  class Tokenizer {
    /** @param {TokenizerData} data */
    constructor(data) {
      this.vocab = data.vocab;
      /** @type {Map<string, number>} */
      this.ids = new Map(data.vocab.map((t, i) => [t, i]));
      /** @type {Map<string, number>} */
      this.ranks = new Map(data.merges.map((m, i) => [m, i]));
      this.specials = new Map(Object.entries(data.specials).map(([t, i]) => [i, t]));
      this.frame = data.frame;
      this.bytes = byteTable();
      /** @type {Map<string, number>} */
      this.unbytes = new Map(this.bytes.map((c, b) => [c, b]));
      /** @type {Map<string, number[]>} */
      this.cache = new Map();
    }

    /** One pre-token's ids: its bytes as characters, merged by rank. @param {string} word */
    bpe(word) {
      const hit = this.cache.get(word);
      if (hit) return hit;
      let parts = Array.from(new TextEncoder().encode(word), (b) => this.bytes[b]);
      for (;;) {
        let best = -1,
          rank = Number.POSITIVE_INFINITY;
        for (let i = 0; i + 1 < parts.length; i++) {
          const r = this.ranks.get(`${parts[i]} ${parts[i + 1]}`);
          if (r !== undefined && r < rank) {
            rank = r;
            best = i;
          }
        }
        if (best < 0) break;
        const pair = parts[best] + parts[best + 1];
        const merged = [];
        for (let i = 0; i < parts.length; i++)
          if (
            i + 1 < parts.length &&
            parts[i] + parts[i + 1] === pair &&
            this.ranks.get(`${parts[i]} ${parts[i + 1]}`) === rank
          ) {
            merged.push(pair);
            i++;
          } else merged.push(parts[i]);
        parts = merged;
      }
      const ids = parts.map((p) => {
        const id = this.ids.get(p);
        if (id === undefined) throw new Error(`tokenizer: no id for ${JSON.stringify(p)}`);
        return id;
      });
      if (this.cache.size < 50000) this.cache.set(word, ids);
      return ids;
    }

    /** Ids of plain text: a special token's spelling in it stays text. @param {string} text */
    text(text) {
      return Array.from(text.matchAll(PATTERN), (m) => this.bpe(m[0])).flat();
    }

    /** Ids of the visitor's text as the user's turn of the chat template (chat.py `encode_chat`). @param {string} text */
    encode(text) {
      const f = this.frame;
      return [...f.head, ...this.text(f.lead + text + f.trail), ...f.tail];
    }

    /** A token's text on its own, as the Python engine's tokenizer decodes it. @param {number} id */
    piece(id) {
      const special = this.specials.get(id);
      if (special !== undefined) return special;
      const bytes = Uint8Array.from(Array.from(this.vocab[id] || ""), (c) => this.unbytes.get(c) ?? 63);
      return new TextDecoder().decode(bytes);
    }
  }

  return { Tokenizer, PATTERN };
})();
window.Lade = window.Lade || /** @type {LadeNamespace} */ ({});
window.Lade.tokenizer = LadeTokenizer;
