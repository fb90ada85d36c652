"""The server's log, bounded: a refused request writes one short line, a fault its traceback once, and the log as a
whole grows by at most `LOG_BYTES_PER_MINUTE` a minute whatever is written to it.

- A refusal is stopped at its source: the app raises it as `gr.Error(..., print_exception=False)` (`limits.refused`),
  so Gradio prints no traceback for it, and the app logs one line itself with `refusal(text)`: what was refused and
  why, and the client as the guard counts it.
- A fault of the app's own (a run that failed in the engine) is logged once with its traceback by `fault(text)`,
  and the visitor gets one sentence; any other exception Gradio meets it prints itself, once.
- Those records go through the stdlib logger `lade.refusals`; uvicorn's error log (`uvicorn.error`: an exception in
  a request, a malformed request) gets the same `RateFilter`, `RATE` (`rate_loggers`): at most
  `REFUSALS_PER_MINUTE` records a minute between them; the rest are counted, and the count is written with the next
  record that gets through.
- Everything printed (those records, Gradio's own tracebacks and lines, uvicorn's) passes through `bounded(stream)`:
  any line longer than `MAX_LINE` characters is cut with a note of how much was left out, so an argument of 5 MB in a
  traceback is not logged whole, and stdout and stderr share one `Budget` of `LOG_BYTES_PER_MINUTE` bytes a minute:
  past it, writes are counted, not written, and the count is written with the next write that fits.

`install()` (app.py's `main`) sets all of it up; the platform (a Space's log viewer) keeps the log's tail.
"""

from __future__ import annotations

import io
import logging
import sys
import threading
import time

from .limits import LOG_BYTES_PER_MINUTE, LOG_LINE_CHARS, LOG_RECORDS_PER_MINUTE

MAX_LINE = LOG_LINE_CHARS
REFUSALS_PER_MINUTE = LOG_RECORDS_PER_MINUTE
RATED_LOGGERS = ("uvicorn.error",)  # what uvicorn logs per request: an exception in the app, a malformed request


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
        self.stream = sys.stderr  # not setStream, which flushes the stream before (a test's may be closed)
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
    LOG.info(line[:MAX_LINE].replace("\n", " "))


def fault(line: str) -> None:
    """Log a fault: one line and the traceback of the exception being handled, as one record (rate-limited)."""
    LOG.error(line[:MAX_LINE].replace("\n", " "), exc_info=True)


def rate_loggers() -> None:
    """Put uvicorn's error log behind the rate of every other record (a filter on the logger outlives the handlers
    uvicorn's logging configuration installs when Gradio starts it)."""
    for name in RATED_LOGGERS:
        logger = logging.getLogger(name)
        if RATE not in logger.filters:
            logger.addFilter(RATE)


class Budget:
    """At most `per_minute` bytes a minute, shared by the streams that write through it; what does not fit is counted
    and said with the next write that does."""

    def __init__(self, per_minute: int = LOG_BYTES_PER_MINUTE):
        self.per_minute, self.window, self.used = per_minute, 0.0, 0
        self.left_writes = self.left_bytes = 0
        self.lock = threading.Lock()

    def take(self, size: int, now: float | None = None) -> str | None:
        """None if `size` bytes do not fit this minute (counted); else the note to write before them ("" if none)."""
        now = time.monotonic() if now is None else now
        with self.lock:
            if now - self.window >= 60:
                self.window, self.used = now, 0
            if self.used + size > self.per_minute:
                self.left_writes, self.left_bytes = self.left_writes + 1, self.left_bytes + size
                return None
            self.used += size
            writes, skipped, self.left_writes, self.left_bytes = self.left_writes, self.left_bytes, 0, 0
        if not writes:
            return ""
        return (
            f"[{writes:,} writes ({skipped:,} bytes) left out of the log: past {self.per_minute:,} bytes in a minute]\n"
        )


class BoundedStream(io.TextIOBase):
    """A text stream whose lines are at most `max_line` characters (longer ones cut, with a note), writing at most
    what its `budget` lets through (None: no budget)."""

    def __init__(self, stream, max_line: int = MAX_LINE, budget: Budget | None = None):
        self.stream, self.max_line, self.budget = stream, max_line, budget

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            text = str(text)
        out = "\n".join(
            line
            if len(line) <= self.max_line
            else f"{line[: self.max_line]}… [{len(line) - self.max_line:,} more characters left out of the log]"
            for line in text.split("\n")
        )
        note = "" if self.budget is None else self.budget.take(len(out.encode("utf-8", "replace")))
        if note is not None:
            self.stream.write(note + out)
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


def bounded(stream, max_line: int = MAX_LINE, budget: Budget | None = None) -> BoundedStream:
    return stream if isinstance(stream, BoundedStream) else BoundedStream(stream, max_line, budget)


def install() -> None:
    """Bound this process's log: stdout and stderr cut long lines and share one budget a minute; uvicorn's error log
    is rated with the app's own records."""
    budget = Budget()
    sys.stdout, sys.stderr = bounded(sys.stdout, budget=budget), bounded(sys.stderr, budget=budget)
    rate_loggers()
