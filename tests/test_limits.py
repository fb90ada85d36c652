"""The public limits (app/limits.py): tighter bounds over the engine's own settings, each refusal with its message;
pure: no server, no model. Also that a live run's partial traces carry the run's settings (app/live.py)."""

import math
import time
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
    assert limits.check_sampling(0.7, 0.9, 5) == Sampling(temperature=0.7, top_k=0, top_p=0.9, sample_seed=5)
    assert limits.check_sampling(0, 1, 0) == Sampling() and limits.check_sampling(0, 1, 0).greedy
    assert limits.check_sampling(None, None, None) == Sampling()  # a JSON client leaving them out: greedy
    assert limits.check_sampling("2", "0.05", "2147483647") == Sampling(
        temperature=2.0, top_p=0.05, sample_seed=2**31 - 1
    )
    assert limits.check_sampling(0.5, 1, 7.0).sample_seed == 7  # a slider's float for a whole number


def test_limits_text_names_the_sampling_limits():
    text = limits.limits_text()
    assert "temperature from 0 (greedy) to 2" in text and "top-p from 0.05 to 1" in text
    assert "sampling seed from 0 to 2,147,483,647" in text


def test_live_partial_carries_the_runs_settings():
    lm = types.SimpleNamespace(
        encode_prompt=lambda prompt: [1, 2],
        name="fake",
        device="cpu",
        dtype="torch.float32",
        token_texts=lambda ids: {i: str(i) for i in ids},
        vocab_size=10,
        max_positions=64,
        kernels="stock",
    )
    sampling = Sampling(temperature=0.7, top_p=0.9, sample_seed=3)
    live = LiveRun(lm, "hi", LookaheadConfig(5, 3, 2), 8, sampling=sampling)
    live.steps["parallel"].append(StepTrace(0, "prefill", 1, 2, (5,), 0.1, 0.0))
    run = live.partial()
    assert run.sampling == sampling and run.config == LookaheadConfig(5, 3, 2) and run.parallel.tokens == (5,)
    assert run.parallel.stop_reason == "running" and run.baseline.steps == ()
    assert LiveRun(lm, "hi", LookaheadConfig(), 8).partial().sampling == Sampling()


@pytest.mark.parametrize(
    "args, message",
    [
        (("", 7, 4, 7, 32, None), "The prompt is empty"),
        (("x" * 8001, 7, 4, 7, 32, None), "at most 8,000"),
        (("hi\x00", 7, 4, 7, 32, None), "control character (U+0000"),
        (("hi", 40, 4, 7, 32, None), "window (W) must be a whole number from 1 to 32, got 40"),
        (("hi", 7, 9, 7, 32, None), "ngram (N) must be a whole number from 2 to 8, got 9"),
        (("hi", 7, 4, 3.5, 32, None), "guess (G) must be a whole number from 0 to 32, got 3.5"),
        (("hi", 7, 4, 7, 513, None), "max new tokens must be a whole number from 1 to 512, got 513"),
        (("hi", 7, 4, 7, 32, "weird"), "pool policy must be one of paper, output, prompt, got 'weird'"),
        (("hi", 7, 4, 7, 32, 2), "pool policy must be text"),
        (("hi", True, 4, 7, 32, None), "window (W) must be a whole number from 1 to 32, got True"),
        (("hi", 7, math.nan, 7, 32, None), "ngram (N) must be a whole number from 2 to 8, got nan"),
        (("hi", 7, 4, 1e30, 32, None), "guess (G) must be a whole number from 0 to 32, got 1e+30"),
        (("hi", 7, 4, "abc", 32, None), "guess (G) must be a whole number from 0 to 32, got 'abc'"),
        (("hi", None, 4, 7, 32, None), "window (W) must be a whole number from 1 to 32, got None"),
        (("hi", 7, 4, 7, "1" * 50, None), "max new tokens must be a whole number from 1 to 512, got '1111"),
        (("hi", 7, 4, 7, float("inf"), None), "max new tokens must be a whole number from 1 to 512, got inf"),
    ],
)
def test_bad_requests_get_their_message(args, message):
    with pytest.raises(gr.Error) as err:
        limits.check_request(*args)
    assert message in str(err.value)


def test_form_values_arrive_as_floats_and_text():
    """Sliders send 7.0, JSON clients "7": both are the whole number 7 (the same check as an int)."""
    _, config, max_new = limits.check_request("hi", 7.0, "4", " 3 ", 32.0, None)
    assert (config.window, config.ngram, config.guess, max_new) == (7, 4, 3, 32)
    assert all(type(v) is int for v in (config.window, config.ngram, config.guess, max_new))


def test_pool_arrives_as_a_policy_or_as_the_old_flag():
    """`/generate` clients of earlier versions send pool_from_prompt as true/false (or 0/1)."""
    for value, pool in (
        (None, LookaheadConfig().pool),
        (True, "prompt"),
        (1, "prompt"),
        (False, "paper"),
        (0, "paper"),
        ("output", "output"),
    ):
        assert limits.check_request("hi", 7, 4, 7, 32, value)[1].pool == pool


def test_traces_past_the_public_limits_are_not_drawn():
    from lade_core import parse_run
    from lade_core.paths import RUNS
    from lade_core.schema import SchemaError

    run = parse_run((RUNS / "code-class-W7N4G7.json").read_bytes())
    limits.check_trace(run)
    import dataclasses

    wide = dataclasses.replace(run, config=dataclasses.replace(run.config, window=64))
    with pytest.raises(SchemaError, match=r"window \(W\) must be between 1 and 32, got 64"):
        limits.check_trace(wide)


def test_a_race_is_admitted_by_what_its_lanes_prefill():
    """Issue 39, finding 1: at the public maxima a three-method race prefilled a 2,048-token prompt in four lanes
    and held four KV caches at once (43 s and +675 MB for one new token). A request is admitted by lanes x prompt
    tokens: one method at the prompt limit, three at a quarter of the total each."""
    limits.check_cost(limits.MAX_PROMPT_TOKENS, 1)
    limits.check_cost(limits.MAX_LANE_TOKENS // 4, 3)
    with pytest.raises(gr.Error) as err:
        limits.check_cost(limits.MAX_PROMPT_TOKENS, 3)
    said = err.value.message
    assert "2,048 tokens" in said and "4 lanes" in said and "at most 4,096 per run" in said and "1,024" in said


def test_a_run_past_its_budget_ends_with_stop_reason_budget():
    """Issue 39, finding 1: a run at the maxima could hold the engine for many minutes; a live run ends at its first
    step past `budget_s` seconds on the engine (not before it has the engine), every lane with stop_reason "budget",
    and is told why with the limit."""
    from lade_core.decoding import Progress, steps

    lm = types.SimpleNamespace(encode_prompt=lambda prompt: [1, 2])
    live = LiveRun(lm, "hi", LookaheadConfig(), 64, budget_s=0.0)
    assert live._should_stop() is False  # waiting for the engine costs it nothing
    live._engine_since = time.monotonic() - 0.01

    class Decoder:
        def prefill(self):
            return StepTrace(0, "prefill", 1, 2, (5,), 0.1, 0.0)

        def step(self):
            return StepTrace(1, "autoregressive", 2, 5, (6,), 0.1, 0.0)

        def commit(self, tokens):
            pass

    progress = Progress([])
    made = list(steps(Decoder(), frozenset(), 64, live._should_stop, progress))
    assert len(made) == 1 and progress.reason == "budget"
    assert f"limit of {limits.RUN_BUDGET_S:g} s on the engine per run" in limits.budget_text()
