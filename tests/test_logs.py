"""The server's log is bounded per line (app/logs.py): would catch a refused request's payload logged whole."""

import io

from app.logs import BoundedStream


def test_long_lines_are_cut_with_a_note_and_short_ones_pass():
    out = io.StringIO()
    stream = BoundedStream(out, max_line=10)
    stream.write("short\n" + "x" * 25 + "\nend")
    assert out.getvalue() == "short\n" + "x" * 10 + "… [15 more characters left out of the log]\nend"
