"""The engine in the visitor's browser, end to end: headless Chromium loads onnxruntime-web's files, the project's
graph and the shipped GGUF from one local origin (every request elsewhere refused), rebuilds the weights, and decodes
with lade-engine.js over lade-forward.js; the tokens and step records must be the Python engine's on the same prompt
and settings, here with no renderer around it (the soak tier: a benchmark prompt, and three prompts generated at
test time; and one on WebGPU, through SwiftShader's software adapter where no GPU is there);
tests/test_site_browser.py races through the site's page in `make test`.
The page and the race are app/render/engine_page.py's (the benchmark's too)."""

import random
import time

import pytest

from app.process import CHROMIUM, CHROMIUM_ARGS
from app.render.engine_page import WEBGPU_ARGS, race, served_engine
from lade_core import schema
from lade_core.autoregressive import autoregressive_generate
from lade_core.config import LookaheadConfig
from lade_core.lookahead import lookahead_generate

CONFIG = LookaheadConfig(window=5, ngram=4, guess=5)
SETTINGS = {k: getattr(CONFIG, k) for k in ("window", "ngram", "guess", "pool", "tree", "window_seed")}
# what two engines' equal steps may differ in: times (measured, so never equal) and the CPU layout torch's forward
# ran on (the machine's, not a rule of the engine)
TIMES = {"forward_s", "overhead_s", "draft_s", "kernels"}


def prompts_made_now(n: int) -> list[str]:
    """Prompts no file holds: a task and its details drawn afresh each run (seeded by the clock, printed)."""
    seed = time.time_ns()
    rng = random.Random(seed)
    things = ["a stack", "a queue", "a linked list", "a binary tree", "a hash map", "a priority queue", "a trie"]
    langs = ["Python", "JavaScript", "Go", "Rust"]
    print(f"prompts seeded with {seed}")
    return [f"Write {rng.choice(things)} in {rng.choice(langs)} with {rng.randint(2, 5)} methods." for _ in range(n)]


@pytest.fixture(scope="module")
def url(lm, tmp_path_factory):
    with served_engine(tmp_path_factory.mktemp("browser-engine")) as address:
        yield address


def assert_same_as_python(chromium, url, lm, prompts: list[str], max_new: int, webgpu: bool = False) -> dict:
    cases = [lm.encode_prompt(p) for p in prompts]
    settings = {**SETTINGS, "max_new_tokens": max_new}
    got = race(chromium, url, cases, settings, lm.max_positions, lm.eos_ids, webgpu=webgpu)
    runs = iter(got["runs"])
    for ids in cases:
        for python in (autoregressive_generate(lm, ids, max_new), lookahead_generate(lm, ids, CONFIG, max_new)):
            js = next(runs)
            assert js["tokens"] == list(python.tokens), "the browser's tokens differ from the Python engine's"
            for a, b in zip(js["steps"], python.steps, strict=True):
                want = {k: v for k, v in schema.to_data(b).items() if k not in TIMES}
                assert {k: v for k, v in a.items() if k not in TIMES} == want
    return got


@pytest.mark.soak  # `make test` races through the page instead (tests/test_site_race_browser.py)
def test_the_browser_decodes_as_the_python_engine(chromium, url, lm, bench_prompts):
    assert_same_as_python(chromium, url, lm, [next(p["prompt"] for p in bench_prompts if p["kind"] == "code")], 8)


@pytest.mark.soak
def test_three_prompts_made_now_decode_in_the_browser_as_in_python(chromium, url, lm):
    assert_same_as_python(chromium, url, lm, prompts_made_now(3), 48)


@pytest.mark.soak
def test_the_webgpu_backend_decodes_as_the_python_engine(chromium, url, lm):
    """The WebGPU build of onnxruntime-web, as a browser with a GPU adapter loads it (lade-browser-race.js): the same
    tokens and step records. Here the adapter is SwiftShader's, on the CPU (about 10 s a forward), so four tokens.
    A second Chromium, with the GPU flags, from the session's Playwright (one Playwright per process: a second one
    inside the first's loop is refused)."""
    args = [a for a in CHROMIUM_ARGS if a != "--disable-gpu"] + WEBGPU_ARGS
    browser = chromium.browser_type.launch(executable_path=CHROMIUM, args=args)
    try:
        got = assert_same_as_python(browser, url.replace("index.html", "webgpu.html"), lm, prompts_made_now(1), 4, True)
    finally:
        browser.close()
    assert got["backend"].startswith("your GPU through WebGPU, experimental: ")
