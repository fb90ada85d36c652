"""Plain autoregressive decoding, the baseline: one forward pass and one token per step, with a KV cache.

It makes the same `StepTrace`s as the parallel engines (a prefill step, then one "autoregressive" step per token),
so all of them can be drawn on one step clock. With `Sampling(temperature=0)` it is greedy decoding and equals
`model.generate(do_sample=False)` token for token; otherwise it is plain ancestral sampling with a seeded stream.
(`greedy_generate` is its old name, kept: it samples too, when asked.)
"""

from __future__ import annotations

from .config import Sampling
from .decoding import DecoderState, StepCallback, StepClock, StopCheck, check_request, generate
from .model import LM
from .sampling import next_token
from .trace import MethodRun, StepTrace


class AutoregressiveDecoder(DecoderState):
    """The decoding state between steps: KV cache and committed tokens."""

    def step(self) -> StepTrace:
        x, p = self.advance()
        clock = StepClock()
        with clock.timed("forward", self.lm):
            logits = self.lm.decode_one(self.cache, x, p)
        token = next_token(logits, self.sampling, self.sampler)
        return StepTrace(
            index=self.index, kind="autoregressive", position=p, input_token=x, accepted=(token,), **clock.split()
        )


def autoregressive_generate(
    lm: LM,
    prompt_ids: list[int],
    max_new_tokens: int,
    sampling: Sampling | None = None,
    on_step: StepCallback | None = None,
    should_stop: StopCheck | None = None,
) -> MethodRun:
    """Decode up to `max_new_tokens` tokens one per forward (greedy, or sampled with `sampling`); stop at EOS
    (emitted) or the budget."""
    check_request(lm, prompt_ids, max_new_tokens)
    decoder = AutoregressiveDecoder(lm, prompt_ids, sampling)
    return generate(decoder, lm.eos_ids, max_new_tokens, on_step, should_stop)


greedy_generate = autoregressive_generate  # the old name
