"""The server's memory with many sessions each holding a large trace: the figure SECURITY.md states.

    python -m scripts.session_memory --trace assets/bench/largest-run.json --sessions 300 --out assets/bench/sessions.json

Starts the app without the model (traces need none), opens `--sessions` sessions through gradio_client, each opening
the trace as the page's "Open a saved run" does and then acknowledging it as the page does once it has drawn the run
(`release_stage`), keeps them open, and reads the server's resident memory before,
after each hundred and at the end, then after the temp files' size. One run; numbers as measured on this machine.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from lade_core.paths import ROOT

# `python -c NO_MODEL`: the app as `python app.py` starts it, without the bundled model (traces need none)
NO_MODEL = ("import runpy, sys; import lade_core.loading as loading; loading.bundled_gguf = lambda: None; "
            "sys.argv = ['app.py']; runpy.run_path('app.py', run_name='__main__')")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def main() -> int:
    from gradio_client import Client, handle_file

    from app import files

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", required=True)
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, GRADIO_SERVER_PORT=str(port), HF_HUB_OFFLINE="1", GRADIO_ANALYTICS_ENABLED="False")
    server = subprocess.Popen([sys.executable, "-c", NO_MODEL], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(url, timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        clients, marks = [], {"start": rss_mb(server.pid)}
        t0 = time.perf_counter()
        for i in range(args.sessions):
            client = Client(url, verbose=False)
            client.predict(handle_file(args.trace), api_name="/open_upload")
            client.predict(api_name="/release_stage")  # what the page does once it has drawn the run
            clients.append(client)
            if (i + 1) % 100 == 0 or i + 1 == args.sessions:
                marks[f"after_{i + 1}_sessions"] = rss_mb(server.pid)
                print(f"{i + 1} sessions: RSS {marks[f'after_{i + 1}_sessions']:.0f} MB", flush=True)
        temp = sum(f.stat().st_size for f in files.FOLDER.rglob("*") if f.is_file()) if files.FOLDER.exists() else 0
        result = {"command": "python -m scripts.session_memory " + " ".join(sys.argv[1:]),
                  "date": time.strftime("%Y-%m-%d"), "trace_bytes": Path(args.trace).stat().st_size,
                  "sessions": args.sessions, "rss_mb": {k: round(v, 1) for k, v in marks.items()},
                  "seconds": round(time.perf_counter() - t0, 1), "app_temp_folder_bytes": temp}
        print(json.dumps(result, indent=1))
        if args.out:
            Path(args.out).write_text(json.dumps(result, indent=1), encoding="utf-8")
    finally:
        server.terminate()
        server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
