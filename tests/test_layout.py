"""The step layout: the attention mask compared cell by cell with the hand-drawn one, the position ids, the token
tree, and the rows a step reads back (each would catch a mask or a row index that drifts from the layout)."""

import numpy as np

from lade_core.layout import StepLayout

# W=3, N=3 (two levels), two candidates of N-1=2 tokens: the example drawn in lade_core/layout.py.
HAND_DRAWN = """
x    # . . . . . . . . . .
a0   # # . . . . . . . . .
a1   # # # . . . . . . . .
a2   # # # # . . . . . . .
b0   # # . . # . . . . . .
b1   # # # . . # . . . . .
b2   # # # # . . # . . . .
c1_0 # . . . . . . # . . .
c1_1 # . . . . . . # # . .
c2_0 # . . . . . . . . # .
c2_1 # . . . . . . . . # #
"""


def test_mask_matches_the_hand_drawn_example():
    expected = np.array([[c == "#" for c in line.split()[1:]] for line in HAND_DRAWN.strip().splitlines()])
    layout = StepLayout.plain(levels=2, window=3, candidates=2, cand_len=2)
    assert layout.size == 11
    assert np.array_equal(layout.mask(), expected)


def test_positions_follow_the_diagonal_trajectories():
    layout = StepLayout.plain(levels=2, window=3, candidates=2, cand_len=2)
    #                     x  a0 a1 a2 b0 b1 b2 c1 c1 c2 c2
    assert layout.positions().tolist() == [0, 1, 2, 3, 2, 3, 4, 1, 2, 1, 2]
    assert layout.labels() == ["x", "L0.0", "L0.1", "L0.2", "L1.0", "L1.1", "L1.2", "c1.0", "c1.1", "c2.0", "c2.1"]


def test_every_row_sees_a_contiguous_run_of_positions_ending_at_its_own():
    for layout in [
        StepLayout.plain(4, 15, 15, 4),
        StepLayout.plain(1, 5, 0, 1),
        StepLayout.plain(3, 7, 3, 3),
        StepLayout.tree(3, 4, [(5, 6, 7), (5, 6, 9), (5, 1, 2), (8, 1, 2)]),
    ]:
        mask, pos = layout.mask(), layout.positions()
        assert (
            mask.shape == (layout.size, layout.size) and layout.size == 1 + layout.levels * layout.window + layout.nodes
        )
        for row in range(layout.size):
            seen = sorted(pos[mask[row]].tolist())
            assert seen == list(range(pos[row] + 1)), (layout, row)


def test_reasons_agree_with_the_mask():
    layout = StepLayout.plain(2, 3, 2, 2)
    mask = layout.mask()
    for q in range(layout.size):
        for k in range(layout.size):
            assert ("cannot" not in layout.reason(q, k)) == bool(mask[q, k]), (q, k)


def test_token_tree_shares_prefixes_and_sees_only_its_path():
    """The docstring example: 9 candidate tokens fed as 7 nodes; each node sees x, its ancestors and itself."""
    layout = StepLayout.tree(0, 0, [(5, 6, 7), (5, 6, 9), (8, 1, 2)])
    assert layout.paths == ((0, 1, 2), (0, 1, 3), (4, 5, 6)) and layout.parents == (-1, 0, 1, 1, -1, 4, 5)
    assert layout.node_tokens([(5, 6, 7), (5, 6, 9), (8, 1, 2)]) == [5, 6, 7, 9, 8, 1, 2]
    mask = layout.mask()
    #              x  5  6  7  9  8  1  2
    assert mask[4].tolist() == [True, True, True, False, True, False, False, False]  # 9 sees x, 5, 6, itself
    assert mask[6].tolist() == [True, False, False, False, False, True, True, False]
    assert layout.positions().tolist() == [0, 1, 2, 3, 3, 1, 2, 3]


def test_rows_read_back_follow_the_layout():
    """prediction_rows[c] are the kept rows after x and after each token of candidate c; cache_rows keep x and the
    accepted tokens' input rows; in a tree, candidates that share a prefix share those rows."""
    plain = StepLayout.plain(levels=2, window=3, candidates=2, cand_len=2)
    assert plain.logit_rows() == [0, 4, 5, 6, 7, 8, 9, 10]  # x, the newest level, every candidate token
    assert plain.prediction_rows == ((0, 4, 5), (0, 6, 7))
    assert plain.new_level_rows.tolist() == [1, 2, 3]
    assert plain.cache_rows(1, 2) == [0, 9, 10] and plain.cache_rows(0, 0) == [0]
    tree = StepLayout.tree(1, 2, [(5, 6), (5, 7)])
    assert tree.prediction_rows == ((0, 3, 4), (0, 3, 5))
    assert tree.cache_rows(1, 2) == [0, 3, 5]
    assert tree.window_rows(0, 2) == [1, 2]


def test_no_window_and_no_candidates_is_x_alone():
    layout = StepLayout.plain(0, 0, 0, 3)
    assert layout.size == 1 and layout.logit_rows() == [0] and layout.mask().tolist() == [[True]]
    assert layout.prediction_rows == ()
