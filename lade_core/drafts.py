"""Where a speculative step's draft comes from: prompt lookup (text copied from the prompt and the output so far), or
a draft model run autoregressively (an early-exit draft of the model itself, or a separate small model).

A proposer has one method, `propose(committed, room) -> Proposal`: the candidates to verify after the last committed
token (at most one here, of at most `room` tokens) and the draft model's forward passes it took. It keeps what it
needs between steps itself (a draft model's own KV cache); the model's verification and cache live in
`speculative.py`. Left out: trees of several drafts (one proposal per step, as transformers proposes).

Prompt lookup's rule is transformers' `PromptLookupCandidateGenerator`: for n from `match` down to 1, find the first
(leftmost) earlier occurrence of the text's last n tokens that has something after it, and propose the up to K
tokens that followed it, cut before the first EOS (an EOS found there ends the search: nothing is proposed).
Lookahead's copied candidates (`LookaheadConfig.lookup`) also take what followed the most recent occurrence.

Worked example, match = 2, K = 3, text [5, 6, 7, 8, 5, 6]: the last two tokens (5, 6) first occur at 0; what
followed is [7, 8, 5]: proposed. Text [1, 2, 3, 9, 3]: (9, 3) never occurred before; (3,) occurs at 2, followed by
[9, 3]: proposed.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .config import DraftConfig
from .model import LM


class Proposal(NamedTuple):
    candidates: tuple[tuple[int, ...], ...]  # (0 or 1, up to K) draft tokens after the last committed one
    passes: int  # forward passes of a draft model it took (0 for prompt lookup)


class PromptLookup:
    """Prompt lookup decoding's draft: a pool with no window, the text itself being the pool."""

    lm = None  # no model drafts here

    def __init__(self, draft: DraftConfig, eos_ids: frozenset[int]):
        self.tokens, self.match, self.eos_ids = draft.tokens, draft.match, eos_ids

    def propose(self, committed: list[int], room: int) -> Proposal:
        return Proposal(self.copies(committed, room, latest=False), 0)

    def copies(self, committed: list[int], room: int, latest: bool) -> tuple[tuple[int, ...], ...]:
        """What followed the first earlier occurrence of the text's last n tokens (transformers' rule), and with
        `latest` also what followed the most recent one, where that differs: the text repeating itself."""
        ids = np.asarray(committed, dtype=np.int64)
        for n in range(min(self.match, len(ids) - 1), 0, -1):
            starts = np.flatnonzero((sliding_window_view(ids, n) == ids[-n:]).all(axis=1)) + n
            starts = starts[starts < len(ids)]  # the text's own last n tokens have nothing after them: skipped
            if len(starts):
                picked = (starts[0], starts[-1]) if latest and starts[-1] != starts[0] else (starts[0],)
                found = [self._cut_at_eos(ids[s : s + min(self.tokens, room)]) for s in picked]
                return tuple(dict.fromkeys(c for c in found if c))
        return ()

    def _cut_at_eos(self, tokens: np.ndarray) -> tuple[int, ...]:
        out = []
        for t in tokens.tolist():
            if t in self.eos_ids:
                break
            out.append(t)
        return tuple(out)


class ModelDraft:
    """A draft model's guesses: its argmax, one token per pass, on its own KV cache. Each step it first catches up
    (one pass over the committed tokens it has not seen: the whole prompt at the first step, then the model's own
    token after the accepted drafts), then guesses on. Argmax only, restricted to the model's vocabulary: a
    deterministic draft, so sampled verification keeps the model's distribution."""

    def __init__(self, lm: LM, draft: DraftConfig, vocab: int, eos_ids: frozenset[int]):
        self.lm, self.tokens, self.vocab, self.eos_ids = lm, draft.tokens, vocab, eos_ids
        self.cache = lm.new_cache()
        self.fed: list[int] = []  # the tokens whose keys and values are in the draft's cache, in order

    def _kept(self, committed: list[int]) -> int:
        """How many of the fed tokens are still the text's (at least one committed token is fed again)."""
        limit = min(len(self.fed), len(committed) - 1)
        same = np.asarray(self.fed[:limit]) == np.asarray(committed[:limit])
        return int(limit if same.all() else np.argmin(same))

    def propose(self, committed: list[int], room: int) -> Proposal:
        room = min(room, self.tokens, self.lm.max_positions - len(committed))
        if room <= 0:
            return Proposal((), 0)
        kept = self._kept(committed)
        self.lm.truncate(self.cache, kept)
        logits = self.lm.extend(self.cache, committed[kept:], kept)
        drafted = [int(logits[: self.vocab].argmax())]
        while len(drafted) < room and drafted[-1] not in self.eos_ids:
            logits = self.lm.extend(self.cache, drafted[-1:], len(committed) + len(drafted) - 1)
            drafted.append(int(logits[: self.vocab].argmax()))
        self.fed = committed + drafted[:-1]
        return Proposal((tuple(drafted),), len(drafted))
