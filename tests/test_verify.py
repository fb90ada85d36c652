"""Greedy and sampling verification on hand-worked cases."""

import numpy as np

from lade_core.sampling import Sampler
from lade_core.verify import verify_greedy, verify_sampled


def test_greedy_docstring_example():
    lengths, winner, emitted = verify_greedy(5, np.array([[5, 6, 7], [5, 9, 9]]), np.array([[6, 8, 1], [2, 3, 4]]))
    assert lengths == [2, 1] and winner == 0 and emitted == [5, 6, 8]


def test_greedy_full_match_emits_n_tokens():
    lengths, winner, emitted = verify_greedy(5, np.array([[1, 1, 1], [5, 6, 7]]), np.array([[0, 0, 0], [6, 7, 8]]))
    assert lengths == [0, 3] and winner == 1 and emitted == [5, 6, 7, 8]


def test_greedy_ties_go_to_the_first_candidate():
    lengths, winner, emitted = verify_greedy(5, np.array([[5, 1], [5, 2]]), np.array([[3, 0], [3, 0]]))
    assert lengths == [1, 1] and winner == 0 and emitted == [5, 3]


def test_greedy_without_match_or_candidates_emits_the_next_token():
    assert verify_greedy(4, np.array([[5, 6]]), np.array([[1, 2]])) == ([0], -1, [4])
    assert verify_greedy(4, np.zeros((0, 2), dtype=int), np.zeros((0, 2), dtype=int)) == ([], -1, [4])


def _onehot(v, t):
    p = np.zeros(v)
    p[t] = 1.0
    return p


def test_sampling_with_certain_target_accepts_a_matching_draft_and_its_bonus():
    # target is deterministic: 3 after x, then 4, then 7 -> the candidate (3, 4) is accepted, bonus 7.
    table = {(0, 0): _onehot(10, 3), (0, 1): _onehot(10, 4), (0, 2): _onehot(10, 7)}
    lengths, winner, emitted, draws = verify_sampled([(3, 4)], lambda c, k: table[(c, k)], Sampler(0))
    assert (lengths, winner, emitted) == ([2], 0, [3, 4, 7])
    assert [d.accepted for d in draws] == [True, True] and draws[0].prob == 1.0


def test_sampling_rejection_removes_the_token_and_tries_the_next_candidate():
    target = np.array([0.0, 0.5, 0.5])
    table = {(0, 0): target, (1, 0): target, (1, 1): _onehot(3, 2), (1, 2): _onehot(3, 0)}
    # candidate 0 offers token 0 (probability 0): rejected; candidate 1 offers 1 with probability 0.5/(1-0) = 0.5.
    lengths, winner, emitted, draws = verify_sampled([(0, 1), (1, 2)], lambda c, k: table[(c, k)], Sampler(3))
    assert draws[0].token == 0 and not draws[0].accepted and draws[0].prob == 0.0
    assert draws[1].token == 1 and draws[1].prob == 0.5 and draws[1].residual_mass == 1.0
    if draws[1].accepted:
        assert emitted == [1, 2, 0] and lengths == [0, 2] and winner == 1
    else:  # the residual holds only token 2
        assert emitted == [2] and winner == -1
