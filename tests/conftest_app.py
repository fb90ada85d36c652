"""Shared set-up of the app tests: offline hub, no analytics, and the recorded runs shipped in assets/runs/.

Imported by the app tests (not a pytest conftest, so it never touches the engine tests' configuration). Also the one
way the tests start the app: `serve_app(...)` runs it in a subprocess on a free port and waits until it answers.
"""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

from app.examples import load_recorded, recorded_files  # noqa: E402


def recorded_runs():
    """(name, RunTrace) of every shipped run."""
    return [(name, load_recorded(name)) for name in recorded_files()]


ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve_app(command: list[str], log_name: str, **env):
    """Run `python <command>` from the repo root on a free port; yield (url, process) once the page answers."""
    port = free_port()
    env = dict(os.environ, GRADIO_SERVER_PORT=str(port), GRADIO_SERVER_NAME="127.0.0.1", **env)
    (ROOT / "out").mkdir(exist_ok=True)
    with open(ROOT / "out" / log_name, "w") as log:
        proc = subprocess.Popen([sys.executable, *command], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}/"
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(url, timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    proc.kill()
                    pytest.fail(f"the app did not start (see out/{log_name})")
                time.sleep(0.5)
        try:
            yield url, proc
        finally:
            proc.terminate()
            proc.wait(timeout=20)
