"""Greedy and sampling verification on hand-worked cases, candidates of equal and of different lengths (n-grams, and
drafts of up to K tokens)."""

import numpy as np

from lade_core.sampling import Sampler
from lade_core.verify import Verdict, verify_greedy, verify_sampled


def _pred(first, branch):
    """Predictions as the engine reads them: the argmax after x, then after each candidate token."""
    branch = np.array(branch)
    return np.concatenate([np.full((len(branch), 1), first), branch], axis=1) if len(branch) else np.zeros((0, 1), int)


def test_greedy_docstring_example():
    v = verify_greedy(np.array([[5, 6, 7], [5, 9, 9]]), _pred(5, [[6, 8, 1], [2, 3, 4]]), 5)
    assert v == Verdict((2, 1), 0, (5, 6, 8)) and v.matched == 2


def test_greedy_full_match_emits_n_tokens():
    v = verify_greedy(np.array([[1, 1, 1], [5, 6, 7]]), _pred(5, [[0, 0, 0], [6, 7, 8]]), 5)
    assert v == Verdict((0, 3), 1, (5, 6, 7, 8))


def test_greedy_ties_go_to_the_first_candidate():
    assert verify_greedy(np.array([[5, 1], [5, 2]]), _pred(5, [[3, 0], [3, 0]]), 5) == Verdict((1, 1), 0, (5, 3))


def test_greedy_without_match_or_candidates_emits_the_next_token():
    assert verify_greedy(np.array([[5, 6]]), _pred(4, [[1, 2]]), 4) == Verdict((0,), -1, (4,))
    assert verify_greedy(np.zeros((0, 2), dtype=int), _pred(4, []), 4) == Verdict((), -1, (4,))
    assert verify_greedy(np.array([[5, 6]]), _pred(4, [[1, 2]]), 4).matched == 0


def test_greedy_drafts_of_different_lengths():
    """A 1-token draft fully accepted (its bonus emitted), beside a 4-token draft that agrees for 3: the longer
    match wins, the padding of the short row never counts as a match.
    candidates (7,) and (7, 8, 9, 3); model: 7 after x, then 8, 9, 1, 4 -> lengths (1, 3), winner 1, (7, 8, 9, 1)."""
    v = verify_greedy([(7,), (7, 8, 9, 3)], [(7, 8), (7, 8, 9, 1, 4)], 7)
    assert v == Verdict((1, 3), 1, (7, 8, 9, 1))
    assert verify_greedy([(7,)], [(7, 8)], 7) == Verdict((1,), 0, (7, 8))  # full match: the bonus token too


def _onehot(v, t):
    p = np.zeros(v)
    p[t] = 1.0
    return p


def test_sampling_with_certain_target_accepts_a_matching_draft_and_its_bonus():
    # target is deterministic: 3 after x, then 4, then 7 -> the candidate (3, 4) is accepted, bonus 7.
    table = {(0, 0): _onehot(10, 3), (0, 1): _onehot(10, 4), (0, 2): _onehot(10, 7)}
    v = verify_sampled([(3, 4)], lambda c, k: table[(c, k)], Sampler(0))
    assert (v.lengths, v.winner, v.accepted) == ((2,), 0, (3, 4, 7))
    assert [d.accepted for d in v.draws] == [True, True] and v.draws[0].prob == 1.0


def test_sampling_a_short_draft_done_hands_over_to_the_longer_one():
    """Candidates (3,) and (3, 4), target certain (3, then 4, then 7): after 3 the short draft is complete, the long
    one still offers 4 (accepted), then the bonus 7; the long draft wins with 2."""
    table = {(0, 0): _onehot(10, 3), (0, 1): _onehot(10, 4), (1, 1): _onehot(10, 4), (1, 2): _onehot(10, 7)}
    v = verify_sampled([(3,), (3, 4)], lambda c, k: table[(c, k)], Sampler(0))
    assert (v.lengths, v.winner, v.accepted) == ((1, 2), 1, (3, 4, 7))


def _first_seed(accepts: bool) -> int:
    """A seed whose second offer (probability 0.5) is accepted, or rejected: both branches are then tested."""
    for seed in range(100):
        rng = Sampler(seed)
        rng.uniform()  # the first offer's draw
        if (rng.uniform() < 0.5) == accepts:
            return seed
    raise AssertionError("no such seed in 0..99")


def test_sampling_rejection_removes_the_token_and_tries_the_next_candidate():
    """Candidate 0 offers token 0 (probability 0): rejected and removed; candidate 1 offers token 1 with 0.5/(1-0)
    = 0.5. One seed where that offer is accepted (emits 1, then 2 and the bonus 0), one where it is rejected (the
    residual holds only token 2). A branch on a single seeded draw would leave one of these untested."""
    target = np.array([0.0, 0.5, 0.5])
    table = {(0, 0): target, (1, 0): target, (1, 1): _onehot(3, 2), (1, 2): _onehot(3, 0)}
    for accepts in (True, False):
        v = verify_sampled([(0, 1), (1, 2)], lambda c, k: table[(c, k)], Sampler(_first_seed(accepts)))
        lengths, winner, emitted, draws = v.lengths, v.winner, v.accepted, v.draws
        assert draws[0].token == 0 and not draws[0].accepted and draws[0].prob == 0.0
        assert draws[1].token == 1 and draws[1].prob == 0.5 and draws[1].residual_mass == 1.0
        assert draws[1].accepted == accepts
        if accepts:
            assert emitted == (1, 2, 0) and lengths == (0, 2) and winner == 1
        else:
            assert emitted == (2,) and winner == -1
