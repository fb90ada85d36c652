"""Lookahead decoding: each step is ONE forward pass over the lookahead branch and the verification branch.

Algorithm 1 of the paper, one call of `LookaheadDecoder.step()`:
    1. lookahead branch: the Jacobi window (`window.py`); verification branch: the pool's n-grams under x
    2. one forward pass over both, under the step's attention mask (`layout.py`)
    3. verification: the longest prefix the model agrees with, plus the model's next token (`verify.py`)
    4. the KV cache keeps x and the accepted tokens, and drops the rest of the step
    5. Jacobi update of the window; the n-grams it completes (and, by pool policy, the text's) go to the pool

Every step emits at least one token, and greedy output equals greedy autoregressive decoding. The window and the
number of candidates a step uses are chosen by `sizes.py` (fixed, or adaptive); near the end of the model's context
the window narrows so that a step never writes past it.
"""

from __future__ import annotations

from .config import DraftConfig, LookaheadConfig, Sampling
from .decoding import DecoderState, StepCallback, StepClock, StopCheck, candidate_feed, check_request, generate
from .drafts import PromptLookup
from .layout import StepLayout
from .model import LM
from .pool import NGramPool, sequence_ngrams
from .sizes import Sizes, StepCost, size_policy
from .trace import MethodRun, StepTrace
from .window import JacobiWindow


class LookaheadDecoder(DecoderState):
    """The decoding state between steps: KV cache, committed tokens, the Jacobi window, the n-gram pool."""

    def __init__(
        self,
        lm: LM,
        prompt_ids: list[int],
        config: LookaheadConfig,
        sampling: Sampling | None = None,
        step_cost: StepCost | None = None,
    ):
        super().__init__(lm, prompt_ids, sampling)
        self.config = config
        self.window = JacobiWindow(prompt_ids, config.window, config.ngram, config.window_seed)
        self.pool = NGramPool(config.guess)
        self.sizes = size_policy(config, step_cost, lm.max_positions)
        self.copier = PromptLookup(DraftConfig(tokens=config.lookup), lm.eos_ids) if config.lookup else None

    def prefill(self) -> StepTrace:
        """The prompt's forward pass; under the "prompt" policy the pool takes the prompt's n-grams here."""
        step = super().prefill()
        if self.config.pool != "prompt":
            return step
        added = sequence_ngrams(self.committed, self.config.ngram)
        return step.but(
            ngrams_added=tuple(added),
            ngrams_evicted=tuple(self.pool.add_all(added, source="text")),
            pool_size=len(self.pool),
        )

    def branches(self, x: int, p: int) -> tuple[Sizes, tuple[tuple[int, ...], ...], list, int]:
        """Step 1: this step's sizes, the window's levels (none when it pauses), the candidates under x (the pool's,
        then prompt lookup's copies) and how many of them are copies."""
        sizes = self.sizes.choose(p, len(self.window.levels), self.pool.count(x))
        self.window.resize(sizes.width)
        levels = tuple(self.window.levels) if sizes.width else ()
        copied = self._copied(p) if sizes.guess else ()
        return sizes, levels, [*self.pool.lookup(x, sizes.guess), *copied], len(copied)

    def record(self, clock: StepClock, x: int, p: int, branches, new_level, predictions, verdict, **extra) -> StepTrace:
        """Step 4 and the step's record: the Jacobi update of the window, the n-grams it completes (and, by pool
        policy, the text's) into the pool, then the `StepTrace` (`branches` as `branches()` gave them; `extra`: more
        fields, such as the sampling draws or the ranks of a parallel step)."""
        sizes, levels, candidates, copied = branches
        N = self.config.ngram
        added = self.window.update(new_level) if sizes.width else []
        recent = self.committed[-(N - 1) :] + [*verdict.accepted]
        text = [] if self.config.pool == "paper" else sequence_ngrams(recent, N)
        evicted = self.pool.add_all(added) + self.pool.add_all(text, source="text")
        return StepTrace(
            index=self.index,
            kind="warmup" if 0 < len(levels) < N - 1 else "lookahead",
            position=p,
            input_token=x,
            accepted=verdict.accepted,
            window=sizes.width,
            ngram=N,
            guess=sizes.guess,
            tree=self.config.tree,
            levels_before=levels,
            new_level=tuple(new_level),
            candidates=tuple(candidates),
            predictions=tuple(predictions),
            match_lengths=verdict.lengths,
            winner=verdict.winner,
            ngrams_added=(*added, *text),
            ngrams_evicted=tuple(evicted),
            pool_size=len(self.pool),
            copied=copied,
            **extra,
            **clock.split(),
        )

    def step(self) -> StepTrace:
        clock = StepClock()
        x, p = self.advance()
        N = self.config.ngram

        # 1. the lookahead branch (the window, at this step's width) and the verification branch (n-grams under x)
        branches = self.branches(x, p)
        sizes, levels, candidates, _ = branches
        layout = StepLayout.for_candidates(len(levels), sizes.width, candidates, N - 1, self.config.tree)

        # 2-4. one forward pass; verification (the longest accepted prefix plus the model's next token); the KV
        # cache keeps x and the accepted candidate tokens
        tokens = [x, *(t for level in levels for t in level), *layout.node_tokens(candidates)]
        argmax, verdict = self.forward_verify_keep(clock, p, candidate_feed(tokens, layout, candidates))
        self.sizes.observe(verdict, layout.size, [self.pool.source(x, c) for c in candidates])

        # 5. Jacobi update of the window; completed n-grams (and the text's, by policy) go to the pool
        predictions = layout.predictions(argmax)
        return self.record(clock, x, p, branches, layout.new_level(argmax), predictions, verdict, draws=verdict.draws)

    def _copied(self, p: int) -> tuple[tuple[int, ...], ...]:
        """Prompt lookup's copies from the text (`config.lookup`): what followed the first and the most recent
        earlier occurrence of the text's last tokens, as one or two more candidates (those not in the pool
        already); never past the context."""
        if self.copier is None:
            return ()
        room = min(self.config.lookup, self.lm.max_positions - 1 - p)
        found = self.copier.copies(self.committed, room, latest=True) if room > 0 else ()
        return tuple(c for c in found if self.pool.source(self.committed[-1], c) is None)


def lookahead_generate(
    lm: LM,
    prompt_ids: list[int],
    config: LookaheadConfig,
    max_new_tokens: int,
    on_step: StepCallback | None = None,
    sampling: Sampling | None = None,
    should_stop: StopCheck | None = None,
    step_cost: StepCost | None = None,
) -> MethodRun:
    """Decode up to `max_new_tokens` tokens with lookahead decoding; stop at EOS (emitted) or the budget.

    `on_step` gets each `StepTrace` as soon as it is made; `should_stop` is polled between steps (cancellation);
    `step_cost` (this device's forward cost by tokens fed) is what adaptive sizes weigh guesses against.
    """
    check_request(lm, prompt_ids, max_new_tokens)
    decoder = LookaheadDecoder(lm, list(prompt_ids), config, sampling, step_cost)
    return generate(decoder, lm.eos_ids, max_new_tokens, on_step, should_stop)
