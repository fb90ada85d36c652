"""Shared fixtures: the embedded model (loaded once per test session) and the benchmark prompts.

Tests never touch the hub and never send analytics.
"""

import json
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_PROMPTS = ROOT.parent / "shared" / "bench" / "prompts.jsonl"
PROMPTS_FILE = SHARED_PROMPTS if SHARED_PROMPTS.exists() else ROOT / "assets" / "prompts.jsonl"


@pytest.fixture(scope="session")
def lm():
    from lade_core import load_model

    return load_model()


@pytest.fixture(scope="session")
def bench_prompts():
    return [json.loads(line) for line in PROMPTS_FILE.read_text().splitlines() if line.strip()]
