"""Speculative decoding, lookahead's relatives: a draft proposes up to K tokens, the model verifies them in one pass.

One `SpeculativeDecoder.step()`:
    1. draft: the proposer's candidate after x (`drafts.py`: prompt lookup, an early-exit draft, a draft model)
    2. one forward pass over x and the draft, laid out as a token tree with no window (`StepLayout.tree(0, 0, ...)`)
    3. verification: the longest prefix the model agrees with, plus the model's next token (`verify.py`)
    4. the KV cache keeps x and the accepted draft tokens

The three methods differ only in the proposer, so they share this step, its trace (`kind` = the method; no window
levels; `candidates` = the proposal; `draft_passes` and `draft_s` = what drafting cost) and its exactness: greedy
output equals greedy autoregressive decoding whatever the draft proposes, and sampling keeps the model's
distribution (the drafts are deterministic). What they need differs, and that is the lesson: prompt lookup pays
where the answer repeats the prompt or itself, a draft model is a second model held and run beside this one (here
with its tokenizer), and an early-exit draft pays as often as the model's first layers guess its output (more often
in a model trained to exit early); lookahead decoding needs nothing beside the model.
"""

from __future__ import annotations

from .config import DRAFT_KINDS, DraftConfig, Sampling
from .decoding import DecoderState, StepClock, candidate_feed
from .drafts import ModelDraft, PromptLookup
from .layout import StepLayout
from .model import LM
from .trace import StepTrace


def proposer(lm: LM, method: str, draft: DraftConfig):
    """The proposer of `method` ("pld", "early-exit" or "draft"), built on `lm`."""
    from .checkpoint import early_exit_lm, load_draft

    if method == "pld":
        return PromptLookup(draft, lm.eos_ids)
    if method == "early-exit":
        return ModelDraft(early_exit_lm(lm, draft.exit_layer), draft, lm.vocab_size, lm.eos_ids)
    if method == "draft":
        return ModelDraft(load_draft(lm, draft.draft_model), draft, lm.vocab_size, lm.eos_ids)
    raise ValueError(f"a speculative method is one of {', '.join(DRAFT_KINDS)}, got {method!r}")


class SpeculativeDecoder(DecoderState):
    """The decoding state between steps: KV cache, committed tokens, and the proposer (with its own state)."""

    def __init__(
        self, lm: LM, prompt_ids: list[int], method: str, draft: DraftConfig, sampling: Sampling | None = None
    ):
        super().__init__(lm, prompt_ids, sampling)
        self.kind, self.draft = method, draft
        self.proposer = proposer(lm, method, draft)
        self.k = draft.tokens  # this step's draft length (`DraftConfig.schedule` moves it)

    def step(self) -> StepTrace:
        clock = StepClock()
        x, p = self.advance()

        # 1. the draft: at most K tokens after x, never past the model's context
        with clock.timed("draft", self.proposer.lm):
            proposal = self.proposer.propose(self.committed, min(self.k, self.lm.max_positions - 1 - p))
        candidates = proposal.candidates
        layout = StepLayout.tree(0, 0, candidates)

        # 2-4. one forward pass over x and the draft; verification; the KV cache keeps x and the accepted draft
        # tokens; then the schedule sets the next draft's length
        feed = candidate_feed([x, *layout.node_tokens(candidates)], layout, candidates)
        argmax, verdict = self.forward_verify_keep(clock, p, feed)
        k, proposed = self.k, len(candidates[0]) if candidates else 0
        self.k = self.draft.next_tokens(k, proposed, verdict.matched)
        return StepTrace(
            index=self.index,
            kind=self.kind,
            position=p,
            input_token=x,
            accepted=verdict.accepted,
            ngram=k + 1,
            guess=1,
            tree=True,
            candidates=candidates,
            predictions=layout.predictions(argmax),
            match_lengths=verdict.lengths,
            winner=verdict.winner,
            draws=verdict.draws,
            draft_passes=proposal.passes,
            **clock.split(),
        )
