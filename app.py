"""Start the Lookahead Decoding Explorer web app: `python app.py [--model HUB_ID_OR_FOLDER]`.

Wiring only: the page is `app.ui.build_demo`. Serves on 127.0.0.1:7860 unless GRADIO_SERVER_NAME / GRADIO_SERVER_PORT
say otherwise.
"""

import argparse
import os

from app.ui import LAUNCH_OPTIONS, build_demo


def main() -> None:
    parser = argparse.ArgumentParser(description="Lookahead Decoding Explorer")
    parser.add_argument("--model", default=None, help="hub id or local folder for live runs (default: embedded SmolLM2-135M-Instruct)")
    args = parser.parse_args()
    demo = build_demo(model=args.model)
    demo.queue(default_concurrency_limit=2)
    demo.launch(
        server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
        server_port=int(os.environ.get("GRADIO_SERVER_PORT", "7860")),
        **LAUNCH_OPTIONS,
    )


if __name__ == "__main__":
    main()
