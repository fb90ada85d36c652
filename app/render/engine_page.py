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
<script src="engine/ort/ort.wasm.min.js"></script><script src="engine/lade-weights.js"></script>
<script src="engine/lade-engine.js"></script><script src="engine/lade-forward.js"></script>
</head><body></body></html>"""

RACE = """async ([cases, config, context, eos]) => {
  const engine = await Lade.forward.load(ort, new URL("engine/", location.href).href);
  const E = Lade.engine, runs = [];
  for (const ids of cases)
    for (const lookahead of [false, true]) {
      const forward = engine.lane();
      const decoder = lookahead ? new E.Lookahead(forward, ids, config, context) : new E.Greedy(forward, ids);
      runs.push(await E.generate(decoder, new Set(eos), config.max_new_tokens));
    }
  return {runs, seconds: engine.seconds, backend: engine.backend};
}"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".mjs": "text/javascript"}

    def log_message(self, *args):
        pass


@contextmanager
def served_engine(folder: Path):
    """The engine's files and the harness page under `folder`, served on 127.0.0.1; yields the page's address."""
    from .engine_files import write_engine_files

    write_engine_files(folder)
    (folder / "index.html").write_text(HARNESS, encoding="utf-8")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    finally:
        server.shutdown()


def race(browser, url: str, cases: list[list[int]], config: dict, context: int, eos) -> dict:
    """In a new tab of `browser` at `url`: load the engine, decode each case with greedy then lookahead decoding
    (`config`: W, N, G, pool, tree, window_seed, max_new_tokens). Fails on a page error or a request elsewhere."""
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
    got = page.evaluate(RACE, [cases, config, context, sorted(eos)])
    page.close()
    if errors or refused:
        raise RuntimeError(f"the page failed: {errors or refused}")
    return got
