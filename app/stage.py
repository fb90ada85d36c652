"""What the server tells the browser's stage (the value of the page's `gr.HTML` stage), and what it keeps per session.

Messages are plain JSON: `init` (the lesson's runs, the gallery, the lab's data for the lesson), `open` (a run to
show, at a step, in a mode), `live` / `steps` (a race streaming in), `notice` (one line of text). Every message has a
fresh `seq`, so the page sees each one as a change. The stage keeps what it was sent; stepping needs nothing more.

Per session the server keeps only which run the page shows: a gallery run by name, any other run as compressed JSON
(`Held`, at most `limits.SESSION_BYTES`), for its download and HTML export. Gallery payloads are derived once per
process and kept.
"""

from __future__ import annotations

import itertools
import json
import zlib
from dataclasses import dataclass
from functools import lru_cache

from lade_core import RunTrace, parse_run

from . import gallery, limits
from .render.payload import payload

_seq = itertools.count(1)


def message(op: str, **fields) -> str:
    """A message as JSON text: Gradio sends a changed string whole (or as an append), where it would patch a
    changed dict key by key."""
    return json.dumps({"op": op, "seq": next(_seq), **fields}, ensure_ascii=False, separators=(",", ":"))


@lru_cache(maxsize=32)
def gallery_payload(name: str) -> dict:
    """A gallery run's payload, derived once per process (KeyError for a name not in the gallery)."""
    return payload(gallery.load(name))


def interesting_step(run: RunTrace) -> int:
    """Where a run opens: the first step that accepted the most tokens."""
    steps = run.parallel.steps
    best = max((len(s.accepted) for s in steps), default=0)
    return next((s.index for s in steps if len(s.accepted) == best), 0)


def open_message(name: str, run_payload: dict | None, step, mode: str = "explorer", notice: str = "", **extra) -> str:
    runs = {name: run_payload} if run_payload is not None else {}
    return message("open", runs=runs, current=name, step=step, mode=mode, notice=notice, **extra)


@dataclass(frozen=True)
class Held:
    """The run a session shows: a gallery name, or another run's JSON, zlib-compressed."""

    name: str
    blob: bytes = b""

    @classmethod
    def of(cls, name: str, run: RunTrace | None = None) -> "Held":
        if run is None:
            return cls(name)
        blob = zlib.compress(run.to_json().encode("utf-8"), 6)
        if len(blob) > limits.SESSION_BYTES:
            raise ValueError(f"this run is {len(blob) / 2**20:.1f} MiB compressed; a session keeps at most "
                             f"{limits.SESSION_BYTES / 2**20:.0f} MiB")
        return cls(name, blob)

    def run(self) -> RunTrace:
        if self.blob:
            return parse_run(zlib.decompress(self.blob, bufsize=2**20))
        return gallery.load(self.name)
