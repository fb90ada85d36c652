"""The practitioners' acceptance metrics (lade_core/metrics.py) on a hand-worked run; no model. Would catch a mean
acceptance length that counted steps without a draft, or the prefill, or the bonus token as a drafted one.

The run: a prefill (1 token), then
    step 1: one 3-token draft, 2 accepted, + the model's token     -> 3 tokens   drafted 3, accepted 2
    step 2: no draft                                               -> 1 token    drafted 0
    step 3: a 2-token draft, none accepted                         -> 1 token    drafted 2, accepted 0
    step 4: two 2-token drafts sharing their first token, one full -> 3 tokens   drafted 3 (tree nodes), accepted 2
tokens 9, steps 5: tokens per step 1.8; drafting steps 3: mean acceptance length 1 + 4/3; draft acceptance rate
4/8; drafted per step 8/4 = 2; per position: more than 0 accepted in 2 of 3, more than 1 in 2 of 3.
"""

import pytest

from lade_core.metrics import run_metrics
from lade_core.trace import MethodRun, StepTrace


def pld(index, position, x, accepted, candidate, predictions, matched):
    cands = (candidate,) if candidate else ()
    return StepTrace(
        index,
        "pld",
        position,
        x,
        accepted,
        0.01,
        0.0,
        ngram=4,
        guess=1,
        tree=True,
        candidates=cands,
        predictions=(predictions,) if candidate else (),
        match_lengths=(matched,) if candidate else (),
        winner=0 if matched else -1,
    )


def test_metrics_of_a_hand_worked_run():
    steps = (
        StepTrace(0, "prefill", 9, 5, (1,), 0.01, 0.0),
        pld(1, 10, 1, (2, 3, 4), (2, 3, 9), (2, 3, 4, 0), 2),
        pld(2, 13, 4, (5,), (), (), 0),
        pld(3, 14, 5, (6,), (7, 7), (6, 1, 1), 0),
    )
    tree = StepTrace(
        4,
        "lookahead",
        15,
        6,
        (7, 8, 9),
        0.01,
        0.0,
        window=1,
        ngram=3,
        guess=2,
        tree=True,
        levels_before=((1,), (2,)),
        new_level=(3,),
        candidates=((7, 8), (7, 5)),
        predictions=((7, 8, 9), (7, 8, 9)),
        match_lengths=(2, 1),
        winner=0,
    )
    run = MethodRun((1, 2, 3, 4, 5, 6, 7, 8, 9), (*steps, tree), 0.05)
    m = run_metrics(run)
    assert m["tokens_per_step"] == pytest.approx(9 / 5)
    assert m["drafting_steps"] == 3 and m["drafted_tokens"] == 8 and m["accepted_drafts"] == 4
    assert m["mean_acceptance_length"] == pytest.approx(1 + 4 / 3)
    assert m["draft_acceptance_rate"] == pytest.approx(0.5)
    assert m["drafted_per_step"] == pytest.approx(2.0)
    assert m["per_position_acceptance"] == pytest.approx([2 / 3, 2 / 3])


def test_a_run_that_never_drafts():
    run = MethodRun(
        (1, 2),
        (StepTrace(0, "prefill", 3, 0, (1,), 0.1, 0.0), StepTrace(1, "autoregressive", 4, 1, (2,), 0.1, 0.0)),
        0.2,
    )
    m = run_metrics(run)
    assert m["mean_acceptance_length"] == 1.0 and m["drafted_per_step"] == 0 and m["per_position_acceptance"] == []


def test_every_metric_column_says_what_it_is_called_elsewhere_with_its_source():
    """The methods table used vLLM's counters under the literature's names: each column now has one register entry
    (assets/lab/metrics.json) with this project's definition, the others' names, and a source for each."""
    from lade_core.metrics import RunMetrics, terms

    ids = [t["id"] for t in terms()]
    assert ids == ["tokens_per_step", "mean_acceptance_length", "draft_acceptance_rate"]
    assert set(ids) <= set(RunMetrics.__annotations__)
    for t in terms():
        assert t["label"] and t["ours"] and t["elsewhere"] and t["sources"]
        assert all(s["url"].startswith("https://") and s["where"] for s in t["sources"])
