"""What one client hammering one door costs the log, and what a visitor's page load takes meanwhile.

    python -m scripts.refusal_log --seconds 60 --out out/refusal-log.json                  # unknown component calls
    python -m scripts.refusal_log --target all --seconds 30 --out out/flood-each.json      # every light event, route

Starts the app without its model (`app.process.NO_MODEL`, the public defaults, behind one trusted proxy so that the
flooder and the visitor are two clients, told apart by X-Forwarded-For), its output to a file; one client then sends
one kind of request, one after another, for `--seconds`, while a visitor (another client) loads the page (its HTML and
a gallery run at its address) once every five seconds. The targets: `component` (a component server function that
does not exist), the light events outside the queue (`arithmetic`: W/N/G's tokens per forward; `gallery`: a gallery
run opened; `wait`: the expected wait), the run routes (`run`: a run's payload; `trace`: its download; `replay`: its
HTML replay; `upload`: a trace file posted to `runs`), and `forwarded` (`config` with `X-Forwarded-Host: a:b:c`).
Reported per target: the requests sent and their statuses, the bytes the server wrote to its log (per minute), and
the visitor's load times (each, and the slowest). One connection at a time: a flood is bounded by the time asked.
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
WAIT_VALUES = ["Write a haiku about caches.", 7, 4, 7, 64, "prompt", 0.0, 1.0, 0, ["lookahead"]]


TARGETS = ("component", "arithmetic", "gallery", "wait", "run", "trace", "replay", "upload", "forwarded")


def requests_for(url: str, config: dict) -> dict:
    """target -> (method, path, keyword arguments) of the one request the flooder repeats."""
    ids = {d.get("api_name"): d["id"] for d in config["dependencies"]}
    predict = lambda fn, data: {"json": {"fn_index": ids[fn], "data": data, "session_hash": "flood"}}  # noqa: E731
    trace = (ROOT / "assets" / "runs" / f"{GALLERY_RUN}.json").read_bytes()
    return {
        "component": ("POST", "gradio_api/component_server", {"json": {"component_id": 99999, "fn_name": "ls"}}),
        "arithmetic": ("POST", "gradio_api/run/predict", predict("tokens_per_forward", [7, 4, 7])),
        "gallery": ("POST", "gradio_api/run/predict", predict("open_gallery", [GALLERY_RUN])),
        "wait": ("POST", "gradio_api/run/predict", predict("expected_wait", WAIT_VALUES)),
        "run": ("GET", f"runs/{GALLERY_RUN}.json", {}),
        "trace": ("GET", f"runs/{GALLERY_RUN}/trace.json", {}),
        "replay": ("GET", f"runs/{GALLERY_RUN}/replay.html", {}),
        "upload": ("POST", "runs", {"content": trace, "headers": {"content-type": "application/json"}}),
        "forwarded": ("GET", "config", {"headers": {"x-forwarded-host": "a:b:c"}}),
    }


def flood(url: str, log: Path, target: tuple, seconds: float) -> dict:
    """One client repeating `target` for `seconds` while another loads the page every five seconds."""
    method, path, kwargs = target
    kwargs = {**kwargs, "headers": {**kwargs.get("headers", {}), "x-forwarded-for": "10.0.0.1"}}
    before = log.stat().st_size
    statuses, loads = Counter(), []
    start = next_visit = time.monotonic()
    visiting = {"x-forwarded-for": "10.0.0.2"}
    with httpx.Client(timeout=30) as flooder, httpx.Client(timeout=60, headers=visiting) as visitor:
        while time.monotonic() - start < seconds:
            try:
                statuses[flooder.request(method, url + path, **kwargs).status_code] += 1
            except httpx.HTTPError:  # the server broke the connection off
                statuses["error"] += 1
            if time.monotonic() >= next_visit:
                t0 = time.monotonic()
                ok = visitor.get(url).status_code == visitor.get(f"{url}runs/{GALLERY_RUN}.json").status_code == 200
                loads.append(round(time.monotonic() - t0, 3) if ok else None)
                next_visit += 5.0
        elapsed = time.monotonic() - start
    time.sleep(1.0)
    written = log.stat().st_size - before
    return {
        "seconds": round(elapsed, 1),
        "requests": sum(statuses.values()),
        "statuses": {str(k): v for k, v in statuses.items()},
        "log_bytes": written,
        "log_bytes_per_minute": round(written * 60 / elapsed),
        "visitor_load_s": loads,
        "visitor_load_s_max": max((x for x in loads if x is not None), default=None),
        "visitor_failed": sum(x is None for x in loads),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="per target (at most 60)")
    parser.add_argument("--target", default="component", choices=[*TARGETS, "all"])
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    seconds = min(args.seconds, 60.0)
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    env = dict(os.environ, GRADIO_SERVER_PORT=str(port), HF_HUB_OFFLINE="1", GRADIO_ANALYTICS_ENABLED="False")
    env["LADE_TRUST_PROXY"] = "1"
    results = {}
    with tempfile.NamedTemporaryFile("w+b", suffix=".log") as log:
        server = subprocess.Popen([sys.executable, "-c", NO_MODEL], cwd=ROOT, env=env, stdout=log, stderr=log)
        try:
            if not answers(url, server, seconds=180):
                raise SystemExit("the app did not start")
            targets = requests_for(url, httpx.get(url + "config", timeout=30).json())
            for name in TARGETS if args.target == "all" else [args.target]:
                results[name] = flood(url, Path(log.name), targets[name], seconds)
                print(name, json.dumps({k: v for k, v in results[name].items() if k != "visitor_load_s"}))
        finally:
            server.terminate()
            server.wait(timeout=20)
    result = {
        "command": "python -m scripts.refusal_log " + " ".join(sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d"),
        **(results[args.target] if args.target != "all" else {"targets": results}),
    }
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
