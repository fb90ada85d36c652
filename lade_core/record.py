"""Record a run: autoregressive decoding (the baseline) raced against up to three methods on one wall clock, kept
as a `RunTrace`.

The decoders take turns: the one that has spent the least time so far makes the next step, so at every moment all
lanes stand where they would stand had they started together, and a viewer watching the steps arrive sees one lane
pull ahead. Each lane's `wall_s` is the time its own steps took (`StepTrace.seconds`). The first method is the
run's main one (`parallel`, what the step views draw); the others become its `lanes`. This is what the app streams
and replays, what `python -m lade_core trace` saves, and what the HTML export draws.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .autoregressive import AutoregressiveDecoder
from .config import ConfigError, LookaheadConfig, MethodSpec, Sampling
from .decoding import Progress, StopCheck, check_request, steps
from .machine import run_machine
from .methods import as_spec, make_decoder
from .model import LM
from .trace import MAX_LANES, Lane, Machine, MethodRun, RunTrace, StepTrace

LaneCallback = Callable[[str, StepTrace], None]


@dataclass(frozen=True)
class RunRequest:
    """What a recorded run was asked: the prompt (as text and, chat template applied, as ids), the budget, the
    sampling settings and a title."""

    prompt: str
    prompt_ids: tuple[int, ...]
    max_new_tokens: int
    sampling: Sampling = Sampling()
    title: str = ""


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
        self.clock += step.seconds
        return step

    def result(self) -> MethodRun:
        return MethodRun(tuple(self.progress.tokens), tuple(self.steps), self.clock, self.progress.reason or "running")


def lane_names(count: int) -> list[str]:
    """What `on_step` calls the lanes of a race of `count` methods: "parallel", then "lanes[0]", "lanes[1]"."""
    return ["parallel", *(f"lanes[{i}]" for i in range(count - 1))]


def record_run(
    lm: LM,
    prompt: str,
    methods: LookaheadConfig | MethodSpec | Sequence[MethodSpec],
    max_new_tokens: int,
    sampling: Sampling | None = None,
    on_step: LaneCallback | None = None,
    should_stop: StopCheck | None = None,
    machine: Machine | None = None,
) -> RunTrace:
    """Race autoregressive decoding against `methods` (a `LookaheadConfig` is lookahead with it; a sequence is up
    to three lanes, the main one first) on `prompt`, chat template applied for chat models. `on_step(lane, step)`
    streams steps as they are made, lane being "baseline" or one of `lane_names`. `machine`: where it runs, with
    the cost curve measured in this process (`measure.here.machine_record`); by default the machine without them."""
    machine = machine or run_machine(lm)
    specs = [as_spec(m) for m in (methods if isinstance(methods, (list, tuple)) else [methods])]
    if not 1 <= len(specs) <= MAX_LANES + 1:
        raise ConfigError(f"a race has 1 to {MAX_LANES + 1} methods beside the baseline, got {len(specs)}")
    sampling = sampling or Sampling()
    prompt_ids = lm.encode_prompt(prompt)
    check_request(lm, prompt_ids, max_new_tokens)
    lanes = {
        name: _Lane(make_decoder(lm, list(prompt_ids), spec, sampling), lm, max_new_tokens, should_stop)
        for name, spec in zip(lane_names(len(specs)), specs)
    }
    lanes["baseline"] = _Lane(AutoregressiveDecoder(lm, prompt_ids, sampling), lm, max_new_tokens, should_stop)
    while not all(lane.done for lane in lanes.values()):
        name = min((n for n, lane in lanes.items() if not lane.done), key=lambda n: lanes[n].clock)
        step = lanes[name].advance()
        if step is not None and on_step:
            on_step(name, step)
    request = RunRequest(prompt, tuple(prompt_ids), max_new_tokens, sampling)
    raced = [
        Lane(spec.method, spec.config, spec.draft, lanes[name].result())
        for name, spec in zip(lane_names(len(specs)), specs)
    ]
    return make_trace(lm, request, raced, lanes["baseline"].result(), machine)


def make_trace(
    lm: LM, request: RunRequest, lanes: Sequence[Lane], baseline: MethodRun, machine: Machine | None = None
) -> RunTrace:
    """A `RunTrace` of `lanes` (the main one first) and the baseline on `lm`, with the text of every token they
    show, recorded on `machine` (by default this one, without a curve)."""
    main, *more = lanes
    ids = set(request.prompt_ids) | run_ids(baseline)
    for lane in lanes:
        ids |= run_ids(lane.run)
    return RunTrace(
        prompt=request.prompt,
        prompt_ids=tuple(request.prompt_ids),
        model=lm.name,
        device=str(lm.device),
        dtype=str(lm.dtype).removeprefix("torch."),
        vocab_size=lm.vocab_size,
        context=lm.max_positions,
        method=main.method,
        config=main.config,
        sampling=request.sampling,
        max_new_tokens=request.max_new_tokens,
        parallel=main.run,
        baseline=baseline,
        token_text=lm.token_texts(sorted(ids)),
        title=request.title,
        recorded_at=datetime.date.today().isoformat(),
        draft=main.draft,
        lanes=tuple(more),
        machine=machine or run_machine(lm),
    )
