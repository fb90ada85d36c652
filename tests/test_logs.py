"""The server's log is bounded (app/logs.py): would catch a refused request's payload or traceback logged whole, a
refusal that writes more than one line, a fault whose traceback is lost, and a log that grows past its budget."""

import io
import logging
import time

import httpx
import pytest

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

    logs.RATE.window, logs.RATE.count = 0.0, 0  # a minute of its own (other tests in this process refuse requests)
    logs.refusal("refused: a test line " + "y" * 5000)
    err = capsys.readouterr().err
    assert err.startswith("refused: a test line") and len(err) <= logs.MAX_LINE + 60


def test_the_log_as_a_whole_passes_at_most_its_budget_a_minute():
    """Issue 54, item 4: 1.9 MB of tracebacks went to the log in 1.4 s, outside the refusals' rate. Whatever is
    written (Gradio's tracebacks, uvicorn's lines), stdout and stderr share one budget of bytes a minute; past it,
    writes are counted and the count is said with the next write that fits."""
    from app import logs

    out = io.StringIO()
    budget = logs.Budget(per_minute=100)
    stream, other = BoundedStream(out, budget=budget), BoundedStream(io.StringIO(), budget=budget)
    stream.write("x" * 60 + "\n")
    other.write("y" * 30 + "\n")  # the other stream spends the same budget
    for _ in range(5):
        stream.write("z" * 20 + "\n")
    assert out.getvalue() == "x" * 60 + "\n"
    budget.window -= 61  # a minute later
    stream.write("later\n")
    assert out.getvalue().splitlines()[-2:] == [
        "[5 writes (105 bytes) left out of the log: past 100 bytes in a minute]",
        "later",
    ]


def test_uvicorns_error_log_is_behind_the_same_rate():
    """Issue 54, item 4: uvicorn logged a whole traceback per request ("Exception in ASGI application"), outside the
    log's rate; its error logger gets the refusals' rate filter (`logs.RATE`), one count for both."""
    import logging

    from app import logs

    logs.rate_loggers()
    passed: list[logging.LogRecord] = []
    catch = logging.Handler()
    catch.emit = passed.append
    logger = logging.getLogger("uvicorn.error")
    logger.addHandler(catch)
    logs.RATE.window, logs.RATE.count = 0.0, 0
    try:
        for i in range(3 * logs.REFUSALS_PER_MINUTE):
            logger.error("Exception in ASGI application %d", i)
    finally:
        logger.removeHandler(catch)
        logs.RATE.window, logs.RATE.count, logs.RATE.dropped = 0.0, 0, 0
    assert len(passed) == logs.REFUSALS_PER_MINUTE


def test_a_fault_is_one_record_with_its_traceback(capsys):
    from app import logs

    logs.RATE.window, logs.RATE.count = 0.0, 0
    try:
        raise RuntimeError("forced")
    except RuntimeError:
        logs.fault("a run failed\nwith a second line")
    err = capsys.readouterr().err
    assert err.startswith("a run failed with a second line\n") and err.count("Traceback (most recent call last)") == 1
    assert "RuntimeError: forced" in err


# -- the app's own log, as app.py writes it ---------------------------------------------------------------------------
# app.py without its model, whose /generate meets a model that fails inside the engine (a fault of the app's own)
FAULTY = (
    "import runpy, sys; import lade_core.checkpoint as checkpoint; checkpoint.bundled_gguf = lambda: None\n"
    "from app.model import MODEL\n"
    "class Fake:\n"
    "    max_positions = 2048\n"
    "    def encode_prompt(self, text): return [1, 2, 3]\n"
    "    def __getattr__(self, name): raise RuntimeError(f'forced fault: the fake model has no {name}')\n"
    "MODEL.get = lambda: Fake()\n"
    "sys.argv = ['app.py']; runpy.run_path('app.py', run_name='__main__')"
)


@pytest.fixture(scope="module")
def logged_app():
    """(url, the log's path) of app.py (its log bounded as `main` bounds it), with the faulty model above."""
    from conftest_app import OUT, serve_app

    with serve_app(["-c", FAULTY], "log-test.log", HF_HUB_OFFLINE="1") as (url, _):
        yield url, OUT / "log-test.log"


def _written(log, since: int, settle: float = 1.0) -> str:
    time.sleep(settle)
    return log.read_bytes()[since:].decode("utf-8", "replace")


@pytest.mark.server
def test_a_refused_generate_is_one_line_and_a_fault_one_traceback(logged_app):
    """Issue 57: a /generate refused for W=99 wrote Gradio's 50-line traceback (its check raised a gr.Error that asks
    for one) and no line of the app's; it writes one line now, what was refused and why and the client as the guard
    counts it. A fault of the app's own (a run that failed in the engine) still logs its traceback, once: the
    engine's frames, where Gradio had printed only the re-raised error's."""
    from gradio_client import Client
    from gradio_client.exceptions import AppError

    url, log = logged_app
    client = Client(url, verbose=False)
    since = log.stat().st_size
    with pytest.raises(AppError, match="must be a whole number from 1 to 32, got 99"):
        client.predict(prompt="Hi", window=99, api_name="/generate")
    written = _written(log, since)
    assert written.splitlines() == [
        "refused: a run from 127.0.0.1: window (W) must be a whole number from 1 to 32, got 99"
    ], written[:2000]
    since = log.stat().st_size
    with pytest.raises(AppError, match="The run failed: forced fault"):
        client.predict(prompt="Hi", max_new_tokens=2, api_name="/generate")
    written = _written(log, since)
    assert written.count("Traceback (most recent call last)") == 1, written[:3000]
    assert "in __getattr__" in written and "RuntimeError: forced fault" in written  # the engine's own frames


@pytest.mark.server
def test_forwarded_hosts_are_host_and_port_and_long_addresses_414(logged_app):
    """Issue 54, item 4: `X-Forwarded-Host: a:b:c` (or a 64 KB address) made Gradio's page, `config`, `info` and
    `openapi.json` raise: a 500 and a 6.5 KB traceback each, 1.9 MB of log in 1.4 s. A forwarded host is host[:port]
    of at most 255 characters (400 otherwise), an address over 8 KB is answered 414, each with one refusal line at
    the log's rate; a valid forwarded host is still Gradio's to build its root URL from (a Space's proxy sets it)."""
    from app import limits

    url, log = logged_app
    since = log.stat().st_size
    with httpx.Client(timeout=30) as http:
        for path in ("", "config", "gradio_api/info"):
            for header in ("x-forwarded-host", "x-gradio-server"):
                for value in ("a:b:c", "h" * 70_000, "example.org:99999"):
                    answer = http.get(url + path, headers={header: value})
                    assert answer.status_code == 400, (path, header, value[:20], answer.status_code)
        long = http.get(url + "config", params={"x": "a" * limits.MAX_ADDRESS_BYTES})
        assert long.status_code == 414, long.status_code
        flood = [http.get(url + "config", headers={"x-forwarded-host": "a:b:c"}).status_code for _ in range(150)]
        assert set(flood) == {400}
        config = http.get(url + "config", headers={"x-forwarded-host": "lecture.example.org:8443"}).json()
        assert config["root"].startswith("http://lecture.example.org:8443"), config["root"]
    written = _written(log, since)
    assert "Traceback" not in written and len(written) < limits.LOG_RECORDS_PER_MINUTE * 200, written[:2000]
    assert written.count("\n") <= limits.LOG_RECORDS_PER_MINUTE
