"""What bodies held back cost the server: N connections each post an 8 MiB body to `runs` but for its last byte.

    python -m scripts.body_flood --connections 40 --out out/body-flood.json

Starts the app without its model (one trusted proxy, so that each connection is its own client by X-Forwarded-For),
measures its resident memory before, while the connections hold their bodies back (after `--hold` seconds), and after
they close; and counts how each connection was answered (nothing while held, or a refusal before its body was read).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from app.process import NO_MODEL, answers, free_port, rss_mb
from lade_core.paths import ROOT

BODY = 8 * 2**20


def hold(port: int, client: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    head = (
        f"POST /runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {BODY}\r\n"
        f"X-Forwarded-For: {client}\r\n\r\n"
    )
    try:
        sock.sendall(head.encode() + b" " * (BODY - 1))
    except OSError:  # refused and closed before the body was sent
        pass
    return sock


def answered(sock: socket.socket) -> str:
    sock.setblocking(False)
    try:
        line = sock.recv(64).split(b"\r\n", 1)[0].decode("latin-1")
    except (BlockingIOError, OSError):
        return "nothing"
    return line.split(" ")[1] if line.startswith("HTTP/") else "closed"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=40)
    parser.add_argument("--hold", type=float, default=3.0)
    parser.add_argument("--out", default="out/body-flood.json")
    args = parser.parse_args()
    port = free_port()
    env = dict(os.environ, GRADIO_SERVER_PORT=str(port), HF_HUB_OFFLINE="1", LADE_TRUST_PROXY="1")
    server = subprocess.Popen([sys.executable, "-c", NO_MODEL], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        assert answers(f"http://127.0.0.1:{port}/", server, seconds=180), "the app did not start"
        time.sleep(2)
        before = rss_mb(server.pid)
        socks = [hold(port, f"10.8.{i // 250}.{i % 250}") for i in range(args.connections)]
        time.sleep(args.hold)
        held = rss_mb(server.pid)
        answers_ = [answered(s) for s in socks]
        for s in socks:
            s.close()
        time.sleep(3)
        after = rss_mb(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=20)
    result = {
        "command": "python -m scripts.body_flood " + " ".join(sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "connections": args.connections,
        "rss_mb": {"before": round(before, 1), "held": round(held, 1), "after_close": round(after, 1)},
        "held_minus_before_mb": round(held - before, 1),
        "after_minus_before_mb": round(after - before, 1),
        "answered_while_held": {a: answers_.count(a) for a in sorted(set(answers_))},
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
