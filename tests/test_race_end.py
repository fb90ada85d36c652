"""A live race says how it ended (issue 49): a race the server's time limit stopped showed "As far as each lane got,
the texts are identical" above a lookahead lane badged "≠ Differs from greedy decoding from token #35 on" (it had
tokens #0-#34, every one greedy's), and both cut-short lanes read "✓ done (budget)". Now each lane says it finished
(its tokens) or was stopped, and by what, after k tokens, with no success mark on a lane that did not finish; the
texts are compared over the tokens both lanes wrote, and a lane cut short is never called different for tokens it
did not write. The page's own scripts draw the race box, the output panels and the methods table
(tests/js/race_end.cjs, under node), and each sentence is checked against one computed here from the trace."""

import itertools
import json
import re
import shutil
import subprocess
from dataclasses import replace

import pytest

from app import gallery
from app.render.payload import payload
from lade_core.paths import ROOT

RUNNER = ROOT / "tests" / "js" / "race_end.cjs"
TIME_LIMIT = "by the server's time limit for one run"
STOP = "before its end (Stop, or nobody left following it)"


def plural(n: int, one: str) -> str:
    return f"{n} {one}{'' if n == 1 else 's'}"


def cut(method, steps: int, reason: str):
    """A lane as a race stopped after its first `steps` steps leaves it."""
    kept = method.steps[:steps]
    return replace(method, steps=kept, tokens=tuple(t for s in kept for t in s.accepted), stop_reason=reason)


def drawn(runs) -> list[dict]:
    node = shutil.which("node")
    assert node, "node is needed (make install brings the npm dev tools)"
    doc = json.dumps({"payloads": [payload(r, lab=False) for r in runs]})
    done = subprocess.run([node, str(RUNNER)], input=doc, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def common(a, b) -> tuple[int, int]:
    """The tokens both wrote and the first of them where the texts part (-1: none)."""
    n = min(len(a), len(b))
    return n, next((i for i in range(n) if a[i] != b[i]), -1)


def expected(run) -> list[str]:
    """How a stopped race ended, sentence by sentence, from its trace."""
    why = {"budget": TIME_LIMIT, "cancelled": STOP}
    ended = {
        "eos": "it wrote the end of its answer",
        "length": f"it wrote the {run.max_new_tokens} new tokens asked for",
    }
    budget = any(m.stop_reason == "budget" for m in (run.parallel, run.baseline))
    out = [
        "The race was stopped at the server's time limit for one run, every lane as far as it got."
        if budget
        else "The race was stopped before its end, every lane as far as it got."
    ]
    for name, m in (("Lookahead", run.parallel), ("Greedy", run.baseline)):
        tokens, steps = plural(len(m.tokens), "token"), f"{plural(len(m.steps), 'step')}, the prompt's included"
        out.append(
            f"{name} was stopped {why[m.stop_reason]} after {tokens} ({steps})."
            if m.stop_reason in why
            else f"{name} finished: {tokens} in {steps} ({ended[m.stop_reason]})."
        )
    a, b = run.parallel.tokens, run.baseline.tokens
    n, part = common(a, b)
    shorter = run.parallel if len(a) < len(b) else run.baseline if len(b) < len(a) else None
    if part < 0 and shorter is not None and shorter.stop_reason not in why:
        part = n  # the shorter lane finished there and the other wrote on: they differ there
    out.append(
        f"Lookahead's text differs from greedy's from token #{part} on."
        if part >= 0
        else f"Lookahead's text is the same as greedy's over the {plural(n, 'token')} both wrote."
    )
    out.append(
        "A lane stopped before its end has no time to its end, so the race's times are no speed-up and it gets no "
        "verdict."
    )
    return out


@pytest.fixture(scope="module")
def recorded():
    run = gallery.load("code-class-W7N4G7")  # lookahead's text is greedy's, token for token
    assert run.parallel.tokens == run.baseline.tokens
    return run


def test_a_race_the_budget_stopped_says_how_each_lane_ended(recorded):
    """Lookahead stopped after 35 tokens, greedy after 40, both by the server's time limit, every token greedy's:
    the race's summary, sentence by sentence; no lane marked as done; the lookahead lane's badge and table cell say
    the texts agree over the 35 tokens both wrote, never that they differ."""
    k = next(i for i in range(len(recorded.parallel.steps)) if len(cut(recorded.parallel, i, "").tokens) >= 35)
    run = replace(recorded, parallel=cut(recorded.parallel, k, "budget"), baseline=cut(recorded.baseline, 40, "budget"))
    la, greedy = len(run.parallel.tokens), len(run.baseline.tokens)
    assert la < greedy
    got = drawn([run])[0]
    assert got["title"] == " ".join(expected(run)), got["title"]
    assert got["sentences"] == expected(run)
    for line in got["lanes"]:
        assert "✓" not in line and "done" not in line and f"stopped {TIME_LIMIT}" in line, line
    badge = got["parallel"]["badge"]
    assert badge == (
        f"= The same as greedy decoding over the {la} tokens both wrote (float32); lookahead stopped {TIME_LIMIT} "
        f"after {la} tokens, greedy stopped {TIME_LIMIT} after {greedy} tokens."
    ), badge
    assert got["parallel"]["status"] == (
        f"Lookahead was stopped {TIME_LIMIT} after {la} tokens ({k} steps, the prompt's included); steps 0 to {k - 1}."
    ), got["parallel"]["status"]
    row = next(r for r in got["table"] if r[0] == "Lookahead")
    assert row[-1] == f"= the same over the {la} tokens both wrote", row
    assert row[-2] == "– (stopped)", row  # no speed-up of lanes stopped at once
    # nor in the honest note under it (the walk found "the measured wall-clock ratio is 0.95x" over 29 and 40 tokens)
    assert "wall-clock ratio is" not in got["honest"], got["honest"]
    assert "did not all finish, so their times cover different tokens and give no wall-clock ratio" in got["honest"]


def test_a_stopped_race_says_where_texts_differ_and_where_a_lane_finished(recorded):
    """A token both lanes wrote differs: the texts differ from there. A lane that finished before the other was
    stopped differs where it ended, since the other wrote on; Stop's words, not the budget's; the finished lane
    carries the success mark and the stopped one none."""
    la = cut(recorded.parallel, 20, "cancelled")
    greedy = cut(recorded.baseline, 30, "cancelled")
    changed = replace(greedy, tokens=(*greedy.tokens[:7], greedy.tokens[7] + 1, *greedy.tokens[8:]))
    differs = replace(recorded, parallel=la, baseline=changed)
    finished = replace(recorded, parallel=replace(la, stop_reason="eos"), baseline=greedy)
    got = drawn([differs, finished])
    for run, g in zip((differs, finished), got, strict=True):
        assert g["title"] == " ".join(expected(run)), g["title"]
        assert g["sentences"] == expected(run)
    assert "differs from greedy's from token #7 on" in got[0]["title"]
    assert got[0]["parallel"]["badge"] == "≠ Differs from greedy decoding from token #7 on (float32)."
    n = len(la.tokens)
    assert f"differs from greedy's from token #{n} on" in got[1]["title"]
    assert got[1]["lanes"][0].endswith("· ✓ finished (it wrote the end of its answer)"), got[1]["lanes"]
    assert got[1]["lanes"][1].endswith(f"· stopped {STOP}"), got[1]["lanes"]


def test_a_finished_race_keeps_its_marks(recorded):
    """Both lanes finished, token for token the same: identical, each lane finished with its mark."""
    got = drawn([recorded])[0]
    assert got["title"].startswith("Finished.") and got["title"].endswith("The texts are identical, token for token.")
    assert (
        got["parallel"]["badge"]
        == f"✓ Identical to greedy decoding: all {len(recorded.parallel.tokens)} tokens (float32)."
    )
    m, asked = recorded.parallel, f"it wrote the {recorded.max_new_tokens} new tokens asked for"
    assert got["parallel"]["status"] == (
        f"Lookahead finished: {len(m.tokens)} tokens in {len(m.steps)} steps, the prompt's included ({asked}); "
        f"steps 0 to {len(m.steps) - 1}."
    ), got["parallel"]["status"]
    want = f"· ✓ finished ({asked})"
    assert all(line.endswith(want) for line in got["lanes"]), got["lanes"]
    assert re.search(r"so the measured wall-clock ratio is \d+\.\d\dx \(greedy time", got["honest"]), got["honest"]


def test_a_stopped_run_is_told_why_by_its_own_stop_reasons(recorded):
    """Why a run stopped was chosen in two places (app/events.py): following the run, by the live run's flags, and
    settling it after the page's Run event was cancelled, always "Live run stopped.", though the server's time limit
    had stopped it. Now both read the run's own stop reasons (`events.why_stopped`): a race a lane of which ran out
    of the time limit is told so however it is settled."""
    import weakref
    from types import SimpleNamespace

    from app import events, limits

    budget = replace(
        recorded, parallel=cut(recorded.parallel, 10, "budget"), baseline=cut(recorded.baseline, 12, "budget")
    )
    stop = replace(
        budget,
        parallel=replace(budget.parallel, stop_reason="cancelled"),
        baseline=replace(budget.baseline, stop_reason="cancelled"),
    )
    assert events.why_stopped(budget) == limits.budget_text()
    assert events.why_stopped(stop) == events.STOPPED
    assert json.loads(events.stopped("live-x", budget))["notice"] == limits.budget_text()

    # settled after its Run event was cancelled, the engine having ended it at its time limit
    class Ended:  # what settling reads of a live run that has ended
        handle, stopping, ended, result, watchers = "live-x", True, True, budget, 0
        steps = {"parallel": budget.parallel.steps}

        def leave(self, session=None):
            pass

        def wait(self, timeout=None):
            pass

    live = Ended()
    with events._ended_lock:
        events._ended["budget-session"] = (live.handle, weakref.ref(live))
    value = json.loads(events.settle_run(SimpleNamespace(session_hash="budget-session")))
    assert value["run"] == "live-x" and value["step"] == "last" and value["notice"] == limits.budget_text(), value


def test_a_steps_seconds_and_the_mean_step_time_are_pythons():
    """A step's seconds and the mean step time were computed in three places (trace.py and app/speed.py; the page's
    lade-run.js; the browser engine's clock, lade-engine.js), with nothing holding them together. Python is the home;
    on every gallery run, every lane, the page's and the engine's copies give Python's: each step's seconds exactly,
    the running totals, the mean step and forward times (the prefill left out) and a lane's whole time to the last
    bits of a float (Python's fmean sums exactly)."""
    import math

    from app import speed
    from app.render.payload import lane_methods
    from lade_core.schema import to_data

    node = shutil.which("node")
    assert node, "node is needed (make install brings the npm dev tools)"
    runs = [gallery.load(n) for n in gallery.names()]
    doc = json.dumps({"traces": [to_data(r) for r in runs]})
    done = subprocess.run(
        [node, str(ROOT / "tests" / "js" / "timing.cjs")], input=doc, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    close = lambda a, b: math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)  # noqa: E731
    for run, got in zip(runs, json.loads(done.stdout), strict=True):
        lanes = lane_methods(run)
        assert got.keys() == lanes.keys(), run.title
        for lane, m in lanes.items():
            g, want = got[lane], [s.seconds for s in m.steps]
            assert g["seconds"] == want and g["engine"] == want, (run.title, lane)
            assert all(close(a, b) for a, b in zip(g["totals"], itertools.accumulate(want), strict=True))
            assert close(g["mean_step_s"], speed.mean_step_s(m)), (run.title, lane)
            assert close(g["mean_forward_s"], speed.mean_forward_s(m)), (run.title, lane)
            assert close(g["time"], sum(want)), (run.title, lane)


def test_a_live_race_the_engine_stops_at_its_budget_ends_as_its_trace_says(lm):
    """A live race on the engine, on a prompt written now, stopped by a budget of one second on the engine: its
    lanes end "budget", and the page's summary of it, sentence by sentence, and the notice the visitor is told are
    those its own trace gives."""
    import secrets

    from app import events, limits
    from app.live import LiveRun
    from lade_core.config import LookaheadConfig

    word = secrets.token_hex(3)
    prompt = f"Write a Python class named Queue{word} with methods to add, remove and count items, and explain it."
    live = LiveRun(lm, prompt, LookaheadConfig(window=4, ngram=3, guess=4), 256, budget_s=1.0)
    live.start()
    assert live.wait(300) and live.error is None, live.error
    run = live.result
    assert {run.parallel.stop_reason, run.baseline.stop_reason} == {"budget"}, (
        run.parallel.stop_reason,
        run.baseline.stop_reason,
    )
    got = drawn([run])[0]
    assert got["sentences"] == expected(run) and got["title"] == " ".join(expected(run)), got["title"]
    assert all("✓" not in line for line in got["lanes"]), got["lanes"]
    assert json.loads(events.stopped("live-x", run))["notice"] == limits.budget_text()


def test_a_finished_race_says_where_a_text_parts_from_greedys(recorded):
    """Both lanes finished, the texts parting at token #9: the race's summary said "The texts differ."; now it says
    where, as the badge does."""
    b = recorded.baseline.tokens
    parted = replace(recorded, baseline=replace(recorded.baseline, tokens=(*b[:9], b[9] + 1, *b[10:])))
    got = drawn([parted])[0]
    assert got["title"].endswith(" Lookahead's text differs from greedy's from token #9 on."), got["title"]
    assert got["parallel"]["badge"] == "≠ Differs from greedy decoding from token #9 on (float32)."


def test_the_browser_race_compares_texts_by_the_same_rule(recorded):
    """The race in the visitor's browser compares its texts by the page's one rule (`Run.against`, no copy of its
    own): stopped, over the tokens both lanes wrote; a lane that finished where the other wrote on parts there."""
    agree = replace(
        recorded, parallel=cut(recorded.parallel, 12, "cancelled"), baseline=cut(recorded.baseline, 30, "cancelled")
    )
    ended = replace(agree, parallel=replace(agree.parallel, stop_reason="eos"))
    said = [g["browser"][2] for g in drawn([agree, ended])]
    n = len(agree.parallel.tokens)
    assert said[0].endswith(f"; over the {n} tokens both lanes wrote, the texts are identical."), said[0]
    assert said[1].endswith(f"; the texts differ from token #{n} on."), said[1]
