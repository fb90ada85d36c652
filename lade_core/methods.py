"""The decoding methods by name: what `--method`, the bench, the race and the Python API select.

    lookahead   lookahead decoding (lookahead.py): the 2D window and the n-gram pool, `LookaheadConfig`
    jacobi      Jacobi decoding over a block of W guesses (jacobi.py), `LookaheadConfig.window`
    pld         prompt lookup decoding (speculative.py, drafts.py), `DraftConfig.tokens` and `.match`
    early-exit  self-speculative decoding with the model's first layers as the draft, `DraftConfig.exit_layer`
    draft       speculative decoding with a separate draft model, `DraftConfig.draft_model`

`MethodSpec` (config.py) is one lane's request: the method and its settings (and, for adaptive sizes only, this
device's step cost); `make_decoder` builds its decoder, `decode` runs it to the end. The race of several lanes is
`record.py`.
"""

from __future__ import annotations

from .config import DRAFT_KINDS, MethodSpec, Sampling
from .decoding import Decoder, StepCallback, StopCheck, check_request, generate
from .jacobi import JacobiDecoder
from .lookahead import LookaheadDecoder
from .model import LM
from .speculative import SpeculativeDecoder
from .trace import MethodRun


def as_spec(method) -> MethodSpec:
    """A `MethodSpec` from a spec, or from a `LookaheadConfig` (lookahead with those settings)."""
    return method if isinstance(method, MethodSpec) else MethodSpec(config=method)


def make_decoder(lm: LM, prompt_ids: list[int], spec: MethodSpec, sampling: Sampling | None = None) -> Decoder:
    if spec.method == "jacobi":
        return JacobiDecoder(lm, prompt_ids, spec.config.window, sampling, spec.config.window_seed)
    if spec.method in DRAFT_KINDS:
        return SpeculativeDecoder(lm, prompt_ids, spec.method, spec.draft, sampling)
    return LookaheadDecoder(lm, prompt_ids, spec.config, sampling, spec.step_cost)


def decode(
    lm: LM,
    prompt_ids: list[int],
    spec: MethodSpec,
    max_new_tokens: int,
    sampling: Sampling | None = None,
    on_step: StepCallback | None = None,
    should_stop: StopCheck | None = None,
) -> MethodRun:
    """Decode up to `max_new_tokens` tokens with the method of `spec`; stop at EOS (emitted) or the budget."""
    check_request(lm, prompt_ids, max_new_tokens)
    decoder = make_decoder(lm, list(prompt_ids), as_spec(spec), sampling)
    return generate(decoder, lm.eos_ids, max_new_tokens, on_step, should_stop)
