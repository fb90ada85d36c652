"""The server's log is bounded (app/logs.py): would catch a refused request's payload or traceback logged whole."""

import io
import logging

from app.logs import BoundedStream, RateFilter


def test_long_lines_are_cut_with_a_note_and_short_ones_pass():
    out = io.StringIO()
    stream = BoundedStream(out, max_line=10)
    stream.write("short\n" + "x" * 25 + "\nend")
    assert out.getvalue() == "short\n" + "x" * 10 + "… [15 more characters left out of the log]\nend"


def _logger(rate: RateFilter) -> tuple[logging.Logger, io.StringIO]:
    out = io.StringIO()
    log = logging.getLogger(f"lade.test.{id(rate)}")
    log.propagate, log.filters, log.handlers = False, [rate], [logging.StreamHandler(out)]
    log.setLevel(logging.INFO)
    return log, out


def test_refusals_past_the_rate_are_counted_not_written():
    """However many requests are refused, the log grows by at most REFUSALS_PER_MINUTE lines a minute; the lines
    left out are counted in the next one written."""
    rate = RateFilter(3)
    log, out = _logger(rate)
    for i in range(10):
        log.info("refused: %d", i)
    assert out.getvalue().splitlines() == ["refused: 0", "refused: 1", "refused: 2"]
    rate.window -= 61  # a minute later
    log.info("refused: later")
    assert out.getvalue().splitlines()[-1] == "refused: later (7 more refusals not logged)"


def test_a_refusal_asks_gradio_for_no_traceback():
    """A refusal (bad settings, a long prompt, an unknown method) is stopped at the source: Gradio is told not to print
    its traceback (`print_exception=False`), so nothing has to recognise a traceback in the log's text."""
    from app import limits

    try:
        limits.clean_prompt("x" * (limits.MAX_PROMPT_CHARS + 1))
    except Exception as exc:  # the refusal the handler raises
        assert type(exc).__name__ == "Error" and exc.print_exception is False
    else:
        raise AssertionError("a prompt over the limit was taken")


def test_the_apps_refusal_line_goes_through_the_rate_filter(capsys):
    from app import logs

    logs.refusal("refused: a test line " + "y" * 5000)
    err = capsys.readouterr().err
    assert err.startswith("refused: a test line") and len(err) <= logs.MAX_LINE + 60
