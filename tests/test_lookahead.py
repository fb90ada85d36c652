"""Lookahead decoding is exact: its output equals greedy decoding token for token, in fp32, on every benchmark
prompt, at several (W, N, G), under every pool policy, with the token tree; plus the step mechanics, observed on
the model itself (what it receives, what stays in its KV cache) and in the trace.
"""

import numpy as np
import pytest
import torch
from conftest import PAIRWISE_TOKENS, REFERENCE_TOKENS, case_id, pairwise

from lade_core import LookaheadConfig, greedy_generate, lookahead_generate
from lade_core.layout import StepLayout
from lade_core.measure.prompts import load_prompts
from lade_core.pool import replay_pool
from lade_core.trace import CPU_LAYOUTS

pytestmark = pytest.mark.model
CONFIGS = [
    (15, 5, 15, "paper"),
    (15, 5, 15, "prompt"),
    (7, 4, 7, "paper"),
    (7, 4, 7, "output"),
    (7, 4, 7, "prompt"),
    (5, 3, 5, "prompt"),
    (3, 2, 3, "paper"),
]
REPETITIVE = "Write the word 'hello' twenty times, separated by spaces."


PROMPTS = load_prompts()
NAME = "W{}N{}G{}-{}".format


@pytest.fixture(scope="module")
def greedy_outputs(greedy, bench_prompts):
    return {p["id"]: greedy(p["id"], REFERENCE_TOKENS) for p in bench_prompts[:2]}


def _exact(lm, prompt, greedy, wngp, tokens=REFERENCE_TOKENS):
    W, N, G, pool = wngp
    run = lookahead_generate(lm, lm.encode_prompt(prompt["prompt"]), LookaheadConfig(W, N, G, pool=pool), tokens)
    assert run.tokens == greedy(prompt["id"], tokens), prompt["id"]
    assert sum(len(s.accepted) for s in run.steps) == len(run.tokens)
    return run


# `make test`: each setting on a prompt of its own, the prompts taken in turn, for PAIRWISE_TOKENS (the others meet the
# engine in the relatives', Jacobi and numerics tests); every setting on every prompt for REFERENCE_TOKENS in the soak.
# Lookahead runs on the alternating plan of `mixed_lm` against greedy on this machine's own: two matrix routines.
@pytest.mark.parametrize(("wngp", "prompt"), pairwise(CONFIGS, PROMPTS[1::2] + PROMPTS[::2], each=1), ids=case_id)
def test_lookahead_equals_greedy_for_each_setting_on_a_prompt_of_its_own(mixed_lm, greedy, wngp, prompt):
    run = _exact(mixed_lm, prompt, greedy, wngp, PAIRWISE_TOKENS)
    assert sum(len(s.accepted) > 1 for s in run.steps) >= 2  # long enough that verified candidates were accepted


def test_a_mixed_plan_runs_each_forward_on_its_widths_layout(mixed_lm):
    """Lookahead's steps record the layout their forward ran on, and it is the plan's for the tokens they fed."""
    run = lookahead_generate(mixed_lm, mixed_lm.encode_prompt(PROMPTS[0]["prompt"]), LookaheadConfig(4, 3, 4), 16)
    if mixed_lm.plan is None:
        pytest.skip("oneDNN's packed layers are missing here: one layout")
    kinds = {(s.n_input, s.kernels) for s in run.steps[1:]}
    assert kinds and all(k == mixed_lm.plan.at(n) == CPU_LAYOUTS[(n - 1) % 3] for n, k in kinds), kinds
    assert len({k for _, k in kinds}) >= 2 or len({n for n, _ in kinds}) == 1


@pytest.mark.soak
@pytest.mark.parametrize("wngp", CONFIGS, ids=lambda c: NAME(*c))
def test_lookahead_equals_greedy_on_every_prompt(lm, bench_prompts, greedy, wngp):
    for p in bench_prompts:
        _exact(lm, p, greedy, wngp)


@pytest.mark.parametrize(
    "prompts", [pytest.param(1, id="one-prompt"), pytest.param(2, id="two-prompts", marks=pytest.mark.soak)]
)
def test_token_tree_accepts_the_same_tokens_with_fewer_fed(lm, bench_prompts, greedy_outputs, prompts):
    """The tree verifies the same candidates: every step accepts what the plain layout accepts, from fewer tokens (on
    a code prompt whose candidates share prefixes; one more in `make test-soak`)."""
    fed = {False: 0, True: 0}
    for p in bench_prompts[:prompts]:
        ids = lm.encode_prompt(p["prompt"])
        runs = {
            tree: lookahead_generate(lm, ids, LookaheadConfig(7, 4, 7, tree=tree), REFERENCE_TOKENS) for tree in fed
        }
        assert runs[True].tokens == runs[False].tokens == greedy_outputs[p["id"]]
        assert [s.accepted for s in runs[True].steps] == [s.accepted for s in runs[False].steps]
        for tree, run in runs.items():
            fed[tree] += sum(s.n_input for s in run.steps[1:])
    assert fed[True] < fed[False]


def test_multi_token_steps_happen_on_a_repetitive_prompt(lm):
    ids = lm.encode_prompt(REPETITIVE)
    run = lookahead_generate(lm, ids, LookaheadConfig(7, 4, 7, pool="paper"), 80)
    assert run.tokens == greedy_generate(lm, ids, 80).tokens
    full = [s for s in run.steps if len(s.accepted) == 4]  # N tokens: a full match plus the bonus token
    assert len(full) >= 5 and run.compression > 1.5, run.compression


@pytest.mark.parametrize("tree", [False, True], ids=["plain", "tree"])
def test_step_mechanics_as_the_model_sees_them(lm, tree):
    """Capture what the model really receives: the mask equals the layout's, the positions follow it, the input
    has 1 + L*W + nodes tokens, and the KV cache keeps exactly x plus the accepted candidate tokens."""
    seen = []

    def hook(module, args, kwargs):
        seen.append({k: kwargs.get(k) for k in ("input_ids", "position_ids", "attention_mask")})
        seen[-1]["past"] = kwargs["cache"].get_seq_length()

    handle = lm.model.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        run = lookahead_generate(lm, lm.encode_prompt(REPETITIVE), LookaheadConfig(5, 3, 4, tree=tree), 40)
    finally:
        handle.remove()
    assert len(seen) == len(run.steps)  # one forward pass per step, the prefill included
    cand_steps = 0
    for step, call, nxt in zip(run.steps[1:], seen[1:], seen[2:] + [None]):
        layout = step.layout
        q = layout.size
        assert call["input_ids"].shape == (1, q) == (1, 1 + len(step.levels_before) * 5 + layout.nodes)
        mask = call["attention_mask"][0, 0]
        assert mask.shape == (q, call["past"] + q)
        assert torch.all(mask[:, : call["past"]] == 0)  # the committed prefix is visible to all
        assert np.array_equal((mask[:, call["past"] :] == 0).numpy(), layout.mask())
        assert (call["position_ids"][0] - call["past"]).tolist() == layout.positions().tolist()
        assert call["past"] == step.position
        if nxt is not None:  # x and the accepted candidate tokens stay in the cache
            assert nxt["past"] == step.position + len(step.accepted)
        cand_steps += bool(step.candidates)
        if tree:
            assert layout == StepLayout.tree(len(step.levels_before), step.window, step.candidates)
    assert cand_steps > 0


def test_trace_is_consistent(lm, bench_prompts):
    """Warm-up, levels, n-grams and the pool as the trace records them: replaying the added n-grams gives the
    recorded pool size and evictions at every step (a pool size that drifted from the engine's would fail here)."""
    ids = lm.encode_prompt(bench_prompts[0]["prompt"])
    run = lookahead_generate(lm, ids, LookaheadConfig(4, 4, 3, pool="paper"), 48)
    for i, step in enumerate(run.steps[1:], start=1):
        assert step.index == i
        assert step.kind == ("warmup" if i <= 2 else "lookahead")  # N-2 = 2 warm-up steps
        assert len(step.levels_before) == min(i, 3) and all(len(level) == 4 for level in step.levels_before)
        if step.kind == "lookahead":  # the window's columns, then nothing else under the paper's policy
            assert step.ngrams_added == tuple(zip(*step.levels_before, step.new_level))
        if step.kind == "lookahead" and i + 1 < len(run.steps):  # the oldest level drops, the new one joins
            assert run.steps[i + 1].levels_before == step.levels_before[1:] + (step.new_level,)
        assert len(step.candidates) <= 3 and all(len(c) == 3 for c in step.candidates)
        if step.winner >= 0:
            m = step.match_lengths[step.winner]
            assert step.accepted[:m] == step.candidates[step.winner][:m]
        pool = replay_pool((s.ngrams_added for s in run.steps[: i + 1]), 3)
        assert len(pool) == step.pool_size
        assert step.forward_s > 0 and step.overhead_s >= 0


def test_output_policy_adds_the_texts_ngrams(lm, bench_prompts):
    ids = lm.encode_prompt(bench_prompts[0]["prompt"])
    run = lookahead_generate(lm, ids, LookaheadConfig(4, 3, 3, pool="output"), 24)
    text = list(ids) + list(run.steps[0].accepted)
    for step in run.steps[1:]:
        window = len(step.new_level) if len(step.levels_before) == 2 else 0
        text_grams = step.ngrams_added[window:]
        assert text_grams == tuple(
            tuple((text + list(step.accepted))[j : j + 3])
            for j in range(len(text) - 2, len(text) + len(step.accepted) - 2)
        )
        text += step.accepted
    assert run.steps[0].ngrams_added == ()  # the prompt's n-grams only under the "prompt" policy


def test_guess_zero_is_one_token_per_step(lm, bench_prompts):
    ids = lm.encode_prompt(bench_prompts[1]["prompt"])
    run = lookahead_generate(lm, ids, LookaheadConfig(4, 3, 0), 24)
    assert all(len(s.accepted) == 1 and not s.candidates for s in run.steps)
    assert run.tokens == greedy_generate(lm, ids, 24).tokens


def test_stops_exactly_at_the_budget_and_at_eos(lm):
    ids = lm.encode_prompt(REPETITIVE)
    for budget in (1, 2, 7, 13):
        run = lookahead_generate(lm, ids, LookaheadConfig(7, 4, 7), budget)
        assert len(run.tokens) == budget and run.stop_reason == "length"
    ids = lm.encode_prompt("Say only the word yes.")
    run = lookahead_generate(lm, ids, LookaheadConfig(3, 3, 3), 200)
    assert run.stop_reason == "eos" and run.tokens[-1] in lm.eos_ids
    assert run.tokens == greedy_generate(lm, ids, 200).tokens


def test_window_narrows_at_the_end_of_the_context(lm, monkeypatch):
    """A request greedy serves is never refused for the window's sake: near the end of the context the window
    narrows so that no step feeds a position past it, and the output stays exact."""
    ids = lm.encode_prompt(REPETITIVE)
    monkeypatch.setattr(type(lm), "max_positions", property(lambda self: len(ids) + 20))
    run = lookahead_generate(lm, ids, LookaheadConfig(7, 4, 7), 20)
    assert run.tokens == greedy_generate(lm, ids, 20).tokens
    for step in run.steps[1:]:
        reach = step.position + int(step.layout.positions().max()) if step.layout.size > 1 else step.position
        assert reach < len(ids) + 20
    assert any(step.window < 7 for step in run.steps[1:])


def test_cancellation_between_steps(lm):
    calls = []
    run = lookahead_generate(
        lm,
        lm.encode_prompt(REPETITIVE),
        LookaheadConfig(),
        100,
        on_step=calls.append,
        should_stop=lambda: len(calls) >= 3,
    )
    assert run.stop_reason == "cancelled" and len(run.steps) == 3


def test_seeded_window_is_reproducible(lm):
    ids = lm.encode_prompt(REPETITIVE)
    a = lookahead_generate(lm, ids, LookaheadConfig(5, 3, 5, window_seed=7), 16)
    b = lookahead_generate(lm, ids, LookaheadConfig(5, 3, 5, window_seed=7), 16)
    assert [s.levels_before for s in a.steps] == [s.levels_before for s in b.steps]
