"""Record a run: a parallel method (lookahead or Jacobi decoding) and autoregressive decoding of one prompt, as a race
on one wall clock, kept as a `RunTrace`.

The two decoders take turns: the one that has spent less time so far makes the next step, so at every moment both
lanes stand where they would stand had they started together, and a viewer watching the steps arrive sees one lane
pull ahead. Each lane's `wall_s` is the time its own steps took. This is what the app streams and replays, what
`python -m lade_core trace` saves, and what the HTML export draws.
"""

from __future__ import annotations

import datetime
from typing import Callable

from .config import LookaheadConfig, Sampling
from .decoding import Progress, StopCheck, check_request, generate, steps
from .greedy import AutoregressiveDecoder
from .jacobi import JacobiDecoder
from .lookahead import LookaheadDecoder
from .model import LM
from .sizes import StepCost
from .trace import MethodRun, RunTrace, StepTrace

LaneCallback = Callable[[str, StepTrace], None]


def run_ids(run: MethodRun) -> set[int]:
    """Every token id a view of this run may need to print."""
    ids = set(run.tokens)
    for s in run.steps:
        ids.add(s.input_token)
        for group in (s.levels_before, s.candidates, s.predictions, s.ngrams_added, s.ngrams_evicted):
            for row in group:
                ids.update(row)
        ids.update(s.new_level)
        ids.update(d.token for d in s.draws)
    return ids


def parallel_decoder(lm: LM, prompt_ids: list[int], method: str, config: LookaheadConfig, sampling: Sampling,
                     step_cost: StepCost | None = None):
    """The decoder of `method`: "lookahead", or "jacobi" (a block of W guesses)."""
    if method == "jacobi":
        return JacobiDecoder(lm, prompt_ids, config.window, sampling, config.window_seed)
    if method == "lookahead":
        return LookaheadDecoder(lm, prompt_ids, config, sampling, step_cost)
    raise ValueError(f"method must be lookahead or jacobi, got {method!r}")


def parallel_generate(lm: LM, prompt_ids: list[int], method: str, config: LookaheadConfig, max_new_tokens: int,
                      sampling: Sampling | None = None, step_cost: StepCost | None = None,
                      on_step=None, should_stop: StopCheck | None = None) -> MethodRun:
    """`lookahead_generate` or `jacobi_generate`, by name: what bench and sweep call."""
    check_request(lm, prompt_ids, max_new_tokens)
    decoder = parallel_decoder(lm, list(prompt_ids), method, config, sampling or Sampling(), step_cost)
    return generate(decoder, lm.eos_ids, max_new_tokens, on_step, should_stop)


class _Lane:
    def __init__(self, decoder, lm: LM, max_new_tokens: int, should_stop: StopCheck | None):
        self.progress = Progress([])
        self.iterator = steps(decoder, lm.eos_ids, max_new_tokens, should_stop, self.progress)
        self.steps: list[StepTrace] = []
        self.clock = 0.0
        self.done = False

    def advance(self) -> StepTrace | None:
        try:
            step = next(self.iterator)
        except StopIteration:
            self.done = True
            return None
        self.steps.append(step)
        self.clock += step.forward_s + step.overhead_s
        return step

    def result(self) -> MethodRun:
        return MethodRun(tuple(self.progress.tokens), tuple(self.steps), self.clock, self.progress.reason or "running")


def record_run(
    lm: LM,
    prompt: str,
    config: LookaheadConfig,
    max_new_tokens: int,
    sampling: Sampling | None = None,
    title: str = "",
    on_step: LaneCallback | None = None,
    should_stop: StopCheck | None = None,
    method: str = "lookahead",
    step_cost: StepCost | None = None,
) -> RunTrace:
    """Race `method` against autoregressive decoding on `prompt` (chat template applied for chat models).
    `on_step(lane, step)` streams steps as they are made, lane being "parallel" or "baseline"."""
    sampling = sampling or Sampling()
    prompt_ids = lm.encode_prompt(prompt)
    check_request(lm, prompt_ids, max_new_tokens)
    lanes = {
        "parallel": _Lane(parallel_decoder(lm, prompt_ids, method, config, sampling, step_cost), lm, max_new_tokens,
                          should_stop),
        "baseline": _Lane(AutoregressiveDecoder(lm, prompt_ids, sampling), lm, max_new_tokens, should_stop),
    }
    while not all(lane.done for lane in lanes.values()):
        name = min((n for n, lane in lanes.items() if not lane.done), key=lambda n: lanes[n].clock)
        step = lanes[name].advance()
        if step is not None and on_step:
            on_step(name, step)
    parallel, baseline = lanes["parallel"].result(), lanes["baseline"].result()
    return make_trace(lm, prompt, prompt_ids, method, config, sampling, max_new_tokens, parallel, baseline, title)


def make_trace(lm: LM, prompt: str, prompt_ids, method: str, config: LookaheadConfig, sampling: Sampling,
               max_new_tokens: int, parallel: MethodRun, baseline: MethodRun, title: str = "") -> RunTrace:
    """A `RunTrace` of two method runs on `lm`, with the text of every token they show."""
    ids = run_ids(parallel) | run_ids(baseline) | set(prompt_ids)
    return RunTrace(
        prompt=prompt, prompt_ids=tuple(prompt_ids), model=lm.name, device=str(lm.device),
        dtype=str(lm.dtype).removeprefix("torch."), vocab_size=lm.vocab_size, context=lm.max_positions,
        method=method, config=config, sampling=sampling, max_new_tokens=max_new_tokens, parallel=parallel,
        baseline=baseline, token_text=lm.token_texts(sorted(ids)), title=title,
        recorded_at=datetime.date.today().isoformat())
