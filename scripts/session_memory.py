"""The server's memory with many sessions each holding a large trace: the figure SECURITY.md states.

    python -m scripts.session_memory --trace assets/bench/largest-run.json --sessions 300 --out
    assets/bench/sessions.json
    python -m scripts.session_memory --trace assets/bench/largest-run.json --sessions 300 --distinct

Starts the app without the model (traces need none) and opens `--sessions` sessions through gradio_client, each
opening the trace as the page's "Open a saved run" does (`/open_upload`). gradio_client runs none of the page's
JavaScript: it never pulls the run, never opens it in a stage; what a session costs the server here is what it costs
whatever its client does. Per session the server keeps a few bytes of stage value and nothing of the run (the page
reads it at its address, `runs/<handle>.json`); the run's view data lives once in the shared, bounded `store.STORE`
(before 0.5 each session also kept the compressed run, `stage.Held`). With `--distinct` each session opens a
different run (the trace under another title), so the store fills to its bound and evicts instead of sharing one
entry. The sessions stay open; the server's resident memory is read before, after each hundred and at the end. One
run; numbers as measured here.
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

from app.process import NO_MODEL, answers, rss_mb  # noqa: E402
from lade_core.paths import ROOT


def variant(doc: dict, i: int, folder: Path) -> Path:
    """The trace under another title: another run, another handle, the same size."""
    doc = {**doc, "run": {**doc["run"], "title": f"{doc['run'].get('title') or 'run'} #{i}"}}
    path = folder / f"session-{i}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def main() -> int:
    from gradio_client import Client, handle_file

    from app import store

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", required=True)
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--distinct", action="store_true", help="each session opens a different run")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    trace = Path(args.trace)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, GRADIO_SERVER_PORT=str(port), HF_HUB_OFFLINE="1", GRADIO_ANALYTICS_ENABLED="False")
    server = subprocess.Popen(
        [sys.executable, "-c", NO_MODEL], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}/"
    doc = json.loads(trace.read_text(encoding="utf-8")) if args.distinct else None
    try:
        answers(url, server)
        clients, marks, values = [], {"start": rss_mb(server.pid)}, []
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(args.sessions):
                path = variant(doc, i, Path(tmp)) if doc is not None else trace
                client = Client(url, verbose=False)
                value = client.predict(handle_file(str(path)), api_name="/open_upload")
                values.append(len(json.dumps(value[0] if isinstance(value, (list, tuple)) else value)))
                clients.append(client)  # kept open: the session stays
                if doc is not None:
                    path.unlink()
                if (i + 1) % 100 == 0 or i + 1 == args.sessions:
                    marks[f"after_{i + 1}_sessions"] = rss_mb(server.pid)
                    print(f"{i + 1} sessions: RSS {marks[f'after_{i + 1}_sessions']:.0f} MB", flush=True)
        growth = marks[f"after_{args.sessions}_sessions"] - marks["start"]
        result = {
            "command": "python -m scripts.session_memory " + " ".join(sys.argv[1:]),
            "date": time.strftime("%Y-%m-%d"),
            "client": "gradio_client (runs none of the page's JavaScript)",
            "trace_bytes": trace.stat().st_size,
            "held_bytes_per_session": 0,  # a session holds no run: it lives in the store, by handle
            "distinct_runs": args.distinct,
            "sessions": args.sessions,
            "store_bound_mb": {"entries": store.MAX_ENTRIES, "bytes": round(store.MAX_BYTES / 2**20)},
            "largest_stage_value_bytes": max(values, default=0),
            "rss_mb": {k: round(v, 1) for k, v in marks.items()},
            "growth_mb_per_session": round(growth / max(args.sessions, 1), 3),
            "seconds": round(time.perf_counter() - t0, 1),
        }
        print(json.dumps(result, indent=1))
        if args.out:
            Path(args.out).write_text(json.dumps(result, indent=1), encoding="utf-8")
    finally:
        server.terminate()
        server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
