// Types of the engine in the browser and of the race it runs there, for TypeScript's checker only (never shipped):
// - onnxruntime-web as the forward uses it (lade-forward.js): the module, a session, a tensor; only what the code
//   calls, not the library's own declarations;
// - the engine's files as Python writes them (engine/manifest.json and engine/tokenizer.json: app/render/engine_files.py,
//   lade_core/gguf_weights.py), the `Forward` the engine asks for (lade-engine.js) and the curve Auto measures
//   (lade-auto.js);
// - the race's worker (lade-race-worker.js): the messages between it and the page (lade-browser-race.js) and its scope;
// - the static site's service worker's scope (lade-isolation.js).
// The page does not load TypeScript's "webworker" library, so each worker's scope is declared here by what it uses.
// The run's data (Payload, Machine, EngineBoot, ...) is the generated contract.d.ts's; the page's own, types.d.ts.

// -- onnxruntime-web ------------------------------------------------------------------------------------------

/** What a tensor of the graph holds on the page: int64 ids (the argmax too) or float32 values (the K/V). */
type OrtTensorData = BigInt64Array | Float32Array;

/** An onnxruntime-web tensor: its data on the page, or (a WebGPU output left there) on the GPU until disposed. */
interface OrtTensor {
  readonly data: OrtTensorData;
  dispose(): void;
}

/** Where a session leaves an output: on the page ("cpu") or on the GPU ("gpu-buffer"). */
type OrtLocation = "cpu" | "gpu-buffer";

/** The options the forward starts a session with (onnxruntime-web's `InferenceSession.SessionOptions`). */
interface OrtSessionOptions {
  executionProviders: string[];
  /** the graph's external data: its file name in the graph, and its bytes */
  externalData?: { path: string; data: Uint8Array }[];
  graphOptimizationLevel?: "disabled" | "basic" | "extended" | "all";
  /** one place for every output, or one per output name */
  preferredOutputLocation?: OrtLocation | Record<string, OrtLocation>;
}

/** An onnxruntime-web session of a graph: inputs by name in, the asked outputs (all, by default) by name out. */
interface OrtSession {
  run(feeds: Record<string, OrtTensor>, fetches?: string[]): Promise<Record<string, OrtTensor>>;
  release(): Promise<void>;
}

/** The onnxruntime-web module (`ort`, the global its script sets), as lade-forward.js and the worker use it. */
interface OrtModule {
  Tensor: {
    new (type: "int64", data: BigInt64Array, dims: number[]): OrtTensor;
    new (type: "float32", data: Float32Array, dims: number[]): OrtTensor;
  };
  InferenceSession: {
    create(model: Uint8Array, options: OrtSessionOptions): Promise<OrtSession>;
  };
  env: {
    wasm: { wasmPaths?: string; numThreads?: number; wasmBinary?: Uint8Array };
    logLevel?: "verbose" | "info" | "warning" | "error" | "fatal";
    /** the library's version by package ("web": onnxruntime-web's) */
    versions?: Record<string, string>;
  };
}

// -- the engine's files ---------------------------------------------------------------------------------------

/** The model's sizes the K/V cache is laid out by (onnx_graph.py `Shape`, as the manifest carries them). */
interface ModelShape {
  layers: number;
  kv_heads: number;
  head_dim: number;
}

/** One weight of the graph's external data: where it comes from in the GGUF and what it must hash to
 * (lade_core/gguf_weights.py `manifest`). */
interface ManifestTensor {
  /** transformers' name */
  name: string;
  /** llama.cpp's name, in the GGUF */
  gguf: string;
  /** the GGUF's type ("F32", "F16", "Q8_0", "Q4_1") */
  type: string;
  shape: number[];
  /** the q/k row permutation's head count, 0 for none */
  heads: number;
  /** where it lies in the weights file, in bytes */
  offset: number;
  length: number;
  /** of its fp32 little-endian bytes */
  sha256: string;
}

/** engine/manifest.json (app/render/engine_files.py `_write_model_files`). */
interface EngineManifest {
  gguf: { file: string; bytes: number };
  /** the graph's external data file, as the browser rebuilds it */
  weights: { file: string; bytes: number };
  tensors: ManifestTensor[];
  shape: ModelShape;
  /** the GGUF's parts, in order */
  chunks: { file: string; bytes: number }[];
  /** onnxruntime-web's builds: each one's script and WebAssembly binary, under engine/ */
  runtimes: Record<"wasm" | "webgpu", { script: string; binary: string }>;
  /** the SHA-256 of each file it names (the graphs, the tokenizer, the runtimes' binaries) */
  files: Record<string, string>;
}

/** engine/tokenizer.json (app/render/engine_files.py `tokenizer_data`): every token by id, the merges in rank
 * order, the special tokens' ids, the chat frame around the visitor's text and the end-of-sequence ids. */
interface TokenizerData {
  vocab: string[];
  merges: string[];
  specials: Record<string, number>;
  frame: { head: number[]; lead: string; trail: string; tail: number[] };
  eos: number[];
}

/** A stage of loading the engine, as `progress` reports it: the model downloaded or read from this browser's
 * storage, the weights rebuilt, then (the worker) this device measured. */
type LoadStage = "download" | "storage" | "rebuild" | "measure";

/** The model's tokenizer (lade-tokenizer.js `Tokenizer`). */
type BpeTokenizer = InstanceType<(typeof LadeTokenizer)["Tokenizer"]>;

/** What lade-forward.js `load` gives: the files read, the backend, and a fresh forward per lane. */
type LoadedEngine = Awaited<ReturnType<(typeof LadeForward)["load"]>>;

/** A forward on its own K/V cache: one lane of a race (lade-forward.js `OrtForward`, or its `GpuForward`). */
type ForwardLane = InstanceType<(typeof LadeForward)["OrtForward"]>;

// -- the engine -----------------------------------------------------------------------------------------------

/** One step's forward input: its tokens at their positions, the mask over them (on top of the whole cache), and
 * the rows whose argmax it reads. */
interface ForwardInput {
  tokens: number[];
  positions: number[];
  mask: boolean[][];
  rows: number[];
}

/** The model as lade-engine.js asks for it (a lane of lade-forward.js's, or in tests the Python engine's recorded
 * outputs); each may answer at once or by a promise. */
interface ModelForward {
  /** the prompt's forward: the argmax after it */
  prefill(ids: number[]): number | Promise<number>;
  /** one step's forward: the argmax at each of `input.rows` */
  step(input: ForwardInput): number[] | Promise<number[]>;
  /** keep, of the rows the step appended at `position`, those `rows` in the cache */
  keep(position: number, rows: number[]): void | Promise<void>;
}

/** This device's cost curve as lade-auto.js `measureCurve` measures it, in costcurve.py's fields. */
interface MeasuredCurve {
  how: string;
  /** the cached prefix's tokens */
  prefix: number;
  repeats: number;
  /** a one-token forward's median seconds */
  greedy_s: number;
  /** the greedy step's drift: its first half of samples against its second (the noise rule's floor) */
  greedy_drift: number;
  points: import("./contract").CostPoint[];
  measured_at: string;
}

/** A swept setting with its step cost and predicted speed-up on a curve (lade-auto.js `predictPoint`). */
type PredictedPoint = ReturnType<(typeof LadeAuto)["predictPoint"]>;

// -- the race in the browser ----------------------------------------------------------------------------------

/** A race as the visitor asks it: the prompt, W, N, G and new tokens. */
interface RaceSettings {
  prompt: string;
  window: number;
  ngram: number;
  guess: number;
  max_new_tokens: number;
}

/** The sidebar's offer to race in the browser, as the server sends it (app/askers.py `offer`): a sentence, and the
 * race as asked there, each value as the server's field held it (lade-handoff.js puts each within the panel's limits). */
interface RaceOffer {
  text: string;
  race: { [K in keyof RaceSettings]?: unknown };
  /** the offer's number, so that the same offer sent again is a new value */
  n: number;
}

/** What the worker says when loaded: the engine it runs, this device's machine and curve, and Auto's proposal (null:
 * no swept settings came with the page) among `swept` settings. */
interface RaceReady {
  type: "ready";
  engine: {
    /** the backend in words */
    backend: string;
    threads: number;
    /** the WebGPU adapter in words, or null on WebAssembly */
    gpu: string | null;
    /** why WebGPU did not start, where it was asked for, else null */
    fallback: string | null;
    seconds: { download: number; rebuild: number; session: number };
    stored_bytes: number;
    isolated: boolean;
  };
  machine: import("./contract").Machine;
  curve: MeasuredCurve;
  auto: PredictedPoint | null;
  swept: number;
}

/** What the page posts to the race's worker. */
type RaceWorkerIn =
  | { type: "load"; base: string; threads: number; info: import("./contract").EngineBoot; webgpu?: boolean }
  | { type: "race"; settings: RaceSettings }
  | { type: "more" }
  | { type: "stop" }
  | { type: "forget" };

/** What the race's worker posts to the page (an error without `refused`: the worker itself failed or was ended). */
type RaceWorkerOut =
  | { type: "progress"; stage: LoadStage; done: number; total: number }
  | RaceReady
  | { type: "snapshot"; payload: import("./contract").Payload }
  | { type: "done"; payload: import("./contract").Payload }
  | { type: "forgot"; bytes: number }
  | { type: "error"; message: string; refused?: boolean; partial?: import("./contract").Payload | null };

/** One kind of the worker's messages. */
type RaceWorkerSays<T extends RaceWorkerOut["type"]> = Extract<RaceWorkerOut, { type: T }>;

/** The race's worker's scope, as lade-race-worker.js uses it: the engine's scripts loaded into it register on its
 * `window.Lade`, onnxruntime-web's on its `ort`. */
interface RaceWorkerScope {
  /** the scope itself, set so that the engine's scripts find `window` as on a page */
  window: RaceWorkerScope;
  Lade: LadeNamespace;
  ort: OrtModule;
  importScripts(...urls: string[]): void;
  postMessage(message: RaceWorkerOut): void;
  onmessage: ((ev: MessageEvent<RaceWorkerIn>) => void) | null;
}

/** WebGPU's entry (`navigator.gpu`, absent where the browser has none), as the worker asks it for an adapter. */
interface GpuEntry {
  requestAdapter(): Promise<GpuAdapterSeen | null>;
}

/** An adapter as the worker reads it, in browsers new and old: newer ones describe it in `info`, older ones said
 * whether it is a software fallback on the adapter itself. */
interface GpuAdapterSeen {
  info?: Partial<Pick<GPUAdapterInfo, "vendor" | "architecture" | "description" | "isFallbackAdapter">>;
  isFallbackAdapter?: boolean;
}

// -- the static site's service worker --------------------------------------------------------------------------

/** An event a service worker may hold open until a promise settles. */
interface IsolationEvent {
  waitUntil(done: Promise<unknown>): void;
}

/** A request to the service worker, answered by it or (not answered) by the network as usual. */
interface IsolationFetchEvent extends IsolationEvent {
  readonly request: Request;
  respondWith(answer: Response | Promise<Response>): void;
}

/** The service worker's scope, as lade-isolation.js uses it. */
interface IsolationScope {
  readonly location: { readonly origin: string };
  readonly clients: { claim(): Promise<void> };
  skipWaiting(): Promise<void>;
  addEventListener(type: "install", listener: () => void): void;
  addEventListener(type: "activate", listener: (ev: IsolationEvent) => void): void;
  addEventListener(type: "fetch", listener: (ev: IsolationFetchEvent) => void): void;
}
