"""The verification branch: which of the step's candidates (pool n-grams, or a draft's proposal) the model agrees
with. Both rules return a `Verdict`.

Greedy rule: candidate token k is accepted if every token before it was and it equals the model's argmax at its
position; the step emits the longest accepted prefix plus the model's token after it (ties: the first candidate).

Sampling rule (`verify_sampled`), for deterministic drafts (pool n-grams, text copied by prompt lookup, a draft
model's argmax): at each position, offer the tokens of the candidates that still share the accepted prefix, in order.
A token y is accepted with probability r(y), r being the target distribution with the tokens already rejected at this
position removed and renormalised. On acceptance, move to the next position with the candidates that carry y there.
If every offer is rejected, draw from r and end the step; after a fully accepted candidate, draw the next token from
the target itself.
Why the output distribution is unchanged: at one position, offering y1 with probability p(y1) and otherwise moving
on with p restricted to the rest and renormalised is exactly "sample from p" split into two disjoint cases; by
induction over the offers and the final residual draw, the emitted token has law p(. | prefix), whatever the drafts
were. Positions chain like ordinary autoregressive sampling, so the whole continuation has the model's law.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .sampling import Sampler
from .trace import Draw, Verdict

__all__ = ["Verdict", "verify_greedy", "verify_sampled"]


def _padded(rows, fill: int) -> np.ndarray:
    """(g, longest) int array of ragged `rows`, padded with `fill` (pads never equal a token)."""
    if isinstance(rows, np.ndarray) and rows.ndim == 2:
        return rows
    width = max((len(r) for r in rows), default=0)
    out = np.full((len(rows), width), fill, dtype=np.int64)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out


def verify_greedy(candidates: Sequence, predictions: Sequence, first: int) -> Verdict:
    """Greedy verification of g candidates (of any lengths: n-grams of N-1 tokens, or drafts of up to K).

    candidates: g draft token rows. predictions: g rows, the model's argmax after x, then after each token of the
    candidate (one more than the candidate). first: the model's argmax after x (the step's token when nothing
    matches).

    Example: candidates [[5, 6, 7], [5, 9, 9]], predictions [[5, 6, 8, 1], [5, 2, 3, 4]]
    -> match lengths (2, 1), winner 0, emitted (5, 6, 8).
    """
    if len(candidates) == 0:
        return Verdict((), -1, (int(first),))
    cands, preds = _padded(candidates, -1), _padded(predictions, -2)
    lengths = np.cumprod(cands == preds[:, : cands.shape[1]], axis=1).sum(axis=1)
    winner = int(np.argmax(lengths))  # first of the longest
    m = int(lengths[winner])
    emitted = tuple(int(t) for t in preds[winner, : m + 1])
    return Verdict(tuple(int(x) for x in lengths), winner if m > 0 else -1, emitted)


def verify_sampled(
    candidates: Sequence[tuple[int, ...]], target: Callable[[int, int], np.ndarray], sampler: Sampler
) -> Verdict:
    """Sampling verification. `target(c, k)` is the warped (vocab,) distribution after x and the first k tokens of
    candidate c (k = 0: after x; k = len(c): after the whole candidate). Candidates may differ in length.
    """
    alive = list(range(len(candidates)))
    lengths = [0] * len(candidates)
    emitted: list[int] = []
    draws: list[Draw] = []
    k = 0
    while True:
        probs = target(alive[0] if alive else 0, k)
        offering = [c for c in alive if len(candidates[c]) > k]
        if not offering:  # past a full match, or nothing to offer: draw from the target
            emitted.append(sampler.draw(probs))
            break
        residual = probs.copy()
        mass = 1.0
        chosen = None
        for c in offering:
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
        alive = [c for c in offering if candidates[c][k] == chosen]
        for c in alive:
            lengths[c] = k + 1
        k += 1
    winner = max(range(len(lengths)), key=lambda c: (lengths[c], -c)) if any(lengths) else -1
    return Verdict(tuple(lengths), winner, tuple(emitted), tuple(draws))
