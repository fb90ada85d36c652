"""What the server tells the browser's stage (the value of the page's `gr.HTML` stage).

The value is a few bytes of JSON naming what to show, never the run itself: `{"run": handle, "step", "mode",
"chapter", "embed", "notice"}` to open a run (a value without a notice leaves the page's own notice alone; the page
reads the run at its address, `runs/<handle>.json`), `{"live": handle, "status"}` while a race records (the page
reads the steps it lacks), `{"notice": text}` alone to say something. `n` is a fresh number in every value: the page
reacts to a value that changed, and two identical requests in a row (the same file opened twice) must still be seen.
A session keeps nothing else: the run lives once in `store.STORE`, and its downloads are at its address too.
"""

from __future__ import annotations

import itertools
import json
from typing import Literal, NotRequired  # pydantic reads these on Python 3.11

from typing_extensions import TypedDict

_n = itertools.count(1)


class StageEmbed(TypedDict):
    """What an embed shows: a view or group by id, or the lesson's chapter."""

    view: NotRequired[str]
    lesson: NotRequired[bool]


class StageValue(TypedDict):
    """The stage's value, as its JSON text says it (the page's `Stage.apply` reads it); only `n` is always there."""

    run: NotRequired[str]  # the run to open, by its handle
    step: NotRequired[int | Literal["last"]]  # the step to open it at (none: the run's opening step)
    mode: NotRequired[Literal["explorer", "lesson"]]
    chapter: NotRequired[int]
    embed: NotRequired[StageEmbed]
    notice: NotRequired[str]
    live: NotRequired[str]  # a live race's handle, while it records
    status: NotRequired[str]  # ... what it is doing, in words
    done: NotRequired[bool]  # ... it has ended
    n: int  # a fresh number in every value


def _value(**fields) -> str:
    return json.dumps(
        {**{k: v for k, v in fields.items() if v is not None}, "n": next(_n)}, ensure_ascii=False, separators=(",", ":")
    )


def show(
    handle: str,
    step: int | Literal["last"] | None = None,
    mode: Literal["explorer", "lesson"] = "explorer",
    chapter: int | None = None,
    embed: StageEmbed | None = None,
    notice: str | None = None,
) -> str:
    """Open the run `handle` at `step` (a number, "last", or None for the run's opening step) in `mode`."""
    return _value(run=handle, step=step, mode=mode, chapter=chapter, embed=embed, notice=notice)


def lesson(chapter: int, embed: bool = False, notice: str | None = None) -> str:
    """Open the lesson at `chapter` (on the lesson's own runs)."""
    return _value(mode="lesson", chapter=chapter, embed={"lesson": True} if embed else None, notice=notice)


def live(handle: str, status: str, done: bool = False) -> str:
    """A live race is recording under `handle`: the page pulls what it lacks."""
    return _value(live=handle, status=status, done=done)


def notice(text: str) -> str:
    return _value(notice=text)
