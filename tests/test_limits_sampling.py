"""The public limits of the sampling settings (app/limits.py `check_sampling`), pure: no server, no model. Also that
a live run's partial traces carry the run's sampling settings (app/live.py `LiveRun.partial`)."""

import math
import types

import gradio as gr
import pytest

from app import limits
from app.live import LiveRun
from lade_core import LookaheadConfig, Sampling
from lade_core.trace import StepTrace

BAD = [
    ((2.5, 1, 0), "temperature must be a number from 0 to 2, got 2.5"),
    ((-0.1, 1, 0), "temperature must be a number from 0 to 2, got -0.1"),
    (("hot", 1, 0), "temperature must be a number from 0 to 2, got 'hot'"),
    ((math.nan, 1, 0), "temperature must be a number from 0 to 2, got nan"),
    ((True, 1, 0), "temperature must be a number from 0 to 2, got True"),
    ((0.7, 0, 0), "top-p must be a number from 0.05 to 1, got 0"),
    ((0.7, 0.01, 0), "top-p must be a number from 0.05 to 1, got 0.01"),
    ((0.7, 1.5, 0), "top-p must be a number from 0.05 to 1, got 1.5"),
    ((0.7, [1], 0), "top-p must be a number from 0.05 to 1, got [1]"),
    ((0.7, 1, -1), "sampling seed must be a whole number from 0 to 2147483647, got -1"),
    ((0.7, 1, 2**31), "sampling seed must be a whole number from 0 to 2147483647, got 2147483648"),
    ((0.7, 1, 1.5), "sampling seed must be a whole number from 0 to 2147483647, got 1.5"),
    ((0.7, 1, "x"), "sampling seed must be a whole number from 0 to 2147483647, got 'x'"),
]


@pytest.mark.parametrize("args, message", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_sampling_settings_get_their_message(args, message):
    with pytest.raises(gr.Error) as err:
        limits.check_sampling(*args)
    assert message in str(err.value)


def test_good_sampling_settings():
    assert limits.check_sampling(0.7, 0.9, 5) == Sampling(temperature=0.7, top_k=0, top_p=0.9, seed=5)
    assert limits.check_sampling(0, 1, 0) == Sampling() and limits.check_sampling(0, 1, 0).greedy
    assert limits.check_sampling(None, None, None) == Sampling()  # a JSON client leaving them out: greedy
    assert limits.check_sampling("2", "0.05", "2147483647") == Sampling(temperature=2.0, top_p=0.05, seed=2**31 - 1)


def test_limits_text_names_the_sampling_limits():
    text = limits.limits_md()
    assert "temperature from 0 (greedy) to 2" in text and "top-p from 0.05 to 1" in text
    assert "sampling seed from 0 to 2,147,483,647" in text


def test_live_partial_carries_the_runs_sampling():
    lm = types.SimpleNamespace(encode_prompt=lambda prompt: [1, 2], name="fake", device="cpu", dtype="torch.float32",
                               token_texts=lambda ids: {i: str(i) for i in ids})
    sampling = Sampling(temperature=0.7, top_p=0.9, seed=3)
    live = LiveRun(lm, "hi", LookaheadConfig(), 8, sampling=sampling)
    live._steps["lookahead"].append(StepTrace(0, "prefill", 0, 2, (5,), 0.1, 0.0))
    run, k = live.partial()
    assert run.sampling == sampling and k == 0 and run.lookahead.tokens == (5,)
    assert LiveRun(lm, "hi", LookaheadConfig(), 8).partial()[0].sampling == Sampling()
