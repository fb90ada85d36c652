"""Lookahead Decoding Explorer, the web app: the page and its wiring (`ui`), its handlers (`events`), the few bytes
the server tells the page (`stage`), the runs the page pulls by handle (`store`), live races (`live`), the gallery
and its computed captions (`gallery`, `captions`), the public limits (`limits`), and the browser's renderer with
what it is given (`render/`, `static/`).

Nothing here runs the decoding itself; that is `lade_core`. The browser draws every view from a run's data.
"""
