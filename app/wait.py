"""The expected wait before Run: the races ahead in the engine's queue and this race's own time, predicted from this
server's cost curve, in the words the sidebar shows under Run (`wait_text`).

A race's lanes take turns on the one engine (lade_core/record.py), so its time is the sum of its lanes'. Each lane
reads the prompt (one forward of its tokens), then makes its steps. The prediction takes the slowest case, one token
written a step (max new tokens steps; each accepted guess saves one), each step at the curve's cost for the most
tokens it may feed (`MethodSpec.tokens_per_forward`); early exit's draft passes, as many as its draft schedule asks
when nothing is kept, count as whole one-token forwards (they run the model's first layers and its head). Left out:
the engine's work between forwards, and a context longer than the curve's (the curve times forwards alone, on its
own short prefix). A run costs at most the per-run budget (`limits.RUN_BUDGET_S`), where the engine stops it.

The curve is one at hand, never measured here (that is engine work, and this answers outside the queue): the one
this process read or measured for Auto, else this machine's cached curve of the model on its device, dtype, kernels
and threads, else the shipped one where the model is the shipped one on a CPU. With none, the words say the time is
not predicted, and why. The runs ahead are the engine's jobs in Gradio's queue now (waiting or running), each
predicted from its own request where it is a race (the Run button, `/generate`), else counted as not predicted.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import gradio as gr
import torch

from lade_core import MethodSpec
from lade_core.config import METHOD_NAMES
from lade_core.machine import cached_curves
from lade_core.measure.calibrate import cache_dir, lab_cpu_curves, labelled
from lade_core.measure.costcurve import step_cost
from lade_core.sizes import StepCost

from . import gradio_adapter, limits, zerogpu
from .events import curve_source
from .logs import refusal
from .model import MODEL

REFRESH_S = 10  # the sidebar's wait is asked again this often while the sidebar is open (app/ui.py)
AGAIN = f"(Asked again every {REFRESH_S} s while this panel is open.)"
DRAFTED = ("early-exit",)  # lanes whose steps also run draft passes (`step_widths`)


def step_widths(spec: MethodSpec | None, max_new: int) -> list[tuple[int, int]]:
    """(tokens the step's forward feeds, draft passes before it) for each step of a lane that writes one token a
    step, the slowest case: greedy (`spec` None) feeds 1; lookahead, Jacobi and prompt lookup at most their
    `tokens_per_forward`; early exit drafts k tokens (k passes) and verifies 1 + k, k following its schedule when
    the step keeps none of them."""
    if spec is None:
        return [(1, 0)] * max_new
    if spec.method not in DRAFTED:
        return [(spec.tokens_per_forward, 0)] * max_new
    widths, k = [], spec.draft.tokens
    for _ in range(max_new):
        widths.append((1 + k, k))
        k = spec.draft.next_tokens(k, k, 0)
    return widths


def lane_cost(spec: MethodSpec | None, prompt_tokens: int, max_new: int, cost: StepCost) -> float:
    """A lane's time in greedy steps (a one-token forward is 1): the prompt's forward, then each step's forward and
    its draft passes, at one token a step."""
    return cost(prompt_tokens) + sum(cost(fed) + passes for fed, passes in step_widths(spec, max_new))


@dataclass(frozen=True)
class Race:
    """A race's predicted time: each lane's seconds (the methods in order, greedy last), from one curve."""

    lanes: tuple[tuple[str, float], ...]
    prompt_tokens: int
    max_new: int

    @property
    def seconds(self) -> float:
        return sum(s for _, s in self.lanes)

    @property
    def engine_s(self) -> float:
        """What it holds the engine: its seconds, or the budget where the engine stops it."""
        return min(self.seconds, limits.RUN_BUDGET_S)


def predict_race(specs: Sequence[MethodSpec], prompt_tokens: int, max_new: int, curve: dict) -> Race:
    """The race of `specs` against greedy on a prompt of `prompt_tokens` (after the chat template), `max_new` tokens,
    at one token a step, on `curve` (a cost curve: `greedy_s` and its points)."""
    cost, one = step_cost(curve), curve["greedy_s"]
    lanes = [(METHOD_NAMES[s.method], one * lane_cost(s, prompt_tokens, max_new, cost)) for s in specs]
    lanes.append((METHOD_NAMES["greedy"], one * lane_cost(None, prompt_tokens, max_new, cost)))
    return Race(tuple(lanes), prompt_tokens, max_new)


def server_curve(lm) -> tuple[dict | None, str]:
    """(the cost curve a prediction reads, or None and why there is none), without measuring one."""
    if zerogpu.available():
        return None, "each race here runs on a GPU lent for one call, and no cost curve of that GPU is on file"
    if lm is None:
        return None, "the model has not loaded yet"
    measured = MODEL.measured_curve()
    if measured is not None:
        return measured, ""
    dtype, threads = str(lm.dtype).removeprefix("torch."), torch.get_num_threads()
    mine = (str(lm.device), dtype, lm.kernels, threads)
    for curve in cached_curves(cache_dir(), lm.name):  # this machine's, newest first
        if (curve.get("device"), curve.get("dtype"), curve.get("kernels"), curve.get("threads")) == mine:
            return labelled(curve, "measured here"), ""
    shipped = lab_cpu_curves(here=False)["single"]
    if str(lm.device) == "cpu" and shipped is not None and shipped.get("model") == lm.name:
        return shipped, ""
    return None, f"no cost curve of {lm.name} on this server's {lm.device} is on file yet (Auto measures one)"


def race_of(values: Sequence, lm) -> tuple[list[MethodSpec], int, int]:
    """(specs, prompt tokens, max new tokens) of a race request's values (the Run button's inputs, or `/generate`'s:
    prompt, W, N, G, max new tokens, pool, temperature, top-p, seed, methods), checked as Run checks them: a
    gr.Error with Run's own message otherwise."""
    if len(values) != 10:
        raise limits.refused(f"a race request has 10 values, not {len(values)}")
    prompt, window, ngram, guess, max_new, pool, temperature, top_p, seed, methods = values
    prompt, config, max_new = limits.check_request(prompt, window, ngram, guess, max_new, pool)
    limits.check_sampling(temperature, top_p, seed)
    specs = limits.check_methods(methods, config)
    ids = lm.encode_prompt(prompt)
    limits.check_context(len(ids), lm.max_positions, max_new)
    limits.check_cost(len(ids), len(specs))
    return specs, len(ids), max_new


def ahead(jobs: Iterable, races: Sequence, lm, curve: dict | None) -> tuple[int, list[float]]:
    """(engine jobs in the queue now, the predicted seconds of those that are races, each at most the budget)."""
    engine = [j for j in jobs if getattr(j.fn, "concurrency_id", None) == limits.ENGINE_GROUP]
    predicted = []
    for job in engine:
        fn, values = gradio_adapter.call_of(job)
        if fn in races and values is not None and lm is not None and curve is not None:
            try:
                predicted.append(predict_race(*race_of(values, lm), curve).engine_s)
            except (gr.Error, ValueError, TypeError, RuntimeError, KeyError):  # the tokenizer may be busy
                continue
    return len(engine), predicted


def duration(seconds: float) -> str:
    """Seconds in words: one decimal under 10 s, whole seconds under 100 s, then minutes and seconds."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 100:
        return f"{round(seconds)} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s"


def plain(text: str) -> str:
    """Text from a file or a refusal as Markdown that shows it as it is (data, never markup)."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return "".join("\\" + ch if ch in "\\`*_[]#|~" else ch for ch in text)


def _queue_words(jobs: int, predicted: list[float], now: str) -> str:
    """The runs ahead, as a clause: how many, and their predicted time where it is."""
    if not jobs:
        return f"no run is ahead of it in the engine's queue right now ({now})"
    runs = f"{jobs} run{'s are' if jobs != 1 else ' is'} ahead of it in the engine's queue right now ({now})"
    if not predicted:
        return f"{runs}, their time not predicted (each at most {limits.RUN_BUDGET_S:g} s)"
    some = "" if len(predicted) == jobs else f" {len(predicted)} of them"
    together = " together" if len(predicted) > 1 else ""
    return f"{runs},{some} predicted at up to about {duration(sum(predicted))}{together}"


def _race_words(race: Race, specs: Sequence[MethodSpec], curve: dict) -> str:
    """How the race's time was predicted: from which curve, its lanes, and what the prediction leaves out."""
    lanes = " + ".join(f"{name} {duration(s)}" for name, s in race.lanes)
    words = (
        f"Predicted for the slowest case from {plain(curve_source(curve))}: {lanes} = {duration(race.seconds)}, the "
        f"lanes taking turns on the one engine, each reading the prompt's {race.prompt_tokens:,} tokens, then writing "
        f"{race.max_new} at one token a step (each accepted guess saves a step). The curve times forward passes "
        f"alone, after a {curve.get('prefix', 100)}-token prefix: the engine's work between them adds to it"
    )
    if any(s.method in DRAFTED for s in specs):
        words += "; early exit's draft passes count as whole forwards"
    words += "."
    if race.seconds > limits.RUN_BUDGET_S:
        words += (
            f" That is over this server's limit of {limits.RUN_BUDGET_S:g} s per run: the engine will stop it at "
            f"{limits.RUN_BUDGET_S:g} s, each lane as far as it got, unless accepted guesses save enough steps."
        )
    return words


def too_often(asks, client: str | None) -> str | None:
    """What the sidebar says when `client` asks for the wait more often than `asks` (`routes.Buckets`: the
    `limits.WAIT_RATE` per `limits.WAIT_S` a page asks well within) lets it, with one refusal line; None otherwise.
    Each ask tokenises the prompt outside the queue, so it is rated like the run routes (None: a client not counted)."""
    if client is None:
        return None
    seconds = asks.wait(client)
    if not seconds:
        return None
    refusal(f"refused: {client} asked for the expected wait faster than {limits.WAIT_RATE} per {limits.WAIT_S:g} s")
    again = max(1, round(seconds))
    return f"**Expected wait: not asked again yet**: this visitor asked too often; ask again in {again} s."


def wait_text(values: Sequence, jobs: Iterable, races: Sequence) -> str:
    """What the sidebar says under Run for the race as set (`values`: the Run button's inputs) with `jobs` in the
    queue (`gradio_adapter.queued`); `races` are the handlers whose jobs are races (the Run button's, `/generate`)."""
    lm = MODEL.loaded()
    curve, why = server_curve(lm)
    now = time.strftime("%H:%M:%S UTC", time.gmtime())
    race = None
    try:
        if lm is not None:
            specs, prompt_tokens, max_new = race_of(values, lm)
            race = predict_race(specs, prompt_tokens, max_new, curve) if curve is not None else None
    except gr.Error as exc:
        return f"**Run would be refused:** {plain(exc.message)}"
    except (RuntimeError, ValueError) as exc:  # the tokenizer, busy in another thread, or a curve it cannot read
        why = f"the prediction failed ({exc})"
    count, predicted = ahead(jobs, races, lm, curve)
    queue = _queue_words(count, predicted, now)
    if race is None:
        return (
            f"**Expected wait: not predicted**, since {plain(why)}. {queue[:1].upper()}{queue[1:]}. A race's lanes "
            f"take turns on the one engine, so it takes about as long as its lanes added together, and the engine "
            f"stops a run at {limits.RUN_BUDGET_S:g} s. {AGAIN}"
        )
    unknown = count - len(predicted)
    total = sum(predicted) + race.engine_s
    cut = f" (cut at the limit of {limits.RUN_BUDGET_S:g} s per run)" if race.seconds > limits.RUN_BUDGET_S else ""
    more = f", plus the other {unknown} ahead, not predicted" if unknown and predicted else ""
    more = f", plus the {unknown} ahead" if unknown and not predicted else more
    return (
        f"**Expected wait: up to about {duration(total)}** until this race's result: {queue}, then this race, up to "
        f"about {duration(race.engine_s)}{cut}{more}. {AGAIN}\n\n{_race_words(race, specs, curve)}"
    )
