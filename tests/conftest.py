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

NEEDS = {"lm": "model", "server": "server", "browser": "browser", "page": "browser", "chromium": "browser"}


def pytest_collection_modifyitems(items):
    for item in items:
        for fixture, mark in NEEDS.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(getattr(pytest.mark, mark))


@pytest.fixture(scope="session")
def lm():
    from lade_core import load_model

    return load_model()


@pytest.fixture(scope="session")
def bench_prompts():
    return load_prompts()
