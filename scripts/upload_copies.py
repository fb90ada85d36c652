"""What one visitor's opened file, its download and its export write to disk, against the file's size.

    python -m scripts.upload_copies --trace assets/bench/largest-run.json

Starts the app without its model (traces need none) with a temp folder of its own, opens the trace as "Open a saved
run" does (posted to `runs`, app/routes.py), then downloads its trace file and its HTML replay at the run's address
(`runs/<handle>/trace.json`, `runs/<handle>/replay.html`), and lists every file each step added to the temp folder
(Gradio's uploads and cache), with the total as a multiple of the trace's size.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from app.process import NO_MODEL, answers
from lade_core.paths import ROOT


def files(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_size for p in folder.rglob("*") if p.is_file()}


def main() -> int:
    import httpx

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default="assets/bench/largest-run.json")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp, socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        folder = Path(temp)
        env = dict(
            os.environ,
            GRADIO_SERVER_PORT=str(port),
            HF_HUB_OFFLINE="1",
            GRADIO_ANALYTICS_ENABLED="False",
            GRADIO_TEMP_DIR=temp,
            TMPDIR=temp,
        )
        server = subprocess.Popen(
            [sys.executable, "-c", NO_MODEL], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        url = f"http://127.0.0.1:{port}/"
        try:
            answers(url, server)
            size = Path(args.trace).stat().st_size
            before = files(folder)
            posted = httpx.post(
                url + "runs",
                content=Path(args.trace).read_bytes(),
                headers={"Content-Type": "application/json"},
                timeout=120,
            )
            handle = posted.raise_for_status().json()["handle"]
            uploaded = files(folder)
            for name in ("trace.json", "replay.html"):
                httpx.get(f"{url}runs/{handle}/{name}", timeout=120).raise_for_status()
            exported = files(folder)
        finally:
            server.terminate()
            server.wait(timeout=30)
    steps = {
        "upload": {k: v for k, v in uploaded.items() if k not in before and v},
        "export": {k: v for k, v in exported.items() if k not in uploaded and v},
    }
    result = {
        "command": "python -m scripts.upload_copies " + " ".join(sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d"),
        "trace_bytes": size,
        **{f"{k}_files": v for k, v in steps.items()},
        **{f"{k}_x": round(sum(v.values()) / size, 2) for k, v in steps.items()},
        "total_x": round(sum(sum(v.values()) for v in steps.values()) / size, 2),
    }
    print(json.dumps(result, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
