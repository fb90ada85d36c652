"""Start the Lookahead Decoding Explorer web app: `python app.py [--model HUB_ID_OR_FOLDER]`.

Wiring only: the page is `app.ui.build_demo`. Serves on 127.0.0.1:7860 unless GRADIO_SERVER_NAME / GRADIO_SERVER_PORT
say otherwise. The model is the operator's choice (`--model`, else LADE_MODEL, else the embedded default), never the
visitor's. The queue holds at most `--queue-size` waiting events (limits.QUEUE_SIZE); one more is told it is full.
"""

import argparse
import os
import sys

from app import limits
from app.logs import bounded
from app.ui import LAUNCH_OPTIONS, build_demo


def main() -> None:
    parser = argparse.ArgumentParser(description="Lookahead Decoding Explorer")
    parser.add_argument("--model", default=os.environ.get("LADE_MODEL") or None,
                        help="hub id or local folder for live runs (default: $LADE_MODEL, else the embedded "
                             "SmolLM2-135M-Instruct)")
    parser.add_argument("--queue-size", type=int, default=limits.QUEUE_SIZE, help="most events waiting in the queue")
    args = parser.parse_args()
    sys.stdout, sys.stderr = bounded(sys.stdout), bounded(sys.stderr)  # a refused request is not logged whole
    demo = build_demo(model=args.model)
    demo.queue(default_concurrency_limit=2, max_size=args.queue_size)
    demo.launch(
        server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
        server_port=int(os.environ.get("GRADIO_SERVER_PORT", "7860")),
        **LAUNCH_OPTIONS,
    )


if __name__ == "__main__":
    main()
