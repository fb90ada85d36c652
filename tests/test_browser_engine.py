"""The engine in the visitor's browser, end to end: headless Chromium loads onnxruntime-web's files, the project's
graph and the shipped GGUF from one local origin (every request elsewhere refused), rebuilds the weights, and decodes
with lade-engine.js over lade-forward.js; the tokens and step records must be the Python engine's on the same prompt
and settings. `make test` runs one prompt a few tokens long; the soak tier three prompts generated at test time.
"""

import functools
import http.server
import random
import threading
import time
from urllib.parse import urlparse

import pytest

from lade_core.autoregressive import autoregressive_generate
from lade_core.config import LookaheadConfig
from lade_core.lookahead import lookahead_generate

CONFIG = LookaheadConfig(window=5, ngram=4, guess=5)
TIMES = {"forward_s", "overhead_s", "draft_s"}

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


def prompts_made_now(n: int) -> list[str]:
    """Prompts no file holds: a task and its details drawn afresh each run (seeded by the clock, printed)."""
    seed = time.time_ns()
    rng = random.Random(seed)
    things = ["a stack", "a queue", "a linked list", "a binary tree", "a hash map", "a priority queue", "a trie"]
    langs = ["Python", "JavaScript", "Go", "Rust"]
    print(f"prompts seeded with {seed}")
    return [f"Write {rng.choice(things)} in {rng.choice(langs)} with {rng.randint(2, 5)} methods." for _ in range(n)]


@pytest.fixture(scope="module")
def site(lm, tmp_path_factory):
    """The engine's files as `lade export-site` writes them (app/render/engine_files.py) and a page that loads them,
    served on 127.0.0.1."""
    from app.render.engine_files import write_engine_files

    folder = tmp_path_factory.mktemp("browser-engine")
    write_engine_files(folder)
    (folder / "index.html").write_text(HARNESS)
    handler = functools.partial(QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".mjs": "text/javascript"}

    def log_message(self, *args):
        pass


def race_in_browser(chromium, site, lm, prompts: list[str], max_new: int):
    url = site
    page = chromium.new_page()
    page.set_default_timeout(600_000)
    refused = []

    def only_here(route):
        if urlparse(route.request.url).netloc != urlparse(url).netloc:
            refused.append(route.request.url)
            return route.abort()
        return route.continue_()

    page.route("**/*", only_here)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{url}/index.html")
    cases = [lm.encode_prompt(p) for p in prompts]
    config = {
        **{k: getattr(CONFIG, k) for k in ("window", "ngram", "guess", "pool", "tree", "window_seed")},
        "max_new_tokens": max_new,
    }
    got = page.evaluate(RACE, [cases, config, lm.max_positions, sorted(lm.eos_ids)])
    page.close()
    assert errors == [] and refused == [], (errors, refused)
    return cases, got


def assert_same_as_python(lm, cases, got, max_new):
    from lade_core import schema

    runs = iter(got["runs"])
    for ids in cases:
        for python in (autoregressive_generate(lm, ids, max_new), lookahead_generate(lm, ids, CONFIG, max_new)):
            js = next(runs)
            assert js["tokens"] == list(python.tokens), "the browser's tokens differ from the Python engine's"
            for a, b in zip(js["steps"], python.steps, strict=True):
                want = {k: v for k, v in schema.to_data(b).items() if k not in TIMES}
                assert {k: v for k, v in a.items() if k not in TIMES} == want


def test_the_browser_decodes_as_the_python_engine(chromium, site, lm, bench_prompts):
    prompt = next(p["prompt"] for p in bench_prompts if p["kind"] == "code")
    cases, got = race_in_browser(chromium, site, lm, [prompt], 8)
    assert_same_as_python(lm, cases, got, 8)


@pytest.mark.soak
def test_three_prompts_made_now_decode_in_the_browser_as_in_python(chromium, site, lm):
    prompts = prompts_made_now(3)
    cases, got = race_in_browser(chromium, site, lm, prompts, 48)
    assert_same_as_python(lm, cases, got, 48)
