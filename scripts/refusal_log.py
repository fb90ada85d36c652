"""What one client refused over and over costs the log, and what a visitor's page load takes meanwhile.

    python -m scripts.refusal_log --seconds 60 --out out/refusal-log.json

Starts the app without its model (`app.process.NO_MODEL`, the public defaults), its output to a file; one client
then calls a component server function that does not exist (`/gradio_api/component_server`, an unknown
`component_id`), one request after another, for `--seconds`, while a visitor loads the page (its HTML and a gallery
run at its address) once every five seconds. Reported: the requests sent and their statuses, the bytes the server
wrote to its log in that time (per minute), and the visitor's load times (each, and the slowest). One client, one
connection at a time: a flood is bounded by the time asked.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx

from app.process import NO_MODEL, answers, free_port
from lade_core.paths import ROOT

GALLERY_RUN = "code-class-W7N4G7"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    env = dict(os.environ, GRADIO_SERVER_PORT=str(port), HF_HUB_OFFLINE="1", GRADIO_ANALYTICS_ENABLED="False")
    with tempfile.NamedTemporaryFile("w+b", suffix=".log") as log:
        server = subprocess.Popen([sys.executable, "-c", NO_MODEL], cwd=ROOT, env=env, stdout=log, stderr=log)
        try:
            if not answers(url, server, seconds=180):
                raise SystemExit("the app did not start")
            before = Path(log.name).stat().st_size
            statuses, loads = Counter(), []
            body = {"component_id": 99999, "fn_name": "ls", "session_hash": "flood", "data": None}
            start = next_visit = time.monotonic()
            with httpx.Client(timeout=30) as flood, httpx.Client(timeout=60) as visitor:
                while time.monotonic() - start < args.seconds:
                    statuses[flood.post(url + "gradio_api/component_server", json=body).status_code] += 1
                    if time.monotonic() >= next_visit:
                        t0 = time.monotonic()
                        ok = visitor.get(url).status_code == visitor.get(f"{url}runs/{GALLERY_RUN}.json").status_code
                        loads.append(round(time.monotonic() - t0, 3) if ok else None)
                        next_visit += 5.0
                elapsed = time.monotonic() - start
            time.sleep(1.0)
            written = Path(log.name).stat().st_size - before
        finally:
            server.terminate()
            server.wait(timeout=20)
    result = {
        "command": "python -m scripts.refusal_log " + " ".join(sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d"),
        "seconds": round(elapsed, 1),
        "requests": sum(statuses.values()),
        "statuses": {str(k): v for k, v in statuses.items()},
        "log_bytes": written,
        "log_bytes_per_minute": round(written * 60 / elapsed),
        "visitor_load_s": loads,
        "visitor_load_s_max": max((x for x in loads if x is not None), default=None),
    }
    print(json.dumps(result, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
