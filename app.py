"""Start the Lookahead Decoding Explorer web app: `python app.py [--model HUB_ID_OR_FOLDER]`.

Wiring only (`app.serve`): the page is `app.ui.build_demo`. Serves on 127.0.0.1:7860 unless GRADIO_SERVER_NAME /
GRADIO_SERVER_PORT say otherwise. The model is the operator's choice (`--model`, else LADE_MODEL, else the embedded
default), never the visitor's. The queue holds at most `--queue-size` waiting events (limits.QUEUE_SIZE); one more is
told it is full. The page's light events (the W/N/G arithmetic, a gallery run, the expected wait) answer outside it
(`app.ui`). Every run is also at one plain address beside the page, `runs/<handle>.json` (`app.routes`), which the page
reads. The files of the engine that races in the visitor's browser are at engine/ (written once into the cache folder;
`--no-browser-engine` leaves them and the page's "Race it in your browser" out). Every request passes `app.guard`
first (the routes it answers, bodies, arguments, engine jobs per client: `--per-client`; `--trust-proxy` behind a
reverse proxy, as on a Hugging Face Space: set LADE_TRUST_PROXY there).
"""

from app.serve import main

if __name__ == "__main__":
    main()
