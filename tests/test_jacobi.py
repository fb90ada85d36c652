"""Jacobi decoding is exact too: token-identical to greedy decoding on the benchmark prompts, one forward pass per
step over x and the guess block, and the guess verified as the step's one candidate. Would catch a Jacobi engine that
accepts a guess the model did not confirm, or keeps the wrong entries in its KV cache."""

import numpy as np
import pytest
from conftest import PAIRWISE_TOKENS, REFERENCE_TOKENS, case_id, pairwise

from lade_core import Sampling, jacobi_generate
from lade_core.measure.prompts import load_prompts

pytestmark = pytest.mark.model
WINDOWS = [3, 7]


def _exact(lm, prompt, greedy, window, tokens=REFERENCE_TOKENS):
    run = jacobi_generate(lm, lm.encode_prompt(prompt["prompt"]), window, tokens)
    assert run.tokens == greedy(prompt["id"], tokens), prompt["id"]
    assert all(1 <= len(s.accepted) <= window + 1 for s in run.steps)


@pytest.mark.parametrize(("window", "prompt"), pairwise(WINDOWS, load_prompts()), ids=case_id)
def test_jacobi_equals_greedy_for_each_window_pairwise(lm, greedy, window, prompt):
    _exact(lm, prompt, greedy, window, PAIRWISE_TOKENS)


@pytest.mark.soak
@pytest.mark.parametrize("window", WINDOWS)
def test_jacobi_equals_greedy_on_every_prompt(lm, bench_prompts, greedy, window):
    for p in bench_prompts:
        _exact(lm, p, greedy, window)


def test_each_step_is_the_guess_block_verified_as_one_candidate(lm):
    seen = []
    handle = lm.model.register_forward_pre_hook(
        lambda m, a, kw: seen.append((kw["input_ids"].clone(), kw["cache"].get_seq_length(), kw.get("attention_mask"))),
        with_kwargs=True,
    )
    try:
        run = jacobi_generate(lm, lm.encode_prompt("Count from one to twenty in words."), 5, 30)
    finally:
        handle.remove()
    for step, (ids, past, mask), nxt in zip(run.steps[1:], seen[1:], seen[2:] + [None]):
        guess = step.levels_before[0]
        assert ids[0].tolist() == [step.input_token, *guess] and step.candidates == (guess,)
        assert np.array_equal((mask[0, 0, :, past:] == 0).numpy(), np.tril(np.ones((6, 6), dtype=bool)))
        m = step.match_lengths[0]
        assert list(step.accepted[:m]) == list(guess[:m]) and step.predictions[0][1:] == step.new_level
        if nxt is not None:
            assert nxt[1] == step.position + len(step.accepted)  # x and the accepted guesses stay in the cache
            kept = step.predictions[0][len(step.accepted) :]
            assert run.steps[step.index + 1].levels_before[0][: len(kept)] == kept  # the Jacobi update, shifted


def test_jacobi_sampling_is_reproducible_per_seed(lm):
    """The same sampling seed, the same draws (that they have the model's law is tests/test_sampling.py's)."""
    ids = lm.encode_prompt("Name a colour.")
    a = jacobi_generate(lm, ids, 4, 12, sampling=Sampling(0.8, sample_seed=3))
    b = jacobi_generate(lm, ids, 4, 12, sampling=Sampling(0.8, sample_seed=3))
    assert a.tokens == b.tokens and any(s.draws for s in a.steps[1:])
