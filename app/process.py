"""The app as a process other programs start and watch (the tests, the memory and load scripts): a free port, the
command that starts it without its bundled model, waiting until it answers, and its resident memory."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from lade_core.paths import ROOT

# `python -c NO_MODEL`: the app as `python app.py` starts it, without the bundled model (traces need none)
NO_MODEL = (
    "import runpy, sys; import lade_core.checkpoint as checkpoint; checkpoint.bundled_gguf = lambda: None; "
    "sys.argv = ['app.py']; runpy.run_path('app.py', run_name='__main__')"
)


CHROMIUM = "/usr/bin/chromium"  # Debian's, under Playwright (tests, and the scripts that measure the browser)
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(url: str, proc=None, seconds: float = 120) -> bool:
    """Wait until `url` answers an HTTP GET (a server just started); False if `proc` exited or time ran out."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2)
            return True
        except OSError:
            if proc is not None and proc.poll() is not None:
                return False
            time.sleep(0.5)
    return False


def rss_mb(pid: int) -> float:
    """A process's resident memory, in MiB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def start_server(
    env_extra: dict | None = None, args: tuple = (), code: str | None = None
) -> tuple[subprocess.Popen, str]:
    """The app with its model on a free port, once it answers (`python app.py`, or `python -c code`); (process,
    url)."""
    port = free_port()
    env = dict(
        os.environ,
        GRADIO_SERVER_PORT=str(port),
        HF_HUB_OFFLINE="1",
        GRADIO_ANALYTICS_ENABLED="False",
        OMP_NUM_THREADS="1",
        **(env_extra or {}),
    )
    command = ["-c", code, *args] if code else ["app.py", *args]
    server = subprocess.Popen(
        [sys.executable, *command], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}/"
    if answers(url, server, seconds=240):
        return server, url
    server.kill()
    raise RuntimeError("the app did not start")
