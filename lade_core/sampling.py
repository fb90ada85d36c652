"""Turning logits into a token: argmax for greedy decoding, or a seeded draw from the warped distribution.

`warp` applies temperature, then top-k, then top-p (nucleus) and returns float64 probabilities. `Sampler` owns the
run's random stream (numpy's PCG64, seeded), so the same seed gives the same output, and both engines draw the same
way. A draw is an inverse-CDF lookup of one uniform number, recorded where the trace wants it.
"""

from __future__ import annotations

import numpy as np
import torch

from .config import Sampling


def warp(logits: torch.Tensor, sampling: Sampling) -> np.ndarray:
    """(vocab,) logits -> (vocab,) float64 probabilities after temperature, top-k and top-p."""
    z = logits.double() / sampling.temperature
    if sampling.top_k and sampling.top_k < z.numel():
        kth = torch.topk(z, sampling.top_k).values[-1]
        z = z.masked_fill(z < kth, float("-inf"))
    if sampling.top_p < 1.0:
        order = torch.argsort(z, descending=True)
        sorted_probs = torch.softmax(z[order], dim=-1)
        before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs  # mass strictly above each token
        drop = order[before >= sampling.top_p]
        z[drop] = float("-inf")
    return torch.softmax(z, dim=-1).numpy()


class Sampler:
    """The random stream of one run."""

    def __init__(self, seed: int):
        self.rng = np.random.Generator(np.random.PCG64(seed))

    def uniform(self) -> float:
        return float(self.rng.random())

    def draw(self, probs: np.ndarray) -> int:
        """A token drawn from `probs` (need not sum to one: it is normalised here)."""
        cdf = np.cumsum(probs)
        u = self.uniform() * cdf[-1]
        return int(min(np.searchsorted(cdf, u, side="right"), len(cdf) - 1))


def next_token(logits: torch.Tensor, sampling: Sampling, sampler: Sampler | None) -> int:
    """The token an autoregressive step emits from its (vocab,) logits."""
    if sampling.greedy:
        return int(torch.argmax(logits))
    return sampler.draw(warp(logits, sampling))
