"""Run traces: a recorded run survives JSON round trips, and the loader refuses anything else, clearly."""

import json

import pytest

from lade_core import LookaheadConfig, RunTrace, TraceError, parse_run, record_run
from lade_core.trace import VERSION


@pytest.fixture(scope="module")
def run(lm):
    return record_run(lm, "Write the word 'hello' ten times.", LookaheadConfig(5, 3, 4), 24, title="hello")


def test_round_trip_is_equal(run):
    again = RunTrace.from_json(run.to_json())
    assert again == run
    assert again.lookahead.tokens == run.greedy.tokens
    assert run.text(run.lookahead.tokens).count("ello") >= 3


def _doc(run):
    return json.loads(run.to_json())


@pytest.mark.parametrize(
    "breakage, message",
    [
        (lambda d: d.update(version=VERSION + 1), "version"),
        (lambda d: d.update(schema="something-else"), "not a Lookahead Decoding Explorer trace"),
        (lambda d: d["run"].pop("lookahead"), "must have the fields"),
        (lambda d: d["run"]["config"].update(window=0), "window"),
        (lambda d: d["run"]["config"].update(evil="x"), "unknown config fields"),
        (lambda d: d["run"]["lookahead"]["steps"][1].update(accepted="abc"), "accepted"),
        (lambda d: d["run"]["lookahead"]["steps"][1].update(kind="magic"), "unknown step kind"),
        (lambda d: d["run"]["lookahead"]["steps"].pop(), "do not add up"),
        (lambda d: d["run"]["lookahead"]["steps"][2].update(levels_before=[[1, 2]]), "window levels"),
        (lambda d: d["run"]["token_text"].update(x="y"), "token_text"),
        (lambda d: d["run"].update(prompt=5), "prompt"),
    ],
)
def test_loader_errors_are_clear(run, breakage, message):
    doc = _doc(run)
    breakage(doc)
    with pytest.raises(TraceError, match=message):
        parse_run(json.dumps(doc))


def test_truncated_empty_and_oversize_files(run):
    text = run.to_json()
    with pytest.raises(TraceError, match="broken or truncated"):
        parse_run(text[: len(text) // 2])
    with pytest.raises(TraceError, match="broken or truncated"):
        parse_run("")
    with pytest.raises(TraceError, match="limit"):
        parse_run(text, max_bytes=1000)
    with pytest.raises(TraceError):
        parse_run(b"\xff\xfe\x00garbage")
    with pytest.raises(TraceError):
        parse_run("[1, 2, 3]")
