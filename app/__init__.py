"""Lookahead Decoding Explorer, the web app: Gradio layout and events (`ui`), pure views of traces (`views`),
the live-run bridge (`live`), playback state (`replay`) and the shipped runs and example prompts (`examples`).

Nothing here runs the decoding itself; that is `lade_core`. Views read `RunTrace`s only.
"""
