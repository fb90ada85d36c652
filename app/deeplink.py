"""Deep links: `/?run=code-bsearch&step=12`, `&view=mask-view&embed=1` for one view in an iframe, `/?lesson=3`
(`&embed=1` for a slide) for a chapter of the lesson.

`resolve(query, names)` turns the page's query parameters into a `Link`. A bad value falls back (the lesson, the
run's opening step, every view) with a one-line notice, never an error. Notices are plain text (the page shows them
with textContent); what they echo of the address is cut short and stripped of anything but printable characters
that cannot form markup (`![x](url)` echoes as `!xurl`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .render.views import VIEW_GROUPS, VIEW_IDS

_STEP = re.compile(r"[0-9]{1,6}")  # ASCII digits only, as the page reads them
_MARKUP = "<>[]()`&"  # never echoed: a notice stays plain text even if something renders it as HTML or Markdown
CHAPTERS = 9


@dataclass(frozen=True)
class Link:
    run: str | None = None  # a gallery run's name
    step: int | None = None  # None: the run's opening step
    view: str | None = None  # a view id or group: only that, in embeds
    embed: bool = False
    lesson: int | None = None  # a chapter, 1-based
    notice: str = ""


def short_id(name: str) -> str:
    """The short form of a gallery name that links may use: 'code-fib-W7N4G7' -> 'code-fib'."""
    return re.sub(r"-W\d+N\d+G\d+$", "", name)


def find_run(wanted: str, names) -> str | None:
    """The gallery run named `wanted`, by full name or short id (case-insensitive); None if there is none."""
    wanted = (wanted or "").strip().lower()
    return next((n for n in names if wanted in (n.lower(), short_id(n).lower())), None)


def shown(value) -> str:
    """A query value for a notice: printable characters only, none that could start markup, at most 40."""
    text = "".join(ch for ch in str(value) if ch.isprintable() and ch not in _MARKUP)
    return text[:40] + ("…" if len(text) > 40 else "")


def resolve(query: dict, names) -> Link:
    wanted, step, view, lesson = (query.get(k) for k in ("run", "step", "view", "lesson"))
    embed = str(query.get("embed", "")).lower() in ("1", "true", "yes")
    notices = []
    if lesson is not None:
        text = str(lesson).strip()
        if _STEP.fullmatch(text) and 1 <= int(text) <= CHAPTERS:
            return Link(lesson=int(text), embed=embed)
        notices.append(f"There is no chapter “{shown(lesson)}” (chapters 1 to {CHAPTERS}); showing chapter 1.")
        return Link(lesson=1, embed=embed, notice=" ".join(notices))
    name = None
    if wanted is not None:
        name = find_run(wanted, names)
        if name is None:
            notices.append(f"No gallery run is called “{shown(wanted)}”; the explorer's gallery menu lists them.")
    number = None
    if step is not None and name is not None:
        if _STEP.fullmatch(str(step).strip()):
            number = int(str(step).strip())
        else:
            notices.append(f"Step “{shown(step)}” is not a step number; showing the run's opening step.")
    if view is not None and view not in VIEW_IDS and view not in VIEW_GROUPS:
        if name is not None:  # without a run no view is shown: nothing to say about it
            notices.append(f"There is no view “{shown(view)}”; showing every view.")
        view = None
    return Link(
        run=name, step=number, view=view if name else None, embed=embed and name is not None, notice=" ".join(notices)
    )
