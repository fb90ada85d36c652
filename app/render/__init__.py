"""Rendering for the browser: the run payload the renderer draws (`payload`), the renderer's files (`assets`), and
the standalone HTML export that embeds both (`export`)."""
