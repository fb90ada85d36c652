"""The server's log is bounded per line (app/logs.py): would catch a refused request's payload logged whole."""

import io

from app.logs import BoundedStream


def test_long_lines_are_cut_with_a_note_and_short_ones_pass():
    out = io.StringIO()
    stream = BoundedStream(out, max_line=10)
    stream.write("short\n" + "x" * 25 + "\nend")
    assert out.getvalue() == "short\n" + "x" * 10 + "… [15 more characters left out of the log]\nend"


def _refuse(stream) -> None:
    """What Gradio does with a request a handler refuses: print the traceback of the gr.Error (chained here)."""
    import sys
    import traceback

    import gradio as gr

    err, sys.stderr = sys.stderr, stream
    try:
        try:
            try:
                raise ValueError("inner detail /srv/app/secret.py")
            except ValueError as inner:
                raise gr.Error("The prompt is 9,000 characters; this demo takes at most 8,000." + "x" * 5000) from inner
        except gr.Error:
            traceback.print_exc()
    finally:
        sys.stderr = err


def test_a_refused_request_leaves_one_short_line_not_a_traceback():
    """Each refused request wrote its whole traceback (about 1.7 KB, with the handler's inner exceptions and the
    server's paths) to the log; it writes one line of at most a few hundred characters instead."""
    from app.logs import MESSAGE, _Rate

    out = io.StringIO()
    stream = BoundedStream(out, rate=_Rate(100))
    _refuse(stream)
    stream.write("next line\n")
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("refused: gradio.exceptions.Error: 'The prompt is 9,000 characters")
    assert len(lines) == 2 and lines[1] == "next line" and len(lines[0]) < MESSAGE + 80
    assert "Traceback" not in out.getvalue() and "/srv/app" not in out.getvalue()


def test_refusals_past_the_rate_are_counted_not_written():
    """However many requests are refused, the log grows by at most REFUSALS_PER_MINUTE lines a minute; the lines
    left out are counted in the next one written."""
    from app.logs import _Rate

    out = io.StringIO()
    rate = _Rate(3)
    stream = BoundedStream(out, rate=rate)
    for _ in range(10):
        _refuse(stream)
    assert len(out.getvalue().splitlines()) == 3
    rate.window -= 61  # a minute later
    _refuse(stream)
    last = out.getvalue().splitlines()[-1]
    assert len(out.getvalue().splitlines()) == 4 and last.endswith("(7 more refusals not logged)")


def test_a_refusal_asks_gradio_for_no_traceback():
    """A refusal (bad settings, a long prompt, an unknown method) is stopped at the source: Gradio is told not to print
    its traceback (`print_exception=False`); the bounded stream above stays the net for anything else."""
    from app import limits

    try:
        limits.clean_prompt("x" * (limits.MAX_PROMPT_CHARS + 1))
    except Exception as exc:  # the refusal the handler raises
        assert type(exc).__name__ == "Error" and exc.print_exception is False
    else:
        raise AssertionError("a prompt over the limit was taken")
