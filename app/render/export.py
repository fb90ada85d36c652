"""Standalone HTML replay of a run: one file with the renderer, its CSS and the run, that opens from disk offline.

It is the page's own renderer (app/static/*.js, the same stage and views, with every view, the explanations and the
honest note), mounted on one run with no server; a Content-Security-Policy forbids any request. The run and the boot
data travel as JSON inside <script type="application/json"> elements, escaped so that no `<`, `>` or `&` in a token
can end them, and are only ever put on the page as text. It opens where the page was (`step`), under the run's
title and, for the gallery's own runs (known by content: `gallery.name_of`, never by a name or a title), its official
title and caption. `export_html(trace, out)` loads a saved trace with the strict loader first. The page's <title> is
the renderer's to set (`Lade.dom.labelText`, the one rule for a run's text shown as a label); the file carries a
plain one until it runs.
"""

from __future__ import annotations

import html
from pathlib import Path

from lade_core import RunTrace, parse_run

from .. import gallery
from .assets import boot_tag, inline_bundle, script_json
from .boot import boot_data
from .payload import payload

CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; "
    "font-src data:; connect-src 'none'"
)
# Every page this project writes (the export, the static site) also refuses what `default-src` does not cover: a
# <base> that would redirect its relative URLs, a form that would post elsewhere, plugins. No `frame-ancestors`: a
# meta policy cannot set it, and embeds stay frameable by any lecture host.
HARDENING = "; base-uri 'none'; object-src 'none'; form-action 'none'"


def page(title: str, head_extra: str, body: str, csp: str = CSP) -> str:
    """An HTML page of the renderer: its CSS and scripts inline, `body` (boot and mount scripts) after them."""
    css, js = inline_bundle()
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}{HARDENING}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>body {{ margin: 14px 18px; }}\n{css}</style>\n"
        f'{head_extra}</head>\n<body class="lade-page">\n<main id="lade-host"></main>\n'
        f"<script>{js}</script>\n{body}</body>\n</html>\n"
    )


def render_html(run: RunTrace, name: str | None = None, step: int | None = None, lab: dict | None = None) -> str:
    """The whole self-contained page for `run`, opening at `step` (None: the run's opening step); `lab`: the speed
    lab's page data to carry (`boot.lab_data()`; the replay carries none), with the run's own lab figures then, since
    such a page asks nothing of a server."""
    official = gallery.name_of(run)
    handle = official or name or "run"
    listing = [e for e in gallery.listing() if e["name"] == official] if official else []
    boot = {**boot_data("inline", lab=lab), "gallery": listing, "lesson": {}, "step": step}
    data = f'<script type="application/json" id="lade-run">{script_json(payload(run, lab=lab is not None))}</script>\n'
    mount = (
        "<script>const data = JSON.parse(document.getElementById('lade-run').textContent);"
        f"window.Lade.stage.mountStandalone(document.getElementById('lade-host'), data, {script_json(handle)});"
        "</script>\n"
    )
    comment = (
        "<!-- A recorded run of the Lookahead Decoding Explorer (lookahead decoding, Fu et al., ICML 2024), "
        "replayed by the explorer's own renderer. Everything is inline; nothing is fetched. -->\n"
    )
    return page("Lookahead decoding replay", boot_tag(boot) + "\n", comment + data + mount)


def export_html(trace_path: Path, out_path: Path) -> None:
    """Load the trace at `trace_path` (strictly) and write its replay page to `out_path`."""
    run = parse_run(Path(trace_path).read_bytes())
    Path(out_path).write_text(render_html(run, Path(trace_path).stem), encoding="utf-8")
