"""A bare page that loads the browser engine's files (`engine_files.py`) and races in them, served on 127.0.0.1:
what the browser engine's benchmark (scripts/browser_engine.py) and its end-to-end test (tests/test_browser_engine.py)
drive, with no renderer around it."""

from __future__ import annotations

import functools
import http.server
import threading
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse

HARNESS = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>engine</title>
<script src="engine/ort/{runtime}"></script><script src="engine/lade-weights.js"></script>
<script src="engine/lade-engine.js"></script><script src="engine/lade-forward.js"></script>
</head><body></body></html>"""

# Chromium's switches for WebGPU: on a machine with a GPU its driver, else SwiftShader's software adapter (slow, but
# the same code path: what the tests use to check the WebGPU backend's tokens). Not with --disable-gpu.
WEBGPU_ARGS = ["--enable-unsafe-webgpu", "--enable-features=Vulkan"]

RACE = """async ([cases, config, context, eos, webgpu]) => {
  let gpu = null;
  if (webgpu) {
    const adapter = navigator.gpu && await navigator.gpu.requestAdapter();
    if (!adapter) throw new Error("no WebGPU adapter in this browser");
    gpu = [adapter.info.vendor, adapter.info.architecture, adapter.info.description].filter(Boolean).join(" ");
  }
  const engine = await Lade.forward.load(ort, new URL("engine/", location.href).href, {gpu});
  if (webgpu && engine.fallback) throw new Error(`WebGPU would not start: ${engine.fallback}`);
  const E = Lade.engine, runs = [];
  for (const ids of cases)
    for (const lookahead of [false, true]) {
      const forward = engine.lane();
      const decoder = lookahead ? new E.Lookahead(forward, ids, config, context) : new E.Greedy(forward, ids);
      runs.push(await E.generate(decoder, new Set(eos), config.max_new_tokens));
    }
  return {runs, seconds: engine.seconds, backend: engine.backend, stored_bytes: engine.stored_bytes};
}"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".mjs": "text/javascript"}

    def log_message(self, *args):
        pass


@contextmanager
def served_engine(folder: Path):
    """The engine's files and the harness pages under `folder`, served on 127.0.0.1; yields the WebAssembly page's
    address (`index.html`; `webgpu.html` beside it loads the WebGPU build)."""
    from .engine_files import RUNTIMES, write_engine_files

    write_engine_files(folder)
    for page, runtime in (("index.html", "wasm"), ("webgpu.html", "webgpu")):
        (folder / page).write_text(HARNESS.replace("{runtime}", RUNTIMES[runtime][0]), encoding="utf-8")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    finally:
        server.shutdown()


def race(browser, url: str, cases: list[list[int]], config: dict, context: int, eos, webgpu: bool = False) -> dict:
    """In a new tab of `browser` (a Browser: a fresh profile; a BrowserContext: one visitor's, its storage kept from
    tab to tab) at `url`: load the engine, decode each case with greedy then lookahead decoding (`config`: W, N, G,
    pool, tree, window_seed, max_new_tokens); `webgpu`: on WebGPU (the page at `url` loads the WebGPU build), which
    must start. Fails on a page error or a request elsewhere."""
    page = browser.new_page()
    page.set_default_timeout(900_000)
    refused, errors = [], []
    here = urlparse(url).netloc

    def only_here(route):
        if urlparse(route.request.url).netloc != here:
            refused.append(route.request.url)
            return route.abort()
        return route.continue_()

    page.route("**/*", only_here)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    got = page.evaluate(RACE, [cases, config, context, sorted(eos), webgpu])
    page.close()
    if errors or refused:
        raise RuntimeError(f"the page failed: {errors or refused}")
    return got
