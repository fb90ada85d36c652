"""The renderer's files (app/static/): plain JS and CSS, shipped as they are, no build step, nothing fetched.

`head(boot)` is what the page puts in its <head> (the CSS, the boot data and the scripts, inline, so that the page,
a Space and an embed need no static route); `inline_bundle()` is the same for the standalone export and the static
site. Scripts load in `SCRIPTS` order, each after every script whose module it reads (tests/test_structure.py
builds the graph); each adds one module to `window.Lade`.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

STATIC = Path(__file__).resolve().parent.parent / "static"
SCRIPTS = (
    "lade-constants.js",
    "lade-core.js",
    "lade-theme.js",
    "lade-run.js",
    "lade-charts.js",
    "lade-curves.js",
    "lade-lab.js",
    "lade-notes.js",
    "lade-race-keep.js",
    "lade-links.js",
    "lade-chapter-speed.js",
    "lade-chapter-numerics.js",
    "lade-chapter-relatives.js",
    "lade-lesson.js",
    "lade-race-words.js",
    "lade-views.js",
    "lade-step-views.js",
    "lade-mask.js",
    "lade-browser-race.js",
    "lade-slide.js",
    "lade-lesson-view.js",
    "lade-pictures.js",
    "lade-page.js",
    "lade-layout.js",
    "lade-sources.js",
    "lade-address.js",
    "lade-print.js",
    "lade-present.js",
    "lade-share.js",
    "lade-keys.js",
    "lade-focus.js",
    "lade-host.js",
    "lade-frame.js",
    "lade-stage.js",
    "lade-handoff.js",
)
STYLE = "lade.css"


@cache
def source(name: str) -> str:
    return (STATIC / name).read_text(encoding="utf-8")


def script_json(data) -> str:
    """JSON safe inside a <script> element: no `<`, `>` or `&` survives, so neither `</script>` nor `<!--` can."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _script(text: str) -> str:
    # A script body can end the element only with "</script"; the renderer's sources never contain it.
    if "</script" in text.lower():
        raise ValueError("a renderer script contains '</script'")
    return f"<script>{text}</script>"


def boot_tag(boot: dict) -> str:
    """The boot data as a JSON <script> element (the export and the static site: pages this project writes)."""
    return f'<script type="application/json" id="lade-boot">{script_json(boot)}</script>'


def head(boot: dict) -> str:
    """<style>, the boot data and the <script> tags, for the Gradio page's head. Gradio re-creates each head script
    as a plain script (dropping its type and id), so there the boot data is a script that sets `Lade.boot`."""
    boot_script = f"window.Lade = Object.assign(window.Lade || {{}}, {{ boot: {script_json(boot)} }});"
    return f"<style>{source(STYLE)}</style>" + _script(boot_script) + "".join(_script(source(name)) for name in SCRIPTS)


def inline_bundle() -> tuple[str, str]:
    """(css, js) of the whole renderer, for a standalone page."""
    return source(STYLE), "\n".join(source(name) for name in SCRIPTS)
