"""The layout of one step's input: which token sits where, at which position, and what it may attend to.

A step feeds `[x] + level_0 + ... + level_{L-1} + cand_1 + ... + cand_g`: the last accepted token x (not yet in the
KV cache), L window levels of W tokens, and g candidates of N-1 tokens. Offsets below are relative to x's position p.

    x              position 0
    window (l, j)  position 1 + l + j     (level l, column j: column j is a diagonal Jacobi trajectory)
    cand (c, k)    position 1 + k

Attention among the new tokens (everything also sees the whole KV cache, i.e. the committed prefix):
    x sees itself; window (l, j) sees x, level 0 columns 0..j, and column j of levels 1..l;
    cand (c, k) sees x and cand c tokens 0..k. The window and the candidates never see each other.

Example, W=3, L=2, g=2, N-1=2 (a = level 0, b = level 1, c = candidates, `#` visible; row = query):

              x  a0 a1 a2 b0 b1 b2 c1 c1 c2 c2
    x   (p)   #  .  .  .  .  .  .  .  .  .  .
    a0  (p+1) #  #  .  .  .  .  .  .  .  .  .
    a1  (p+2) #  #  #  .  .  .  .  .  .  .  .
    a2  (p+3) #  #  #  #  .  .  .  .  .  .  .
    b0  (p+2) #  #  .  .  #  .  .  .  .  .  .
    b1  (p+3) #  #  #  .  .  #  .  .  .  .  .
    b2  (p+4) #  #  #  #  .  .  #  .  .  .  .
    c1_0(p+1) #  .  .  .  .  .  .  #  .  .  .
    c1_1(p+2) #  .  .  .  .  .  .  #  #  .  .
    c2_0(p+1) #  .  .  .  .  .  .  .  .  #  .
    c2_1(p+2) #  .  .  .  .  .  .  .  .  #  #

Every row sees a contiguous run of positions p, p+1, ..., its own, so each prediction is an ordinary next-token
prediction of a well-formed sequence. The same boolean matrix feeds the model and the mask view.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

X, WINDOW, CANDIDATE = 0, 1, 2


@dataclass(frozen=True)
class StepLayout:
    levels: int  # L, window levels in this step (N-1 in steady state, fewer during warm-up)
    window: int  # W
    candidates: int  # g <= G
    cand_len: int  # N-1

    @property
    def size(self) -> int:
        return 1 + self.levels * self.window + self.candidates * self.cand_len

    @property
    def window_start(self) -> int:
        return 1

    @property
    def cand_start(self) -> int:
        return 1 + self.levels * self.window

    @property
    def newest_level_start(self) -> int:
        return 1 + (self.levels - 1) * self.window

    def logit_rows(self) -> list[int]:
        """Rows whose logits a step reads: x, the newest window level, every candidate token (the others only feed
        attention, so the lm head skips them)."""
        start = self.newest_level_start
        return [0, *range(start, start + self.window), *range(self.cand_start, self.size)]

    @cached_property
    def _parts(self) -> tuple[np.ndarray, ...]:
        """Per token: branch, level, column, candidate index, index within candidate."""
        W, L, g, k = self.window, self.levels, self.candidates, self.cand_len
        branch = np.concatenate([[X], np.full(L * W, WINDOW), np.full(g * k, CANDIDATE)])
        level = np.concatenate([[-1], np.repeat(np.arange(L), W), np.full(g * k, -1)])
        column = np.concatenate([[-1], np.tile(np.arange(W), L), np.full(g * k, -1)])
        cand = np.concatenate([[-1], np.full(L * W, -1), np.repeat(np.arange(g), k)])
        inner = np.concatenate([[-1], np.full(L * W, -1), np.tile(np.arange(k), g)])
        return branch, level, column, cand, inner

    def positions(self) -> np.ndarray:
        """(size,) position offsets from p."""
        branch, level, column, _, inner = self._parts
        return np.where(branch == X, 0, np.where(branch == WINDOW, 1 + level + column, 1 + inner)).astype(np.int64)

    def mask(self) -> np.ndarray:
        """(size, size) boolean: mask[query, key] is True where the query token may attend to the key token."""
        branch, level, column, cand, inner = self._parts
        qb, kb = branch[:, None], branch[None, :]
        ql, kl = level[:, None], level[None, :]
        qc, kc = column[:, None], column[None, :]
        both_window = (qb == WINDOW) & (kb == WINDOW)
        level0_left = (kl == 0) & (kc <= qc)
        own_trajectory = (kl >= 1) & (kl <= ql) & (kc == qc)
        same_cand = (qb == CANDIDATE) & (kb == CANDIDATE) & (cand[:, None] == cand[None, :])
        return (kb == X) | (both_window & (level0_left | own_trajectory)) | (same_cand & (inner[None, :] <= inner[:, None]))

    def labels(self) -> list[str]:
        """One short label per token, for views: 'x', 'L0.3' (level 0, column 3), 'c2.1' (candidate 2, token 1)."""
        branch, level, column, cand, inner = self._parts
        out = []
        for b, l, c, ci, k in zip(branch, level, column, cand, inner):
            out.append("x" if b == X else f"L{l}.{c}" if b == WINDOW else f"c{ci + 1}.{k}")
        return out

    def reason(self, query: int, key: int) -> str:
        """Why `key` is or is not visible from `query`, in words (hover text of the mask view)."""
        branch, level, column, cand, inner = self._parts
        labels = self.labels()
        q, k = labels[query], labels[key]
        if branch[key] == X:
            return f"{q} sees x: every branch continues from the last accepted token"
        if branch[query] != branch[key] or branch[query] == X:
            return f"{q} cannot see {k}: the lookahead and verification branches are independent"
        if branch[query] == WINDOW:
            if level[key] == 0 and column[key] <= column[query]:
                return f"{q} sees {k}: level 0 up to its own column is its prefix"
            if level[key] >= 1 and column[key] == column[query] and level[key] <= level[query]:
                return f"{q} sees {k}: same column, earlier level (its own Jacobi trajectory)"
            return f"{q} cannot see {k}: not on its trajectory"
        if cand[key] == cand[query] and inner[key] <= inner[query]:
            return f"{q} sees {k}: earlier token of the same candidate"
        return f"{q} cannot see {k}: another candidate, or a later token"
