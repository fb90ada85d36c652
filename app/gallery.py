"""The gallery: recorded runs shipped in assets/runs/, each captioned with the one thing it shows.

`assets/gallery.json` lists each run's name, title, the `lade trace` arguments that recorded it, its role in the
lesson (if any) and a caption template. Captions are written by hand, but every number and claim word in them is
computed from the run (`captions.facts`), so a re-recorded run keeps true captions. `python -m app.gallery`
re-records every run with the shipped
command line (`--only NAME` just one); loading one needs no model.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import string
from functools import lru_cache

from lade_core import RunTrace, parse_run
from lade_core.paths import GALLERY, RUNS

from .captions import facts

SPEC = GALLERY


@lru_cache(maxsize=1)
def spec() -> tuple[dict, ...]:
    return tuple(json.loads(SPEC.read_text(encoding="utf-8")))


def names() -> list[str]:
    return [entry["name"] for entry in spec()]


def entry(name: str) -> dict | None:
    return next((e for e in spec() if e["name"] == name), None)


@lru_cache(maxsize=32)
def load(name: str) -> RunTrace:
    """A gallery run by name (KeyError if there is none)."""
    if entry(name) is None:
        raise KeyError(name)
    return parse_run((RUNS / f"{name}.json").read_bytes())


def _digest(run: RunTrace) -> str:
    return hashlib.sha256(run.to_json().encode("utf-8")).hexdigest()


@lru_cache(maxsize=1)
def _by_digest() -> dict[str, str]:
    return {_digest(load(name)): name for name in names()}


def name_of(run: RunTrace) -> str | None:
    """The gallery name of `run` if it is one of the gallery's own runs (the same content as its shipped file), else
    None, whatever the run's title or file name says: a caption and an official title belong to the gallery's files,
    never to a name (a run titled as a gallery run would carry that run's caption, whose numbers are not its own)."""
    return _by_digest().get(_digest(run))


def role(name: str) -> str | None:
    return (entry(name) or {}).get("role")


def by_role(wanted: str) -> str | None:
    return next((e["name"] for e in spec() if e.get("role") == wanted), None)


def caption(name: str, run: RunTrace | None = None) -> str:
    """The run's caption with its numbers and claim words filled in from the run (`run`: another recording under
    this name's caption). A caption naming a fact the run does not have (a repetition loop in a run without one)
    is refused, never printed with "None" in it."""
    template = entry(name)["caption"]
    known = facts(run or load(name))
    for _, field, _, _ in string.Formatter().parse(template):
        if field is not None and known.get(field.split("!")[0]) in (None, ""):
            raise ValueError(f"the caption of {name} says {{{field}}}, which this run does not have")
    return template.format(**known)


def listing() -> list[dict]:
    """What the page shows of each gallery run: name, title, caption, method (its speed is in its payload's derived
    rows, `app.speed`)."""
    out = []
    for e in spec():
        run = load(e["name"])
        out.append(
            {
                "name": e["name"],
                "title": e["title"],
                "caption": caption(e["name"]),
                "method": run.method,
            }
        )
    return out


def main() -> None:
    from lade_core.cli import main as lade

    parser = argparse.ArgumentParser(description="Re-record the gallery's runs with the shipped command line.")
    parser.add_argument("--only", default=None, help="record only the run with this name")
    args = parser.parse_args()
    if args.only and entry(args.only) is None:
        parser.error(f"no gallery run is called {args.only!r}")
    for e in spec():
        if args.only in (None, e["name"]):
            status = lade(["trace", *e["args"], "--title", e["name"], "--out", str(RUNS / f"{e['name']}.json")])
            if status:
                raise SystemExit(status)
    load.cache_clear()
    _by_digest.cache_clear()
    for e in spec():
        if args.only in (None, e["name"]):
            print(f"{e['name']}: {caption(e['name'])}")


if __name__ == "__main__":
    main()
