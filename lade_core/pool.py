"""The n-gram pool: n-grams harvested from the Jacobi window, kept under their first token.

An N-gram (t0, t1, ..., t_{N-1}) is stored as the continuation (t1, ..., t_{N-1}) under the key t0. When the last
accepted token is t0, the continuations under t0 become the step's verification candidates.

Policy: at most `per_key` continuations per key, no duplicates, least recently added evicted first. Adding a
continuation that is already there adds it again: it moves to the front and nothing is evicted; a lookup moves
nothing. `lookup` returns the most recently added first, so ties in verification go to the freshest guess. Each
continuation remembers where it came from last ("window" or "text"), so that adaptive sizes can tell what the
window's n-grams earn.

Worked example, per_key = 2, N = 3:
    add((5, 1, 2))  -> {5: [(1, 2)]}
    add((5, 3, 4))  -> {5: [(3, 4), (1, 2)]}
    add((5, 1, 2))  -> {5: [(1, 2), (3, 4)]}          duplicate: refreshed, nothing evicted
    add((5, 7, 8))  -> {5: [(7, 8), (1, 2)]}          (3, 4) was least recently added: evicted
    lookup(5, 1)    -> [(7, 8)]
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable


class NGramPool:
    def __init__(self, per_key: int):
        if per_key < 0:
            raise ValueError(f"per_key must be >= 0, got {per_key}")
        self.per_key = per_key
        self._by_key: dict[int, OrderedDict[tuple[int, ...], str]] = {}
        self._size = 0

    def __len__(self) -> int:
        """Number of n-grams held, over all keys."""
        return self._size

    def add(self, ngram: tuple[int, ...], source: str = "window") -> tuple[int, ...] | None:
        """Insert one n-gram; return the n-gram it evicted (first token included), if any."""
        if self.per_key == 0:
            return None
        key, cont = ngram[0], tuple(ngram[1:])
        bucket = self._by_key.get(key)
        if bucket is None:
            bucket = self._by_key[key] = OrderedDict()
        if cont in bucket:
            bucket.move_to_end(cont)
            bucket[cont] = source
            return None
        bucket[cont] = source
        self._size += 1
        if len(bucket) > self.per_key:
            old, _ = bucket.popitem(last=False)
            self._size -= 1
            return (key, *old)
        return None

    def add_all(self, ngrams: Iterable[tuple[int, ...]], source: str = "window") -> list[tuple[int, ...]]:
        """Insert n-grams in order; return the evicted ones in the order they left."""
        evicted = []
        for ngram in ngrams:
            gone = self.add(ngram, source)
            if gone is not None:
                evicted.append(gone)
        return evicted

    @property
    def keys(self) -> int:
        """Number of keys with at least one continuation (a bucket never empties: eviction leaves `per_key`)."""
        return len(self._by_key)

    def count(self, key: int) -> int:
        """How many continuations are stored under `key`."""
        bucket = self._by_key.get(key)
        return len(bucket) if bucket else 0

    def source(self, key: int, cont: tuple[int, ...]) -> str | None:
        """Where the continuation `cont` under `key` came from last, or None if it is not held."""
        bucket = self._by_key.get(key)
        return bucket.get(tuple(cont)) if bucket else None

    def lookup(self, key: int, limit: int | None = None) -> list[tuple[int, ...]]:
        """Continuations stored under `key`, most recently added first, at most `limit` of them."""
        bucket = self._by_key.get(key)
        if not bucket:
            return []
        found = list(reversed(bucket))
        return found if limit is None else found[:limit]

    def items(self) -> dict[int, list[tuple[int, ...]]]:
        """A plain copy: key -> continuations, most recently added first."""
        return {key: list(reversed(bucket)) for key, bucket in self._by_key.items() if bucket}


def replay_pool(added_per_step: Iterable[Iterable[tuple[int, ...]]], per_key: int) -> NGramPool:
    """Rebuild a pool from the n-grams each step added, in order: the same policy gives the same state, so a view
    can show the pool at any step of a recorded run."""
    pool = NGramPool(per_key)
    for added in added_per_step:
        pool.add_all(added)
    return pool


def sequence_ngrams(tokens: list[int], n: int) -> list[tuple[int, ...]]:
    """Every n-gram of a token sequence, left to right: the prompt's n-grams for a seeded pool."""
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]
