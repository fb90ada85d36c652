"""Shared set-up of the app tests: offline hub, no analytics, and the recorded runs shipped in assets/runs/.

Imported by tests/test_views.py and tests/test_app_browser.py (not a pytest conftest, so it never touches the
engine tests' configuration).
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

from app.examples import load_recorded, recorded_files  # noqa: E402


def recorded_runs():
    """(name, RunTrace) of every shipped run."""
    return [(name, load_recorded(name)) for name in recorded_files()]
