"""The server's memory with many visitors each opening a large trace: the figure SECURITY.md states.

    python -m scripts.session_memory --trace assets/bench/largest-run.json --visitors 300 --out
    assets/bench/sessions.json
    python -m scripts.session_memory --trace assets/bench/largest-run.json --visitors 300 --distinct

Starts the app without the model (traces need none), behind one trusted proxy hop (LADE_TRUST_PROXY=1, so each
visitor is counted by its own X-Forwarded-For address), and has `--visitors` visitors each open the trace as the page's
"Open a saved run" does: posted to `runs` (app/routes.py), answered with its handle. Nothing runs the page's
JavaScript: no run is pulled or drawn; what a visitor costs the server here is what it costs whatever its client
does. The server keeps the run's view data once in the shared, bounded `store.STORE` and nothing per visitor (before
0.5 each Gradio session also kept the compressed run, `stage.Held`; before 0.6 a file was opened through Gradio's
upload and a queued event). With `--distinct` each visitor opens a different run (the trace under another title), so
the store fills to its bound and evicts instead of sharing one entry. The server's resident memory is read before,
after each hundred and at the end. One run; numbers as measured here.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from app.process import NO_MODEL, rss_mb, start_server  # noqa: E402


def variant(doc: dict, i: int) -> bytes:
    """The trace under another title: another run, another handle, the same size."""
    return json.dumps({**doc, "run": {**doc["run"], "title": f"{doc['run'].get('title') or 'run'} #{i}"}}).encode()


def main() -> int:
    import httpx

    from app import limits

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", required=True)
    parser.add_argument("--visitors", type=int, default=300)
    parser.add_argument("--distinct", action="store_true", help="each visitor opens a different run")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    trace = Path(args.trace)
    # each visitor is counted by its own X-Forwarded-For address, as behind one trusted proxy
    server, url = start_server({"LADE_TRUST_PROXY": "1"}, code=NO_MODEL)
    doc = json.loads(trace.read_text(encoding="utf-8")) if args.distinct else None
    try:
        marks, answers_bytes = {"start": rss_mb(server.pid)}, []
        t0 = time.perf_counter()
        same = trace.read_bytes()
        for i in range(args.visitors):
            posted = httpx.post(
                url + "runs",
                content=variant(doc, i) if doc is not None else same,
                headers={
                    "Content-Type": "application/json",
                    "X-Forwarded-For": f"10.{i >> 16}.{(i >> 8) & 255}.{i & 255}",
                },
                timeout=120,
            )
            posted.raise_for_status()
            answers_bytes.append(len(posted.content))
            if (i + 1) % 100 == 0 or i + 1 == args.visitors:
                marks[f"after_{i + 1}_visitors"] = rss_mb(server.pid)
                print(f"{i + 1} visitors: RSS {marks[f'after_{i + 1}_visitors']:.0f} MB", flush=True)
        growth = marks[f"after_{args.visitors}_visitors"] - marks["start"]
        result = {
            "command": "python -m scripts.session_memory " + " ".join(sys.argv[1:]),
            "date": time.strftime("%Y-%m-%d"),
            "client": "httpx, posting to runs (runs none of the page's JavaScript)",
            "trace_bytes": trace.stat().st_size,
            "distinct_runs": args.distinct,
            "visitors": args.visitors,
            "store_bound_mb": {"entries": limits.STORE_RUNS, "bytes": round(limits.STORE_BYTES / 2**20)},
            "largest_answer_bytes": max(answers_bytes, default=0),
            "rss_mb": {k: round(v, 1) for k, v in marks.items()},
            "growth_mb_per_visitor": round(growth / max(args.visitors, 1), 3),
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
