"""The layout of one step's input: which token sits where, at which position, and what it may attend to.

A step feeds `[x] + level_0 + ... + level_{L-1} + verification tokens`: the last accepted token x (not yet in the
KV cache), L window levels of W tokens, and the verification branch. Offsets below are relative to x's position p.

    x              position 0
    window (l, j)  position 1 + l + j     (level l, column j: column j is a diagonal Jacobi trajectory)
    candidate token k (k = 0..N-2)  position 1 + k

The verification branch is a forest of token nodes hanging off x: each candidate n-gram is a path of N-1 nodes.
Plainly laid out, every candidate has its own N-1 nodes; as a token tree, candidates that share a prefix share its
nodes (`StepLayout.tree`), so fewer tokens are fed and the same predictions are read.

Attention among the new tokens (everything also sees the whole KV cache, i.e. the committed prefix):
    x sees itself; window (l, j) sees x, level 0 columns 0..j, and column j of levels 1..l;
    a verification node sees x, its ancestors and itself. The window and the candidates never see each other.

Example, W=3, L=2, two plain candidates of N-1=2 (a = level 0, b = level 1, c = candidates, `#` visible; row = query):

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

One device's share under Lookahead Parallelism (`shares.py`) is the same layout with `first` > 0: it updates the
window's columns `first`..W-1 only, so its levels 1.. hold those columns alone, while its level 0 still holds every
column from 0 (a column's level-0 token sees the level-0 tokens left of it); the rules above are unchanged.

Reading the output. The model's logits are kept only at the rows a step reads (`logit_rows`): x, the newest level,
every verification node. In that kept order, `prediction_rows[c]` are the rows of the model's N tokens for candidate
c (at x, then after each of its tokens), `new_level_rows` the Jacobi update; `cache_rows` says which input rows stay
in the KV cache once some tokens are accepted.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

X, WINDOW, VERIFY = 0, 1, 2  # the part of the step input a token belongs to

# Why a key is visible or hidden from a query: (code, template). `reason_code` picks the code; views fill in labels.
REASONS = (
    (0, "{q} sees x: every branch continues from the last accepted token"),
    (1, "{q} cannot see {k}: the lookahead and verification branches are independent"),
    (2, "{q} sees {k}: level 0 up to its own column is its prefix"),
    (3, "{q} sees {k}: same column, earlier level (its own Jacobi trajectory)"),
    (4, "{q} cannot see {k}: not on its trajectory"),
    (5, "{q} sees {k}: an earlier token of the same candidate"),
    (6, "{q} cannot see {k}: another candidate, or a later token"),
)


@dataclass(frozen=True)
class StepLayout:
    levels: int  # L, window levels in this step (N-1 in steady state, fewer during warm-up, 0 without a window)
    window: int  # W, tokens per level
    paths: tuple[tuple[int, ...], ...] = ()  # per candidate, its verification nodes in order (N-1 each)
    parents: tuple[int, ...] = ()  # per verification node, its parent node (-1: x)
    first: int = 0  # first window column fed at levels >= 1 and read at the newest level (a device's share)

    @classmethod
    def plain(cls, levels: int, window: int, candidates: int, cand_len: int) -> StepLayout:
        """Every candidate on its own N-1 nodes, as the paper lays them out."""
        paths = tuple(tuple(range(c * cand_len, (c + 1) * cand_len)) for c in range(candidates))
        return cls(
            levels,
            window,
            paths,
            tuple(-1 if k == 0 else c * cand_len + k - 1 for c in range(candidates) for k in range(cand_len)),
        )

    @classmethod
    def tree(cls, levels: int, window: int, candidates) -> StepLayout:
        """Candidates as a token tree: a prefix shared by several candidates is fed once.

        Example: candidates (5, 6, 7), (5, 6, 9), (8, 1, 2) -> nodes 5 6 7 9 8 1 2 (7 instead of 9), paths
        (0, 1, 2), (0, 1, 3), (4, 5, 6)."""
        nodes: dict[tuple[int, ...], int] = {}
        parents, paths = [], []
        for cand in candidates:
            path = []
            for k in range(len(cand)):
                prefix = tuple(cand[: k + 1])
                if prefix not in nodes:
                    nodes[prefix] = len(parents)
                    parents.append(path[-1] if path else -1)
                path.append(nodes[prefix])
            paths.append(tuple(path))
        return cls(levels, window, tuple(paths), tuple(parents))

    @classmethod
    def for_candidates(cls, levels: int, window: int, candidates, cand_len: int, tree: bool) -> StepLayout:
        return cls.tree(levels, window, candidates) if tree else cls.plain(levels, window, len(candidates), cand_len)

    def node_tokens(self, candidates) -> list[int]:
        """The token of each verification node, in input order."""
        tokens = [0] * self.nodes
        for cand, path in zip(candidates, self.paths):
            for token, node in zip(cand, path):
                tokens[node] = token
        return tokens

    # -- sizes ---------------------------------------------------------------------------------------------------
    @property
    def nodes(self) -> int:
        """Tokens of the verification branch."""
        return len(self.parents)

    @property
    def columns(self) -> int:
        """Window columns this layout updates (all W but for a device's share): tokens per level >= 1."""
        return self.window - self.first if self.levels else 0

    @property
    def size(self) -> int:
        return self.verify_start + self.nodes

    @property
    def verify_start(self) -> int:
        """Input row of the first verification node."""
        return 1 + (self.window + (self.levels - 1) * self.columns if self.levels else 0)

    # -- reading the output ----------------------------------------------------------------------------------------
    def logit_rows(self) -> list[int]:
        """Input rows whose logits a step reads: x, the newest window level, every verification node (the others
        only feed attention, so the lm head skips them)."""
        newest = self.window_rows(self.levels - 1, self.columns) if self.levels else []
        return [0, *newest, *range(self.verify_start, self.size)]

    @cached_property
    def new_level_rows(self) -> np.ndarray:
        """(W,) kept rows of the newest level: the model's argmax there is the Jacobi update."""
        return np.arange(1, 1 + self.columns)

    @cached_property
    def prediction_rows(self) -> tuple[tuple[int, ...], ...]:
        """Per candidate c, the kept rows of the model's tokens for it: after x, then after each of its tokens
        (N rows for an n-gram of N-1 tokens; one more than its length for a draft)."""
        first = 1 + self.columns
        return tuple((0, *(first + node for node in path)) for path in self.paths)

    @staticmethod
    def read(argmax, rows) -> tuple[int, ...]:
        """The model's tokens at kept `rows`, from the (kept rows,) argmax of a step's logits."""
        return tuple(int(argmax[r]) for r in rows)

    def predictions(self, argmax) -> tuple[tuple[int, ...], ...]:
        """The model's tokens for each candidate, read off the kept rows' argmax (`prediction_rows`)."""
        return tuple(self.read(argmax, rows) for rows in self.prediction_rows)

    def new_level(self, argmax) -> tuple[int, ...]:
        """The Jacobi update: the model's tokens at the newest window level."""
        return self.read(argmax, self.new_level_rows)

    def guess_rows(self) -> tuple[int, ...]:
        """Kept rows of a one-level window read as one candidate (Jacobi decoding's guess block): after x, then
        after each token of the level."""
        return (0, *(int(r) for r in self.new_level_rows))

    def cache_rows(self, candidate: int, accepted: int) -> list[int]:
        """Input rows to keep in the KV cache when `accepted` tokens of `candidate` were accepted: x, then those
        tokens' rows (ascending, since a node's row comes after its parent's)."""
        path = self.paths[candidate][:accepted] if accepted else ()
        return [0, *(self.verify_start + node for node in path)]

    def window_rows(self, level: int, columns: int) -> list[int]:
        """Input rows of the first `columns` tokens this layout updates at window level `level` (at level 0, from
        column `first`)."""
        start = 1 + self.first if level == 0 else 1 + self.window + (level - 1) * self.columns
        return list(range(start, start + columns))

    def guess_cache_rows(self, accepted: int) -> list[int]:
        """Input rows to keep in the KV cache when the first `accepted` tokens of a one-level window (Jacobi
        decoding's guess block) were accepted: x, then those tokens."""
        return [0, *self.window_rows(0, accepted)]

    # -- structure -------------------------------------------------------------------------------------------------
    @cached_property
    def _parts(self) -> tuple[np.ndarray, ...]:
        """Per token: part, level, column, depth in the verification branch, first candidate through it."""
        W, L, n, f = self.window, self.levels, self.nodes, self.first
        fed = self.verify_start - 1  # window tokens: level 0 whole, levels 1.. from column `first`
        part = np.concatenate([[X], np.full(fed, WINDOW), np.full(n, VERIFY)])
        w0, deeper = (W if L else 0), max(L - 1, 0)
        level = np.concatenate([[-1], np.zeros(w0, int), np.repeat(np.arange(1, L), W - f), np.full(n, -1)])
        column = np.concatenate([[-1], np.arange(w0), np.tile(np.arange(f, W), deeper), np.full(n, -1)])
        depth, owner = np.full(n, -1), np.full(n, -1)
        for c, path in enumerate(self.paths):
            for k, node in enumerate(path):
                depth[node] = k
                owner[node] = c if owner[node] < 0 else owner[node]
        pad = np.full(1 + fed, -1)
        return part, level, column, np.concatenate([pad, depth]), np.concatenate([pad, owner])

    @cached_property
    def _ancestors(self) -> np.ndarray:
        """(nodes, nodes) boolean: [i, j] where node j is node i or one of its ancestors."""
        n = self.nodes
        seen = np.eye(n, dtype=bool)
        for i in range(n):
            j = self.parents[i]
            while j >= 0:
                seen[i, j] = True
                j = self.parents[j]
        return seen

    def token_kinds(self) -> list[int]:
        """Per token: 0 x, 1 window level 0, 2 window level >= 1, 3 verification node (what the mask's reason
        rules tell apart)."""
        part, level = self._parts[0], self._parts[1]
        return [0 if p == X else (1 if lv == 0 else 2) if p == WINDOW else 3 for p, lv in zip(part, level)]

    def positions(self) -> np.ndarray:
        """(size,) position offsets from p."""
        part, level, column, depth, _ = self._parts
        return np.where(part == X, 0, np.where(part == WINDOW, 1 + level + column, 1 + depth)).astype(np.int64)

    def mask(self) -> np.ndarray:
        """(size, size) boolean: mask[query, key] is True where the query token may attend to the key token."""
        part, level, column, _, _ = self._parts
        qp, kp = part[:, None], part[None, :]
        ql, kl = level[:, None], level[None, :]
        qc, kc = column[:, None], column[None, :]
        both_window = (qp == WINDOW) & (kp == WINDOW)
        level0_left = (kl == 0) & (kc <= qc)
        own_trajectory = (kl >= 1) & (kl <= ql) & (kc == qc)
        visible = (kp == X) | (both_window & (level0_left | own_trajectory))
        v = self.verify_start
        visible[v:, v:] = self._ancestors
        return visible

    def labels(self) -> list[str]:
        """One short label per token, for views: 'x', 'L0.3' (level 0, column 3), 'c2.1' (candidate 2, token 1;
        a node that candidates share is named after the first of them)."""
        part, level, column, depth, owner = self._parts
        return [
            "x" if p == X else f"L{lv}.{c}" if p == WINDOW else f"c{o + 1}.{d}"
            for p, lv, c, d, o in zip(part, level, column, depth, owner)
        ]

    @cached_property
    def _mask(self) -> np.ndarray:
        return self.mask()

    def reason_code(self, query: int, key: int) -> int:
        """Why `key` is or is not visible from `query`: an index into `REASONS` (visibility read off `mask()`)."""
        part, level, _, _, _ = self._parts
        if part[key] == X:
            return 0
        if part[query] != part[key] or part[query] == X:
            return 1
        visible = bool(self._mask[query, key])
        if part[query] == WINDOW:
            return (2 if level[key] == 0 else 3) if visible else 4
        return 5 if visible else 6

    def reason(self, query: int, key: int) -> str:
        """Why `key` is or is not visible from `query`, in words (hover text of the mask view)."""
        labels = self.labels()
        return REASONS[self.reason_code(query, key)][1].format(q=labels[query], k=labels[key])
