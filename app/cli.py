"""The `lade` command line: the engine's commands (`lade_core/cli.py`) plus the app's own, which need the app.

    lade export-html TRACE OUT      one self-contained HTML replay of a trace file
    lade export-site DIR [--live-url URL] [--no-engine]   the lesson, gallery, explorer and embeds as a static site

`python -m lade_core` keeps the engine's commands alone (the engine imports nothing of the app); `python -m app`
is this one. Left out: serving the page (`app.py`, `make run`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lade_core import cli as engine


def cmd_export_html(args) -> int:
    from .render.export import export_html

    export_html(Path(args.trace), Path(args.out))
    print(f"wrote {args.out}")
    return 0


def cmd_export_site(args) -> int:
    from .render.site import export_site

    if args.live_url is not None and not args.live_url.startswith(("https://", "http://")):
        raise ValueError(f"--live-url must be an http(s) address, got {args.live_url!r}")
    made = export_site(Path(args.folder), args.live_url, engine=args.engine)
    print(
        f"wrote {args.folder}: {made['files']} files, {made['bytes'] / 2**20:.1f} MiB (index.html "
        f"{made['index_bytes'] / 2**10:.0f} KiB)"
    )
    return 0


def add_app_commands(sub) -> None:
    """The app's subcommands, on the engine parser's subcommand table `sub`."""
    p = sub.add_parser("export-html", help="write a run as one self-contained HTML replay")
    p.add_argument("trace")
    p.add_argument("out")
    p.set_defaults(func=cmd_export_html)
    p = sub.add_parser(
        "export-site", help="write the lesson, the gallery, the explorer and the embeds as a static site"
    )
    p.add_argument("folder")
    p.add_argument("--live-url", default=None, help="where 'Run it live' points (a server running app.py), or none")
    p.add_argument(
        "--engine",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="write the browser engine's files (engine/, 115 MB) for 'Race it in your browser' (default: yes)",
    )
    p.set_defaults(func=cmd_export_site)


def build_parser() -> argparse.ArgumentParser:
    return engine.build_parser(extra=add_app_commands)


def main(argv: list[str] | None = None) -> int:
    return engine.main(argv, build_parser())


def main_exit() -> None:
    """The `lade` console script."""
    sys.exit(main())
