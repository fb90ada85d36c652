"""The engine in a visitor's browser, measured beside the Python engine in one run (BENCHMARKS.md §16).

    python -m scripts.browser_engine --tokens 48 --out out/browser-engine.json
    python -m scripts.browser_engine --backend webgpu --tokens 48 --out out/browser-engine-webgpu.json

`--backend webgpu` loads onnxruntime-web's WebGPU build in Chromium started with WebGPU on (app/render/engine_page.py
WEBGPU_ARGS): on a machine with a GPU and its Vulkan driver, that GPU; else SwiftShader's software adapter (a check of
the path, not a speed). The adapter it ran on is in the output (`backend`).

Writes the engine's files as `lade export-site` does (app/render/engine_files.py) into a temporary folder, serves
them on 127.0.0.1 with a page that loads onnxruntime-web's WASM build and the engine scripts, and in headless
Chromium (one WASM thread, every request to another origin refused): loads the engine cold (download, weights
rebuilt from the GGUF, session) in one tab of a fresh profile, then again in a second tab of the same profile (a
returning visitor: the model read from the browser's Cache Storage, lade-forward.js), which decodes the benchmark
prompts with greedy and with lookahead decoding; then the Python engine decodes the same prompts on one thread.
Reported per method: ms per token in the browser and in Python, and whether the tokens are identical; the load times
cold and warm, with the bytes the warm visit read from storage; the Chromium processes' peak memory (resident,
summed, sampled every 0.2 s).

The page and the race are app/render/engine_page.py's, which tests/test_browser_engine.py drives too.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path

from app.render.engine_page import WEBGPU_ARGS, race, served_engine


def _peak_memory(stop: threading.Event, out: list) -> None:
    """The most resident memory Chromium's processes (this process's descendants named chrom*) held at once."""
    import psutil

    top = 0
    while not stop.wait(0.2):
        total = 0
        for p in psutil.Process().children(recursive=True):
            try:
                if "chrom" in p.name():
                    total += p.memory_info().rss
            except psutil.Error:
                pass
        top = max(top, total)
    out.append(top)


def main() -> None:
    import torch
    from playwright.sync_api import sync_playwright

    from lade_core import load_model
    from lade_core.autoregressive import autoregressive_generate
    from lade_core.config import LookaheadConfig
    from lade_core.lookahead import lookahead_generate
    from lade_core.measure.prompts import load_prompts

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tokens", type=int, default=48)
    p.add_argument("--prompts", type=int, default=3, help="the first prompts of each kind, in turn")
    p.add_argument("--out", default="out/browser-engine.json")
    p.add_argument("--backend", choices=("wasm", "webgpu"), default="wasm")
    args = p.parse_args()
    torch.set_num_threads(1)
    config = LookaheadConfig(window=5, ngram=4, guess=5)
    lm = load_model()
    prompts = load_prompts()[: args.prompts]
    cases = [lm.encode_prompt(q["prompt"]) for q in prompts]
    settings = {k: getattr(config, k) for k in ("window", "ngram", "guess", "pool", "tree", "window_seed")}
    with tempfile.TemporaryDirectory() as tmp, served_engine(Path(tmp)) as url, sync_playwright() as pw:
        from app.process import CHROMIUM, CHROMIUM_ARGS

        webgpu = args.backend == "webgpu"
        flags = [a for a in CHROMIUM_ARGS if a != "--disable-gpu"] + WEBGPU_ARGS if webgpu else CHROMIUM_ARGS
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=flags)
        page = url.replace("index.html", "webgpu.html") if webgpu else url
        stop, peak = threading.Event(), []
        watcher = threading.Thread(target=_peak_memory, args=(stop, peak))
        watcher.start()
        visitor = browser.new_context()  # one profile: its Cache Storage kept from the first tab to the second
        t0 = time.perf_counter()
        cold = race(visitor, page, [], {**settings, "max_new_tokens": 1}, lm.max_positions, lm.eos_ids, webgpu)
        cold_wall = time.perf_counter() - t0
        got = race(
            visitor, page, cases, {**settings, "max_new_tokens": args.tokens}, lm.max_positions, lm.eos_ids, webgpu
        )
        stop.set()
        watcher.join()
        browser.close()
    rows = []
    runs = iter(got["runs"])
    for q, ids in zip(prompts, cases):
        for name, python in (
            ("greedy", autoregressive_generate(lm, ids, args.tokens)),
            ("lookahead", lookahead_generate(lm, ids, config, args.tokens)),
        ):
            js = next(runs)
            rows.append(
                {
                    "prompt": q["id"],
                    "method": name,
                    "identical": js["tokens"] == list(python.tokens),
                    "browser_ms_per_token": 1000 * js["wall_s"] / len(js["tokens"]),
                    "python_ms_per_token": 1000 * python.wall_s / len(python.tokens),
                    "steps": len(js["steps"]),
                    "tokens": len(js["tokens"]),
                }
            )
    summary = {
        method: {
            "browser_ms_per_token": statistics.median(r["browser_ms_per_token"] for r in rows if r["method"] == method),
            "python_ms_per_token": statistics.median(r["python_ms_per_token"] for r in rows if r["method"] == method),
        }
        for method in ("greedy", "lookahead")
    }
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "command": "python -m scripts.browser_engine " + " ".join(f"--{k} {v}" for k, v in vars(args).items()),
        "setting": settings,
        "backend": got["backend"],
        "cold": {**cold["seconds"], "page_wall_s": cold_wall, "stored_bytes": cold["stored_bytes"]},
        "warm": {**got["seconds"], "stored_bytes": got["stored_bytes"]},  # the model from the browser's storage
        "peak_chromium_rss_bytes": peak[0] if peak else None,
        "rows": rows,
        "summary": summary,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    print(json.dumps({k: result[k] for k in ("backend", "cold", "warm", "summary")}, indent=1))
    print(f"peak Chromium memory {result['peak_chromium_rss_bytes'] / 2**20:.0f} MiB; wrote {args.out}")


if __name__ == "__main__":
    main()
