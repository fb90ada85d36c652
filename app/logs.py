"""The server's log, bounded: a refused request writes one short line, never its payload or a whole traceback.

- A refusal is stopped at its source: the app raises it as `gr.Error(..., print_exception=False)` (`limits.refused`),
  so Gradio prints no traceback for it, and the app logs one line itself with `refusal(text)`.
- Those lines go through the stdlib logger `lade.refusals`, whose `RateFilter` lets at most `REFUSALS_PER_MINUTE`
  through a minute; the rest are counted, and the count is written with the next line that gets through.
- Whatever else is printed (a real bug's traceback, which should be read) passes through `bounded(stream)`, which
  cuts any line longer than `MAX_LINE` characters with a note of how much was left out, so an argument of 5 MB in a
  traceback is not logged whole.

So refusals grow the log by at most about REFUSALS_PER_MINUTE x (MAX_LINE + 60) bytes a minute however many
requests are refused; the platform (a Space's log viewer) keeps its tail.
"""

from __future__ import annotations

import io
import logging
import sys
import threading
import time

MAX_LINE = 2000
REFUSALS_PER_MINUTE = 60


class RateFilter(logging.Filter):
    """At most `per_minute` records a minute; the rest are dropped and counted in the next record let through."""

    def __init__(self, per_minute: int = REFUSALS_PER_MINUTE):
        super().__init__()
        self.per_minute, self.window, self.count, self.dropped = per_minute, 0.0, 0, 0
        self.lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        now = time.monotonic()
        with self.lock:
            if now - self.window >= 60:
                self.window, self.count = now, 0
            if self.count >= self.per_minute:
                self.dropped += 1
                return False
            self.count += 1
            dropped, self.dropped = self.dropped, 0
        if dropped:
            record.msg = f"{record.getMessage()} ({dropped:,} more refusals not logged)"
            record.args = None
        return True


class _Stderr(logging.StreamHandler):
    """A handler writing to whatever sys.stderr is when the record comes (the app bounds it after logging starts)."""

    def emit(self, record: logging.LogRecord) -> None:
        self.setStream(sys.stderr)
        super().emit(record)


RATE = RateFilter()
LOG = logging.getLogger("lade.refusals")
LOG.propagate = False
LOG.setLevel(logging.INFO)
LOG.addFilter(RATE)
_handler = _Stderr()
_handler.setFormatter(logging.Formatter("%(message)s"))
LOG.addHandler(_handler)


def refusal(line: str) -> None:
    """Log one line about a refused request (rate-limited; cut at MAX_LINE characters)."""
    LOG.info(line[:MAX_LINE])


class BoundedStream(io.TextIOBase):
    """A text stream whose lines are at most `max_line` characters (longer ones cut, with a note)."""

    def __init__(self, stream, max_line: int = MAX_LINE):
        self.stream, self.max_line = stream, max_line

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            text = str(text)
        self.stream.write(
            "\n".join(
                line
                if len(line) <= self.max_line
                else f"{line[: self.max_line]}… [{len(line) - self.max_line:,} more characters left out of the log]"
                for line in text.split("\n")
            )
        )
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self):
        return getattr(self.stream, "encoding", "utf-8")


def bounded(stream, max_line: int = MAX_LINE) -> BoundedStream:
    return stream if isinstance(stream, BoundedStream) else BoundedStream(stream, max_line)
