"""The greedy baseline equals `model.generate(do_sample=False)` token for token, one token per step. Would catch a
baseline that drifts from transformers' own greedy decoding, or steps that stop emitting one token each."""

import pytest
import torch

from lade_core import greedy_generate


@pytest.mark.parametrize("index", [0, 2, 4, 7])
def test_greedy_equals_generate(lm, bench_prompts, greedy, index):
    """The session's greedy reference (`autoregressive_generate`, decoded once per test run) against transformers;
    the steps of a short run: one token each, after the prefill."""
    prompt = bench_prompts[index]
    ids = lm.encode_prompt(prompt["prompt"])
    with torch.inference_mode():
        ref = lm.model.generate(torch.tensor([ids]), max_new_tokens=40, do_sample=False)[0, len(ids) :].tolist()
    assert list(greedy(prompt["id"], 40)) == ref
    run = greedy_generate(lm, ids, 8)
    assert list(run.tokens) == ref[:8] and [len(s.accepted) for s in run.steps] == [1] * len(run.tokens)
    assert run.steps[0].kind == "prefill" and all(s.kind == "autoregressive" for s in run.steps[1:])


def test_stops_at_eos_and_keeps_it(lm):
    run = greedy_generate(lm, lm.encode_prompt("Say only the word yes."), 200)
    assert run.stop_reason == "eos" and run.tokens[-1] in lm.eos_ids and len(run.tokens) < 200


def test_bad_requests_are_refused_with_numbers(lm):
    with pytest.raises(ValueError, match="max_new_tokens"):
        greedy_generate(lm, [1, 2], 0)
    with pytest.raises(ValueError, match="context of 8192"):
        greedy_generate(lm, [1] * 8190, 10)
