"""Lookahead decoding is exact: its output equals greedy decoding token for token, in fp32, on every benchmark
prompt, at several (W, N, G), with and without a prompt-seeded pool. Plus the step mechanics, observed on the model.
"""

import numpy as np
import pytest
import torch

from lade_core import LookaheadConfig, greedy_generate, lookahead_generate

CONFIGS = [(15, 5, 15), (7, 4, 7), (5, 3, 5), (3, 2, 3)]
MAX_NEW = 64


@pytest.fixture(scope="module")
def greedy_outputs(lm, bench_prompts):
    return {p["id"]: greedy_generate(lm, lm.encode_prompt(p["prompt"]), MAX_NEW).tokens for p in bench_prompts}


@pytest.mark.parametrize("seeded", [False, True], ids=["plain", "prompt-pool"])
@pytest.mark.parametrize("wng", CONFIGS, ids=lambda c: "W{}N{}G{}".format(*c))
def test_lookahead_equals_greedy_on_every_prompt(lm, bench_prompts, greedy_outputs, wng, seeded):
    config = LookaheadConfig(*wng, pool_from_prompt=seeded)
    for p in bench_prompts:
        run = lookahead_generate(lm, lm.encode_prompt(p["prompt"]), config, MAX_NEW)
        assert run.tokens == greedy_outputs[p["id"]], p["id"]
        assert sum(len(s.accepted) for s in run.steps) == len(run.tokens)


REPETITIVE = "Write the word 'hello' twenty times, separated by spaces."


def test_multi_token_steps_happen_on_a_repetitive_prompt(lm):
    ids = lm.encode_prompt(REPETITIVE)
    run = lookahead_generate(lm, ids, LookaheadConfig(7, 4, 7), 80)
    assert run.tokens == greedy_generate(lm, ids, 80).tokens
    full = [s for s in run.steps if len(s.accepted) == 4]  # N tokens: a full match plus the bonus token
    assert len(full) >= 5 and run.compression > 1.5, run.compression


def test_step_mechanics_as_the_model_sees_them(lm):
    """Capture what the model really receives: the mask equals the layout's, the positions follow it, the input
    has 1 + L*W + g(N-1) tokens, and the KV cache keeps exactly x plus the accepted candidate tokens."""
    seen = []

    def hook(module, args, kwargs):
        seen.append({k: kwargs.get(k) for k in ("input_ids", "position_ids", "attention_mask", "cache")})
        seen[-1]["past"] = kwargs["cache"].get_seq_length()

    handle = lm.model.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        ids = lm.encode_prompt(REPETITIVE)
        config = LookaheadConfig(5, 3, 4, pool_from_prompt=True)
        run = lookahead_generate(lm, ids, config, 40)
    finally:
        handle.remove()
    assert len(seen) == len(run.steps)  # one forward pass per step, the prefill included
    cand_steps = 0
    for step, call, nxt in zip(run.steps[1:], seen[1:], seen[2:] + [None]):
        layout = step.layout
        q = layout.size
        assert call["input_ids"].shape == (1, q) == (1, 1 + len(step.levels_before) * 5 + len(step.candidates) * 2)
        mask = call["attention_mask"][0, 0]
        assert mask.shape == (q, call["past"] + q)
        assert torch.all(mask[:, : call["past"]] == 0)  # the committed prefix is visible to all
        assert np.array_equal((mask[:, call["past"]:] == 0).numpy(), layout.mask())
        assert (call["position_ids"][0] - call["past"]).tolist() == layout.positions().tolist()
        assert call["past"] == step.position
        if nxt is not None:  # x and the accepted candidate tokens stay in the cache
            assert nxt["past"] == step.position + len(step.accepted)
        cand_steps += bool(step.candidates)
    assert cand_steps > 0


def test_trace_is_consistent(lm, bench_prompts):
    ids = lm.encode_prompt(bench_prompts[0]["prompt"])
    run = lookahead_generate(lm, ids, LookaheadConfig(4, 4, 3), 48)
    pool_size = 0
    for i, step in enumerate(run.steps[1:], start=1):
        assert step.index == i
        assert step.kind == ("warmup" if i <= 2 else "lookahead")  # N-2 = 2 warm-up steps
        assert len(step.levels_before) == min(i, 3) and all(len(level) == 4 for level in step.levels_before)
        assert step.levels_after[-1] == step.new_level
        if step.kind == "lookahead":
            assert step.ngrams_added == tuple(zip(*step.levels_before, step.new_level))
            assert step.levels_after == step.levels_before[1:] + (step.new_level,)
        assert len(step.candidates) <= 3 and all(len(c) == 3 for c in step.candidates)
        if step.winner >= 0:
            m = step.match_lengths[step.winner]
            assert step.accepted[:m] == step.candidates[step.winner][:m]
        pool_size += len(step.ngrams_added) - len(step.ngrams_evicted)
        assert step.forward_s > 0 and step.overhead_s >= 0


def test_guess_zero_is_one_token_per_step(lm, bench_prompts):
    ids = lm.encode_prompt(bench_prompts[1]["prompt"])
    run = lookahead_generate(lm, ids, LookaheadConfig(4, 3, 0), 24)
    assert all(len(s.accepted) == 1 and not s.candidates for s in run.steps)
    assert run.tokens == greedy_generate(lm, ids, 24).tokens


def test_stops_exactly_at_the_budget_and_at_eos(lm):
    ids = lm.encode_prompt(REPETITIVE)
    for budget in (1, 2, 7, 13):
        run = lookahead_generate(lm, ids, LookaheadConfig(7, 4, 7, pool_from_prompt=True), budget)
        assert len(run.tokens) == budget and run.stop_reason == "length"
    ids = lm.encode_prompt("Say only the word yes.")
    run = lookahead_generate(lm, ids, LookaheadConfig(3, 3, 3), 200)
    assert run.stop_reason == "eos" and run.tokens[-1] in lm.eos_ids
    assert run.tokens == greedy_generate(lm, ids, 200).tokens


def test_cancellation_between_steps(lm):
    calls = []
    run = lookahead_generate(lm, lm.encode_prompt(REPETITIVE), LookaheadConfig(), 100,
                             on_step=calls.append, should_stop=lambda: len(calls) >= 3)
    assert run.stop_reason == "cancelled" and len(run.steps) == 3


def test_seeded_window_is_reproducible(lm):
    ids = lm.encode_prompt(REPETITIVE)
    a = lookahead_generate(lm, ids, LookaheadConfig(5, 3, 5, seed=7), 16)
    b = lookahead_generate(lm, ids, LookaheadConfig(5, 3, 5, seed=7), 16)
    assert [s.levels_before for s in a.steps] == [s.levels_before for s in b.steps]
