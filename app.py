"""Start the Lookahead Decoding Explorer web app: `python app.py [--model HUB_ID_OR_FOLDER]`.

Wiring only: the page is `app.ui.build_demo`. Serves on 127.0.0.1:7860 unless GRADIO_SERVER_NAME / GRADIO_SERVER_PORT
say otherwise. The model is the operator's choice (`--model`, else LADE_MODEL, else the embedded default), never the
visitor's. The queue holds at most `--queue-size` waiting events (limits.QUEUE_SIZE); one more is told it is full.
The page's light events (its load, the W/N/G arithmetic, a gallery run, its "opened") answer outside it (`app.ui`).
Every run is also at one plain address beside the page, `runs/<handle>.json` (`app.routes`), which the page reads.
The files of the engine that races in the visitor's browser are at engine/ (written once into the cache folder;
`--no-browser-engine` leaves them and the page's "Race it in your browser" out).
Every request passes `app.guard` first (bodies, uploads, arguments, engine jobs per client: `--per-client`;
`--trust-proxy` behind a reverse proxy, as on a Hugging Face Space: set LADE_TRUST_PROXY there).
"""

import argparse
import os
import sys

from app import guard, limits, routes
from app.guard import trust_proxy_from_env
from app.logs import bounded
from app.render.engine_files import served
from app.ui import LAUNCH_OPTIONS, build_demo


def main() -> None:
    parser = argparse.ArgumentParser(description="Lookahead Decoding Explorer")
    parser.add_argument(
        "--model",
        default=os.environ.get("LADE_MODEL") or None,
        help="hub id or local folder for live runs (default: $LADE_MODEL, else the embedded SmolLM2-135M-Instruct)",
    )
    parser.add_argument("--queue-size", type=int, default=limits.QUEUE_SIZE, help="most events waiting in the queue")
    parser.add_argument(
        "--per-client",
        type=int,
        default=int(os.environ.get("LADE_PER_CLIENT", limits.PER_CLIENT)),
        help="engine jobs (Run, /generate, Auto) one client may have waiting or running; 0: no limit "
        "(default: $LADE_PER_CLIENT, else %(default)s)",
    )
    parser.add_argument(
        "--trust-proxy",
        type=int,
        default=trust_proxy_from_env(),
        metavar="HOPS",
        help="the server is behind HOPS reverse proxies: a client is the X-Forwarded-For entry HOPS "
        "from the right, not the connecting address (default: $LADE_TRUST_PROXY, else 0)",
    )
    parser.add_argument(
        "--no-browser-engine",
        action="store_true",
        help="leave out 'Race it in your browser' and the engine files it downloads (engine/, about 115 MB)",
    )
    args = parser.parse_args()
    sys.stdout, sys.stderr = bounded(sys.stdout), bounded(sys.stderr)  # a refused request is one line in the log
    engine = None if args.no_browser_engine else served()  # (files by name, the page's boot.engine) or None
    demo = build_demo(model=args.model, browser_engine=engine[1] if engine else None)
    # api_open=False: no engine call skips the queue through /run/<api> (a Space's default, made explicit here)
    demo.queue(default_concurrency_limit=2, max_size=args.queue_size, api_open=False)
    demo.launch(
        server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
        server_port=int(os.environ.get("GRADIO_SERVER_PORT", "7860")),
        app_kwargs={
            "middleware": [guard.middleware(demo, trust_proxy=args.trust_proxy, per_client=args.per_client)],
            # every run at one address (before Gradio's own)
            "routes": routes.routes(
                trust_proxy=args.trust_proxy, per_client=args.per_client, engine=engine[0] if engine else None
            ),
            "exception_handlers": routes.EXCEPTION_HANDLERS,  # a mistyped path gets a page, not raw JSON
        },
        **LAUNCH_OPTIONS,
    )


if __name__ == "__main__":
    main()
