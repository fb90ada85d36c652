"""A visitor opening a small saved run while other addresses post the largest run the limits allow, each a new file.

    python -m scripts.post_flood --flooders 3 --connections 4 --seconds 40 --out out/post-flood.json

Starts the app without its model (one trusted proxy: each client told apart by X-Forwarded-For, the per-client
limits on), then `--flooders` clients post `assets/bench/largest-run.json` (732 KB), each on `--connections`
connections at once, its title changed each time (a new file, so each is read), while a visitor posts a 31 KB trace
(a new title each time) once every four seconds. Reported: the visitor's times and statuses, and the flooders'
statuses. The posting rate (10 a minute per client) applies.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

from app.process import NO_MODEL, answers, free_port
from lade_core.paths import ROOT

LARGEST = ROOT / "assets" / "bench" / "largest-run.json"
SMALL = ROOT / "tests" / "hostile" / "base-greedy.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flooders", type=int, default=3)
    parser.add_argument("--connections", type=int, default=4, help="connections each flooder posts on at once")
    parser.add_argument("--seconds", type=float, default=40)
    parser.add_argument("--out", default="out/post-flood.json")
    args = parser.parse_args()
    port = free_port()
    env = dict(os.environ, GRADIO_SERVER_PORT=str(port), HF_HUB_OFFLINE="1", LADE_TRUST_PROXY="1")
    server = subprocess.Popen([sys.executable, "-c", NO_MODEL], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)  # fmt: skip
    url = f"http://127.0.0.1:{port}/runs"
    kind = {"Content-Type": "application/json"}
    flood: Counter = Counter()
    visits: list[tuple[float, int]] = []
    try:
        assert answers(f"http://127.0.0.1:{port}/", server, seconds=180), "the app did not start"
        small, doc = json.loads(SMALL.read_text(encoding="utf-8")), json.loads(LARGEST.read_text(encoding="utf-8"))
        end = time.monotonic() + args.seconds

        def flooder(k: int, c: int) -> None:
            with httpx.Client(timeout=300) as http:
                n = 0
                while time.monotonic() < end:
                    n += 1
                    doc_k = {**doc, "run": {**doc["run"], "title": f"flood {k} {c} {n}"}}
                    body = json.dumps(doc_k).encode()
                    status = http.post(url, content=body, headers={**kind, "X-Forwarded-For": f"10.6.0.{k}"})
                    flood[status.status_code] += 1
                    if status.status_code in (429, 503):
                        time.sleep(0.2)

        threads = [
            threading.Thread(target=flooder, args=(k, c), daemon=True)
            for k in range(1, args.flooders + 1)
            for c in range(args.connections)
        ]
        for t in threads:
            t.start()
        time.sleep(2)
        with httpx.Client(timeout=300) as http:
            while time.monotonic() < end:
                body = json.dumps({**small, "run": {**small["run"], "title": f"visit {len(visits)}"}}).encode()
                started = time.monotonic()
                answer = http.post(url, content=body, headers={**kind, "X-Forwarded-For": "10.6.1.1"})
                visits.append((round(time.monotonic() - started, 2), answer.status_code))
                time.sleep(4)
        for t in threads:
            t.join(timeout=300)
    finally:
        server.terminate()
        server.wait(timeout=20)
    result = {
        "command": "python -m scripts.post_flood " + " ".join(sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "visitor_s_and_status": visits,
        "visitor_slowest_s": max(s for s, _ in visits),
        "flooders_statuses": dict(flood),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
