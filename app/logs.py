"""The server's log, bounded: a refused request writes one short line, never its payload or a whole traceback.

Gradio prints the traceback of every request it refuses (a `gr.Error` included) with the inputs it got, so each
refusal wrote about 1.7 KB, and a 5 MB argument would land in the log whole. `bounded(stream)` wraps stdout or
stderr so that:

- a traceback becomes one line, `refused: <exception type>: <its message's first line, at most MESSAGE characters>`
  (the writes of `traceback.print_exc()` are recognised as the formatted exception being handled and replaced);
- at most `REFUSALS_PER_MINUTE` such lines are written a minute; the rest are counted, and the count is written
  with the next line that gets through (`refusal(text)` is the same for a refusal the app itself logs);
- any other line longer than `MAX_LINE` characters is cut, with a note of how much was left out.

So the log grows by at most about REFUSALS_PER_MINUTE x (MESSAGE + 60) bytes a minute however many requests are
refused (about 25 KB a minute, 36 MB a day at the very worst); the platform (a Space's log viewer) keeps its tail.
"""

from __future__ import annotations

import io
import sys
import threading
import time
import traceback

MAX_LINE = 2000
MESSAGE = 300
REFUSALS_PER_MINUTE = 60
_START = "Traceback (most recent call last):"


class _Rate:
    """At most `per_minute` lines a minute; counts the rest."""

    def __init__(self, per_minute: int = REFUSALS_PER_MINUTE):
        self.per_minute, self.window, self.count, self.dropped = per_minute, 0.0, 0, 0
        self.lock = threading.Lock()

    def admit(self) -> tuple[bool, int]:
        """(whether a line may be written now, how many were dropped before it)."""
        now = time.monotonic()
        with self.lock:
            if now - self.window >= 60:
                self.window, self.count = now, 0
            if self.count >= self.per_minute:
                self.dropped += 1
                return False, 0
            self.count += 1
            dropped, self.dropped = self.dropped, 0
            return True, dropped


RATE = _Rate()


def one_line(exc: BaseException) -> str:
    """`refused: <type>: <first line of the message, cut>`: what a refusal leaves in the log."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if len(text) > MESSAGE:
        text = text[:MESSAGE] + "…"
    return f"refused: {type(exc).__module__}.{type(exc).__qualname__}: {text}".replace("builtins.", "")


class BoundedStream(io.TextIOBase):
    def __init__(self, stream, max_line: int = MAX_LINE, rate: _Rate | None = None):
        self.stream, self.max_line, self.rate = stream, max_line, rate or RATE
        self._local = threading.local()  # per thread: the rest of a traceback being swallowed

    # -- refusals ------------------------------------------------------------------------------------------------
    def refusal(self, line: str) -> None:
        """Write one refusal line, within the rate."""
        ok, dropped = self.rate.admit()
        if ok:
            more = f" ({dropped:,} more refusals not logged)" if dropped else ""
            self._write_cut(line[: self.max_line] + more + "\n")

    def _swallow(self, text: str) -> str | None:
        """The part of `text` to write after the traceback being swallowed, or None if all of it was swallowed."""
        rest = getattr(self._local, "rest", "")
        if not rest:
            return text
        if rest.startswith(text):
            self._local.rest = rest[len(text) :]
            return None
        if text.startswith(rest):  # the traceback ends inside this write
            self._local.rest = ""
            return text[len(rest) :] or None
        self._local.rest = ""  # not the traceback after all: stop swallowing
        return text

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            text = str(text)
        out = self._swallow(text)
        if out is None:
            return len(text)
        start = out.find(_START)
        if start >= 0 and (start == 0 or out[start - 1] == "\n"):
            exc = sys.exc_info()[1]
            if exc is not None:
                expected = "".join(traceback.format_exception(exc))
                tail = out[start:]
                if expected.startswith(tail) or tail.startswith(expected):
                    if out[:start]:
                        self._write_cut(out[:start])
                    self.refusal(one_line(exc))
                    if tail.startswith(expected):  # the whole traceback in this write: write what follows it
                        rest = tail[len(expected) :]
                        if rest:
                            self.write(rest)
                    else:
                        self._local.rest = expected[len(tail) :]
                    return len(text)
        self._write_cut(out)
        return len(text)

    def _write_cut(self, text: str) -> None:
        lines = text.split("\n")
        cut = [
            line
            if len(line) <= self.max_line
            else f"{line[: self.max_line]}… [{len(line) - self.max_line:,} more characters left out of the log]"
            for line in lines
        ]
        self.stream.write("\n".join(cut))

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


def refusal(line: str) -> None:
    """Log one line about a refused request (on stderr, bounded and rate-limited like Gradio's refusals)."""
    stream = sys.stderr if isinstance(sys.stderr, BoundedStream) else bounded(sys.stderr)
    stream.refusal(line)
