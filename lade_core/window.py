"""The lookahead branch's state: a 2D window of up to N-1 levels of W guessed tokens, oldest level first.

Level l, column j guesses the token at position p + 1 + l + j, so column j read top to bottom is one Jacobi
trajectory. Each step the model's argmax at the newest level is a new level (the Jacobi update): during warm-up it is
simply appended; once there are N-1 levels, each column plus its new token spells an N-gram for the pool and the
oldest level drops.

Example, W = 2, N = 3 (levels shown oldest first):
    start          [(a, b)]                      warm-up: one level, drawn from the prompt's tokens
    update((c, d)) [(a, b), (c, d)]              -> no n-grams yet
    update((e, f)) [(c, d), (e, f)]              -> n-grams (a, c, e) and (b, d, f)

The window's width may change between steps (adaptive sizes, the end of the context): narrowing drops the right-most
columns, widening adds fresh columns drawn from the prompt, and width 0 pauses the branch (its state is kept).
"""

from __future__ import annotations

import random


class JacobiWindow:
    def __init__(self, prompt_ids: list[int], width: int, ngram: int, window_seed: int):
        self.ngram = ngram
        self._pick = random.Random(window_seed)
        self._source = list(prompt_ids)
        self.levels: list[tuple[int, ...]] = [self._fresh(width)]

    def _fresh(self, width: int) -> tuple[int, ...]:
        return tuple(self._pick.choice(self._source) for _ in range(width))

    @property
    def width(self) -> int:
        return len(self.levels[0])

    @property
    def full(self) -> bool:
        """True once the window has its N-1 levels (warm-up is over)."""
        return len(self.levels) == self.ngram - 1

    def resize(self, width: int) -> None:
        """Narrow or widen every level to `width` columns (0 leaves the window as it is: the branch pauses)."""
        if width == 0 or width == self.width:
            return
        if width < self.width:
            self.levels = [level[:width] for level in self.levels]
        else:
            self.levels = [level + self._fresh(width - len(level)) for level in self.levels]

    def update(self, new_level: tuple[int, ...]) -> list[tuple[int, ...]]:
        """Add the Jacobi update as the newest level; return the N-grams it completes (none during warm-up)."""
        if not self.full:
            self.levels.append(tuple(new_level))
            return []
        ngrams = [tuple(column) for column in zip(*self.levels, new_level)]
        self.levels = self.levels[1:] + [tuple(new_level)]
        return ngrams
