"""Shared fixtures: the embedded model (loaded once per test session) and the benchmark prompts.

Tests never touch the hub and never send analytics. Tests are marked by what they need: `model` (the language
model), `server` (the app in a subprocess), `browser` (headless Chromium); `make test-fast` runs the rest. A test that
uses one of those fixtures without its mark is given the mark here, so the fast tier can never load the model.
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

from lade_core.measure.prompts import load_prompts  # noqa: E402

# Property tests: 150 examples each in a full run, 40 in `make test-fast` (`--hypothesis-profile=quick`).
settings.register_profile("thorough", max_examples=150)
settings.register_profile("quick", max_examples=40)
settings.load_profile("thorough")

REFERENCE_TOKENS = 64  # the exactness tests' length (every setting on every prompt: `make test-soak`)
PAIRWISE_TOKENS = 32  # `make test`'s pairwise cases (`pairwise`): past the first steps, where the pool feeds candidates
NEEDS = {
    "lm": "model",
    "mixed_lm": "model",
    "packed_lm": "model",  # tests/test_checkpoint.py: the model with its linears packed
    "converted": "model",  # tests/test_gguf_weights.py: the embedded model's GGUF and its converted weights
    "greedy": "model",
    "model_server": "model",
    "server": "server",
    "page_server": "server",
    "browser": "browser",
    "page": "browser",
    "chromium": "browser",
}


def pytest_collection_modifyitems(items):
    for item in items:
        for fixture, mark in NEEDS.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(getattr(pytest.mark, mark))
    seed = os.environ.get("LADE_SHUFFLE")
    if seed:  # a test that passes only after another has run fails here (the same seed in every xdist worker)
        import random

        random.Random(int(seed)).shuffle(items)


def pytest_report_header():
    seed = os.environ.get("LADE_SHUFFLE")
    return f"tests shuffled with LADE_SHUFFLE={seed} (run again with it to repeat the order)" if seed else None


@pytest.fixture(scope="session")
def lm():
    from lade_core import load_model

    return load_model()


@pytest.fixture(scope="session")
def mixed_lm():
    """The model with every CPU layout and a plan that cycles through them by width (stock for one token, packed for
    two, transposed for three, stock for four, ...), so that greedy's steps and lookahead's run on different matrix
    routines whatever plan this machine measured (the session's `lm` has this machine's own); `lm` itself where
    oneDNN's packing is missing."""
    from dataclasses import replace

    from lade_core import kernels, load_model
    from lade_core.kernel_choice import KernelPlan
    from lade_core.trace import CPU_LAYOUTS

    plain = load_model(cpu_kernels="stock")
    if not kernels.packing_available():
        return plain
    switch = kernels.layered_linears(plain.model)
    plan = KernelPlan(tuple(CPU_LAYOUTS[(w - 1) % len(CPU_LAYOUTS)] for w in range(1, 65)))
    return replace(plain, kernels=plan.label, plan=plan, switch=switch)


@pytest.fixture(scope="session")
def page_server():
    """(url, process) of the app without its model, one for the session: the pages, embeds, uploads and the hostile
    corpus need no model (each module's measurements are its own)."""
    from conftest_app import no_model_app

    with no_model_app("app-pages-test.log") as (url, proc):
        yield url, proc


@pytest.fixture(scope="session")
def chromium():
    """One Chromium for the session; each test opens its own pages (a fresh context each)."""
    from conftest_app import chromium_browser

    with chromium_browser() as browser:
        yield browser


@pytest.fixture(scope="session")
def bench_prompts():
    return load_prompts()


@pytest.fixture(scope="session")
def greedy(lm, bench_prompts, tmp_path_factory):
    """greedy(prompt_id, n): the greedy reference's first n new tokens for a benchmark prompt, decoded once per test
    run (at least REFERENCE_TOKENS; a shorter answer is a prefix, since greedy decoding is deterministic) and shared
    by the run's worker processes through a file per prompt under the run's temporary folder, each under a lock."""
    import json

    from filelock import FileLock

    from lade_core import autoregressive_generate

    prompts = {p["id"]: p["prompt"] for p in bench_prompts}
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    shared = tmp_path_factory.getbasetemp()
    shared = (shared.parent if worker else shared) / "greedy-reference"  # xdist's workers share the parent
    shared.mkdir(exist_ok=True)

    def tokens(prompt_id: str, n: int) -> tuple[int, ...]:
        path = shared / f"{prompt_id}.json"
        with FileLock(f"{path}.lock"):
            have = json.loads(path.read_text()) if path.exists() else None
            if have is None or (have["n"] < n and len(have["tokens"]) == have["n"]):  # none yet, or too short
                wanted = max(n, REFERENCE_TOKENS)
                got = autoregressive_generate(lm, lm.encode_prompt(prompts[prompt_id]), wanted).tokens
                have = {"n": wanted, "tokens": list(got)}
                path.write_text(json.dumps(have))
        return tuple(have["tokens"][:n])

    return tokens


def pairwise(configs: list, prompts: list, each: int = 2) -> list[tuple]:
    """Each setting with `each` prompts, the prompts taken in turn (with seven settings, every prompt meets one):
    the exactness checks of `make test` (every setting on every prompt runs in `make test-soak`)."""
    return [(c, prompts[(each * i + j) % len(prompts)]) for i, c in enumerate(configs) for j in range(each)]


def case_id(value) -> str:
    """A readable test id for a pairwise case: a prompt by its id, a (W, N, G, pool) setting as W7N4G7-paper."""
    if isinstance(value, dict):
        return value["id"]
    return "W{}N{}G{}-{}".format(*value) if isinstance(value, tuple) else str(value)
