"""The step layout: the attention mask compared cell by cell with the hand-drawn one, and the position ids."""

import numpy as np

from lade_core.layout import StepLayout

# W=3, N=3 (two levels), two candidates of N-1=2 tokens: the example of ../shared/ALGORITHM.md.
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
    layout = StepLayout(levels=2, window=3, candidates=2, cand_len=2)
    assert layout.size == 11
    assert np.array_equal(layout.mask(), expected)


def test_positions_follow_the_diagonal_trajectories():
    layout = StepLayout(levels=2, window=3, candidates=2, cand_len=2)
    #                     x  a0 a1 a2 b0 b1 b2 c1 c1 c2 c2
    assert layout.positions().tolist() == [0, 1, 2, 3, 2, 3, 4, 1, 2, 1, 2]
    assert layout.labels() == ["x", "L0.0", "L0.1", "L0.2", "L1.0", "L1.1", "L1.2", "c1.0", "c1.1", "c2.0", "c2.1"]


def test_every_row_sees_a_contiguous_run_of_positions_ending_at_its_own():
    for layout in [StepLayout(4, 15, 15, 4), StepLayout(1, 5, 0, 1), StepLayout(3, 7, 3, 3)]:
        mask, pos = layout.mask(), layout.positions()
        assert mask.shape == (layout.size, layout.size) and layout.size == 1 + layout.levels * layout.window + layout.candidates * layout.cand_len
        for row in range(layout.size):
            seen = sorted(pos[mask[row]].tolist())
            assert seen == list(range(pos[row] + 1)), (layout, row)


def test_reasons_agree_with_the_mask():
    layout = StepLayout(2, 3, 2, 2)
    mask = layout.mask()
    for q in range(layout.size):
        for k in range(layout.size):
            assert ("cannot" not in layout.reason(q, k)) == bool(mask[q, k]), (q, k)
