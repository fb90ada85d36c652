"""Standalone HTML replay of a run: one file with the renderer, its CSS and the run, that opens from disk offline.

It is the page's own renderer (app/static/*.js, the same stage and views, with every view, the explanations and the
honest note), mounted on one run with no server; a Content-Security-Policy forbids any request. The run travels as
JSON inside a <script type="application/json"> element, escaped so that no `<`, `>` or `&` in a token can end it,
and is only ever put on the page as text. `export_html(trace, out)` loads a saved trace with the strict loader first.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from lade_core import RunTrace, parse_run

from .assets import inline_bundle
from .payload import payload

CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; "
       "font-src data:; connect-src 'none'")


def script_json(data) -> str:
    """JSON safe inside a <script> element: no `<`, `>` or `&` survives, so neither `</script>` nor `<!--` can."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_html(run: RunTrace, name: str | None = None) -> str:
    """The whole self-contained page for `run`."""
    css, js = inline_bundle()
    title = html.escape(run.title or "Lookahead decoding replay")
    boot = ("const data = JSON.parse(document.getElementById('lade-run').textContent);"
            "window.Lade.mountStandalone(document.getElementById('lade-host'), data, "
            f"{script_json(name or run.title or 'run')});")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{title}</title>\n<style>body {{ margin: 14px 18px; background: #fff; }}\n{css}</style>\n"
        "</head>\n<body>\n"
        "<!-- A recorded run of the Lookahead Decoding Explorer (lookahead decoding, Fu et al., ICML 2024), replayed "
        "by the explorer's own renderer. Everything is inline; nothing is fetched. -->\n"
        "<div id=\"lade-host\"></div>\n"
        f"<script type=\"application/json\" id=\"lade-run\">{script_json(payload(run))}</script>\n"
        f"<script>{js}</script>\n<script>{boot}</script>\n</body>\n</html>\n"
    )


def export_html(trace_path: Path, out_path: Path) -> None:
    """Load the trace at `trace_path` (strictly) and write its replay page to `out_path`."""
    run = parse_run(Path(trace_path).read_bytes())
    Path(out_path).write_text(render_html(run, Path(trace_path).stem), encoding="utf-8")
