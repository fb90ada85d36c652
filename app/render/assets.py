"""The renderer's files (app/static/): plain JS and CSS, shipped as they are, no build step, nothing fetched.

`head()` is what the page puts in its <head> (the CSS and the scripts, inline, so that the page, a Space and an
embed need no static route); `inline_bundle()` is the same for the standalone export.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from .views import VIEW_GROUPS, VIEW_IDS

STATIC = Path(__file__).resolve().parent.parent / "static"
# Load order: the basics, charts, views, words, lesson, then the stage that mounts them.
SCRIPTS = ("lade-core.js", "lade-charts.js", "lade-views.js", "lade-notes.js", "lade-lesson.js", "lade-pictures.js",
           "lade-stage.js")
STYLE = "lade.css"


@cache
def source(name: str) -> str:
    return (STATIC / name).read_text(encoding="utf-8")


def _script(text: str) -> str:
    # A script body can end the element only with "</script"; the renderer's sources never contain it.
    if "</script" in text.lower():
        raise ValueError("a renderer script contains '</script'")
    return f"<script>{text}</script>"


def _names() -> str:
    """The view ids and groups (views.py) for the renderer, which reads them as `Lade.VIEWS`."""
    views = json.dumps({"ids": VIEW_IDS, "groups": VIEW_GROUPS})
    return f"window.Lade = Object.assign(window.Lade || {{}}, {{ VIEWS: {views} }});"


def head() -> str:
    """<style> and <script> tags for the page's head."""
    return (f"<style>{source(STYLE)}</style>" + _script(_names())
            + "".join(_script(source(name)) for name in SCRIPTS))


def inline_bundle() -> tuple[str, str]:
    """(css, js) of the whole renderer, for a standalone page."""
    return source(STYLE), "\n".join([_names(), *(source(name) for name in SCRIPTS)])
