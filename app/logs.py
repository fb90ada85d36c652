"""The server's log, bounded: a refused request must not write its whole payload to the log.

Gradio prints the traceback of a request it refuses (say, with the wrong number of inputs) with the inputs it got,
so a 5 MB argument would land in the log whole, every time. `bounded(stream)` wraps stdout or stderr so that any line
longer than `MAX_LINE` characters is cut, with a note of how much was left out.
"""

from __future__ import annotations

import io

MAX_LINE = 2000


class BoundedStream(io.TextIOBase):
    def __init__(self, stream, max_line: int = MAX_LINE):
        self.stream, self.max_line = stream, max_line

    def write(self, text: str) -> int:
        lines = text.split("\n")
        cut = [line if len(line) <= self.max_line else
               f"{line[: self.max_line]}… [{len(line) - self.max_line:,} more characters left out of the log]"
               for line in lines]
        self.stream.write("\n".join(cut))
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
