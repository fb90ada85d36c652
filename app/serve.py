"""The app as `python app.py` serves it: its options, the page, the guard in front and the run routes beside it.

`main()` is what app.py runs. `launch(args, middleware=(), block=True)` is the same launch for a program that starts
the app in its own process (the route walk, `scripts/route_walk.py`, puts a recorder in front of the guard): the
extra middleware sits outside the guard and sees every request as it arrived.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from . import gallery, gradio_adapter, guard, isolation, limits, logs, page_policy, routes, runqueue, space, store
from .guard import trust_proxy_from_env
from .render.engine_files import served
from .store import STORE
from .ui import LAUNCH_OPTIONS, build_demo


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="Lookahead Decoding Explorer")
    p.add_argument(
        "--model",
        default=os.environ.get("LADE_MODEL") or None,
        help="hub id or local folder for live runs (default: $LADE_MODEL, else the embedded SmolLM2-135M-Instruct)",
    )
    p.add_argument(
        "--queue-size", type=int, default=limits.QUEUE_SIZE, help="most events waiting in Gradio's queue (not runs)"
    )
    p.add_argument(
        "--engine-queue",
        type=int,
        default=limits.ENGINE_WAITING,
        help="most runs waiting for the engine (an identical request joins a run and takes no place)",
    )
    p.add_argument(
        "--per-client",
        type=int,
        default=int(os.environ.get("LADE_PER_CLIENT", limits.PER_CLIENT)),
        help="engine jobs (Run, /generate, Auto) one client may have waiting or running; 0: no limit "
        "(default: $LADE_PER_CLIENT, else %(default)s)",
    )
    p.add_argument(
        "--trust-proxy",
        type=int,
        default=trust_proxy_from_env(),
        metavar="HOPS",
        help="the server is behind HOPS reverse proxies: a client is the X-Forwarded-For entry HOPS "
        "from the right, not the connecting address (default: $LADE_TRUST_PROXY, else 0)",
    )
    p.add_argument(
        "--runs-dir",
        default=os.environ.get("LADE_RUNS_DIR") or None,
        metavar="DIR",
        help="keep finished runs in DIR (an SQLite database), so their links work after a restart, within the "
        "same bounds as in memory; a Space's persistent storage is /data (default: $LADE_RUNS_DIR, else memory only)",
    )
    p.add_argument(
        "--no-browser-engine",
        action="store_true",
        help="leave out 'Race it in your browser' and the engine files it downloads (engine/, about 115 MB)",
    )
    return p


def launch(args: argparse.Namespace, middleware: tuple = (), block: bool = True, gate: dict | None = None):
    """Build the app for `args` (from `parser()`) and serve it; the Gradio Blocks (serving in a thread when
    `block` is False). `gate`: the guard's options beyond those `args` set."""
    if args.runs_dir:
        STORE.persist(Path(args.runs_dir))  # before the first run: links made before a restart open after it
    engine = None if args.no_browser_engine else served()  # (files by name, the page's boot.engine) or None
    runqueue.QUEUE.most_waiting = max(1, args.engine_queue)
    # every gallery run's view data, derived now in the background (the lesson's first), not for a class's first reader
    store.warm_gallery([gallery.by_role(role) for role in ("lookahead", "jacobi", "race") if gallery.by_role(role)])
    demo = build_demo(model=args.model, browser_engine=engine[1] if engine else None)
    # api_open=False: no engine call skips the queue through /run/<api> (a Space's default, made explicit here)
    demo.queue(default_concurrency_limit=2, max_size=args.queue_size + limits.FOLLOWERS, api_open=False)
    # uvicorn (as Gradio starts it) reads X-Forwarded-For from loopback peers and rewrites the client: a local process
    # would pick its identity for every per-client limit. The guard is the one reader (`--trust-proxy`).
    os.environ["FORWARDED_ALLOW_IPS"] = ""
    own = routes.routes(trust_proxy=args.trust_proxy, per_client=args.per_client, engine=engine[0] if engine else None)
    gate = guard.middleware(demo, trust_proxy=args.trust_proxy, per_client=args.per_client, own=own, **(gate or {}))
    demo.launch(
        server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
        server_port=int(os.environ.get("GRADIO_SERVER_PORT", "7860")),
        prevent_thread_lock=not block,
        app_kwargs={
            # the cross-origin-isolation headers on every answer, the guard's too (the race's threads: isolation.py);
            # what the page may run, and nosniff and no referrer on every answer (page_policy.py)
            "middleware": [
                *middleware,
                isolation.middleware(),
                page_policy.middleware(gradio_adapter.head_scripts(demo)),
                gate,
            ],
            "routes": own,  # every run at one address (before Gradio's own)
            "exception_handlers": routes.EXCEPTION_HANDLERS,  # a mistyped path gets a page, not raw JSON
        },
        **LAUNCH_OPTIONS,
    )
    return demo


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    logs.install()  # a refused request is one line in the log, a fault one traceback, the whole log bounded a minute
    space.prepare()  # on a Hugging Face Space: the model's GGUF and the browser engine's runtime, fetched and checked
    launch(args)
