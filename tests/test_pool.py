"""The n-gram pool, by hand: eviction of the least recently added per key, de-duplication, lookup order, prompt
seeding."""

from pathlib import Path

from lade_core.pool import NGramPool, sequence_ngrams


def test_docstring_example():
    pool = NGramPool(per_key=2)
    assert pool.add((5, 1, 2)) is None
    assert pool.add((5, 3, 4)) is None
    assert pool.lookup(5) == [(3, 4), (1, 2)]
    assert pool.add((5, 1, 2)) is None  # duplicate: refreshed, nothing evicted
    assert len(pool) == 2
    assert pool.lookup(5) == [(1, 2), (3, 4)]
    assert pool.add((5, 7, 8)) == (5, 3, 4)  # least recently added goes
    assert pool.lookup(5) == [(7, 8), (1, 2)]
    assert pool.lookup(5, 1) == [(7, 8)]
    assert len(pool) == 2


def test_a_lookup_moves_nothing_so_the_page_says_least_recently_added():
    """The pool evicts the n-gram added longest ago, whatever was looked up since: the page's glossary and pool view
    name that rule (they once said "least recently used", which a lookup would refresh)."""
    pool = NGramPool(per_key=2)
    pool.add_all([(5, 1, 2), (5, 3, 4)])
    assert pool.lookup(5) == [(3, 4), (1, 2)] and pool.lookup(5, 1) == [(3, 4)]
    assert pool.add((5, 7, 8)) == (5, 1, 2)  # looked up twice, still the first to go
    static = Path(__file__).resolve().parent.parent / "app" / "static"
    page = " ".join(
        static.joinpath(f).read_text(encoding="utf-8")
        for f in ("lade-notes.js", "lade-lesson.js", "lade-step-views.js")
    )
    assert "recently used" not in page and page.count("least recently added") >= 3


def test_keys_are_independent_and_size_counts_all():
    pool = NGramPool(per_key=1)
    assert pool.add_all([(1, 2), (2, 3), (1, 4)]) == [(1, 2)]
    assert pool.lookup(1) == [(4,)] and pool.lookup(2) == [(3,)] and pool.lookup(9) == []
    assert len(pool) == 2
    assert pool.items() == {1: [(4,)], 2: [(3,)]}


def test_counts_follow_the_buckets():
    """`count(key)` and `keys` are what adaptive sizes and the pool view read; they must follow add and evict."""
    pool = NGramPool(per_key=2)
    pool.add_all([(1, 2), (1, 3), (1, 4), (2, 5)])
    assert pool.count(1) == 2 and pool.count(2) == 1 and pool.count(9) == 0 and pool.keys == 2


def test_zero_capacity_keeps_nothing():
    pool = NGramPool(per_key=0)
    assert pool.add((1, 2, 3)) is None
    assert len(pool) == 0 and pool.lookup(1) == []


def test_sequence_ngrams():
    assert sequence_ngrams([1, 2, 3, 4], 3) == [(1, 2, 3), (2, 3, 4)]
    assert sequence_ngrams([1, 2], 3) == []
