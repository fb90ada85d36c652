"""The verification branch: which of the step's candidate n-grams the model agrees with.

Greedy rule: candidate token k is accepted if every token before it was and it equals the model's argmax at its
position; the step emits the longest accepted prefix plus the model's token after it (ties: the first candidate).

Sampling rule (`verify_sampled`), for deterministic drafts such as pool n-grams: at each position, offer the tokens
of the candidates that still share the accepted prefix, in order. A token y is accepted with probability r(y), r
being the target distribution with the tokens already rejected at this position removed and renormalised. On
acceptance, move to the next position with the candidates that carry y there. If every offer is rejected, draw from
r and end the step; after a fully accepted candidate, draw the next token from the target itself.
Why the output distribution is unchanged: at one position, offering y1 with probability p(y1) and otherwise moving
on with p restricted to the rest and renormalised is exactly "sample from p" split into two disjoint cases; by
induction over the offers and the final residual draw, the emitted token has law p(. | prefix), whatever the drafts
were. Positions chain like ordinary autoregressive sampling, so the whole continuation has the model's law.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .sampling import Sampler
from .trace import Draw


def verify_greedy(candidates: np.ndarray, predictions: np.ndarray, first: int) -> tuple[list[int], int, list[int]]:
    """Greedy verification of g candidates.

    candidates: (g, N-1) draft tokens. predictions: (g, N), the model's argmax after x, then after each candidate
    token. first: the model's argmax after x (the step's token when nothing matches). Returns (match lengths, winner
    index or -1, emitted tokens).

    Example: candidates [[5, 6, 7], [5, 9, 9]], predictions [[5, 6, 8, 1], [5, 2, 3, 4]]
    -> match lengths [2, 1], winner 0, emitted [5, 6, 8].
    """
    if len(candidates) == 0:
        return [], -1, [int(first)]
    lengths = np.cumprod(candidates == predictions[:, :-1], axis=1).sum(axis=1)
    winner = int(np.argmax(lengths))  # first of the longest
    m = int(lengths[winner])
    emitted = [int(t) for t in predictions[winner, : m + 1]]
    return lengths.tolist(), (winner if m > 0 else -1), emitted


def verify_sampled(
    candidates: list[tuple[int, ...]],
    target: Callable[[int, int], np.ndarray],
    sampler: Sampler,
) -> tuple[list[int], int, list[int], list[Draw]]:
    """Sampling verification. `target(c, k)` is the warped (vocab,) distribution at position k of candidate c
    (k = 0 is the distribution after x; k = N-1 the one after the whole candidate).

    Returns (match lengths, winner or -1, emitted tokens, the draws made).
    """
    alive = list(range(len(candidates)))
    lengths = [0] * len(candidates)
    emitted: list[int] = []
    draws: list[Draw] = []
    k = 0
    cand_len = len(candidates[0]) if candidates else 0
    while True:
        owner = alive[0] if alive else 0
        probs = target(owner, k)
        if k == cand_len or not alive:  # past a full match, or nothing to offer: draw from the target
            emitted.append(sampler.draw(probs))
            break
        residual = probs.copy()
        mass = 1.0
        chosen = None
        for c in alive:
            y = candidates[c][k]
            p = residual[y] / mass if mass > 0 else 0.0
            u = sampler.uniform()
            ok = p > 0 and u < p
            draws.append(Draw(c, k, int(y), float(p), u, bool(ok), float(mass)))
            if ok:
                chosen = y
                break
            residual[y] = 0.0
            mass = float(residual.sum())  # summed, not subtracted: rounding must not leave a zero residual
        if chosen is None:
            emitted.append(sampler.draw(residual))
            break
        emitted.append(int(chosen))
        alive = [c for c in alive if candidates[c][k] == chosen]
        for c in alive:
            lengths[c] = k + 1
        k += 1
    winner = max(range(len(lengths)), key=lambda c: (lengths[c], -c)) if any(lengths) else -1
    return lengths, winner, emitted, draws
