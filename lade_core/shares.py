"""Lookahead Parallelism's deal: which of a step's window columns and candidates each of k devices takes.

Every device holds the whole model (this is not tensor or pipeline parallelism: no layer or weight is split) and
feeds x plus its share of the step. The window's columns are dealt out in contiguous blocks, as evenly as possible,
the earlier devices taking the odd ones; the candidates then go one by one, in order, to the device with the fewest
tokens so far (ties: the lower rank).

A device updating columns a..b-1 feeds them at every level, and level 0's columns 0..a-1 as well: a column's
level-0 token sees the level-0 tokens left of it (`layout.py`), so the device holding the last columns feeds all W
of level 0. That is why dealing the candidates by load matters: it evens out what the columns do not.

Example, W = 8, N = 4 (three levels), G = 8 candidates of 3 tokens, 2 devices: the columns go 0-3 and 4-7, so the
window costs 4 + 2 x 4 = 12 and 8 + 2 x 4 = 16 tokens; the candidates then go to the lighter device, 5 to the first
and 3 to the second, and the devices feed 1 + 12 + 15 = 28 and 1 + 16 + 9 = 26 tokens, against 1 + (8 + 8) x 3 = 49
on one device.

The same deal serves the engine (`parallel.py`, whole numbers) and the speed lab's simulation (`measure/stepcost.py`,
whose average step may have a fractional number of levels).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from .layout import StepLayout


@dataclass(frozen=True)
class Share:
    """One device's part of a step: window columns first..first+columns-1 and the candidates at `candidates` (indexes
    into the step's candidates, ascending)."""

    first: int
    columns: int
    candidates: tuple[int, ...]

    def window_tokens(self, levels: float) -> float:
        """Window tokens this device feeds: level 0 from column 0 to its last, its own columns at the deeper levels."""
        if not self.columns or levels <= 0:
            return 0
        return self.first + self.columns + (levels - 1) * self.columns


def columns(width: int, devices: int) -> list[tuple[int, int]]:
    """(first, count) of each device's block of window columns: contiguous, the earlier devices taking the odd ones."""
    base, extra = divmod(width, devices)
    out, first = [], 0
    for r in range(devices):
        count = base + (r < extra)
        out.append((first, count))
        first += count
    return out


def deal(width: int, levels: float, sizes: Sequence[float], devices: int) -> tuple[Share, ...]:
    """Each device's share of a step with a window of `width` columns and `levels` levels and candidates of `sizes`
    tokens (in the order verification reads them)."""
    if devices < 1:
        raise ValueError(f"devices: at least 1, not {devices}")
    blocks = columns(width, devices)
    load = [1 + Share(first, count, ()).window_tokens(levels) for first, count in blocks]
    mine: list[list[int]] = [[] for _ in range(devices)]
    for c, size in enumerate(sizes):
        r = min(range(devices), key=lambda r: (load[r], r))
        mine[r].append(c)
        load[r] += size
    return tuple(Share(first, count, tuple(m)) for (first, count), m in zip(blocks, mine))


def layout(share: Share, levels: int, candidates: Sequence, cand_len: int, tree: bool) -> StepLayout:
    """The layout of a device's forward: x, level 0 up to its last column, its columns at the deeper levels, its
    candidates (the same mask rules as one device's, restricted to those tokens)."""
    mine = [candidates[c] for c in share.candidates]
    depth = levels if share.columns else 0
    whole = StepLayout.for_candidates(depth, share.first + share.columns if depth else 0, mine, cand_len, tree)
    return replace(whole, first=share.first if depth else 0)


def fed(share: Share, levels: float, sizes: Sequence[float]) -> float:
    """Tokens a device feeds for its share, candidates laid out plainly (a token tree may feed fewer): x, its window
    tokens, its candidates'."""
    return 1 + share.window_tokens(levels) + sum(sizes[c] for c in share.candidates)


def payload(shares: Sequence[Share], sizes: Sequence[float]) -> float:
    """int32 values each device sends in a step's all-gather, padded to the longest (`parallel.py`): what it fed,
    its forward's time, the token after x, its new-level tokens, and its candidates' predictions (one more token than
    each candidate)."""
    return max(3 + s.columns + sum(sizes[c] + 1 for c in s.candidates) for s in shares)


def busiest(width: int, levels: float, sizes: Sequence[float], devices: int) -> float:
    """Tokens the busiest device feeds."""
    return max(fed(s, levels, sizes) for s in deal(width, levels, sizes, devices))
