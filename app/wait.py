"""The expected wait before Run: the races ahead in the engine's queue and this race's own time, a bound predicted
from this server's own measurements, in the words the sidebar shows under Run (`wait_text`).

A race's lanes take turns on the one engine (lade_core/record.py), so its time is the sum of its lanes'. Each lane
reads the prompt (one forward of its tokens), then makes its steps: as many as the fewest tokens a step it wrote on
any bench prompt make of max new tokens (lookahead's swept settings, prompt lookup's bench; one a step for the
others, and for a lookahead setting no sweep covers), each step at the upper quartile of the curve's
cost for the most tokens it may feed (`MethodSpec.tokens_per_forward`), plus the engine's work between forwards for
that method, and all of it times how much slower the engine runs now than when its curve was measured (`MODEL.pace`:
the load on the CPUs now against then, and greedy's pace in a race that just ended); early exit's draft passes, as
many as its draft schedule asks when nothing is kept, count as whole one-token forwards. A run costs at most the
per-run budget (`limits.RUN_BUDGET_S`), where the engine stops it.

The curve is the one this process measured the way a race runs, at start-up (`MODEL.cost_curve`); the work between
forwards was measured by a short race of every method at start-up and grows with every race that shows more
(`MODEL.observe`). Until both are measured the words say the time is not predicted, and why. The runs ahead are the
engine's jobs in Gradio's queue now (waiting or running), each predicted from its own request where it is a race (the
Run button, `/generate`), else counted as not predicted.

The bound is a promise: Run records it with the race (`promise`), the race's status repeats it, and a race that took
longer on the engine says why when it ends, read off its own record (`overrun_words`).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import gradio as gr

from lade_core import MethodSpec, RunTrace
from lade_core.config import METHOD_NAMES
from lade_core.measure.costcurve import step_cost
from lade_core.sizes import StepCost

from . import gradio_adapter, limits, zerogpu
from .logs import refusal
from .model import MODEL

REFRESH_S = 10  # the sidebar's wait is asked again this often while the sidebar is open (app/ui.py)
AGAIN = f"(Asked again every {REFRESH_S} s while this panel is open.)"
DRAFTED = ("early-exit",)  # lanes whose steps also run draft passes (`step_widths`)


def curve_source(curve: dict) -> str:
    """Which cost curve a prediction read, in words: measured on this machine, or the shipped one."""
    where = curve.get("machine_description") or curve.get("machine") or "an unrecorded machine"
    return f"the cost curve {curve.get('source', 'shipped')} ({where})"


@lru_cache(maxsize=1)
def _fewest() -> dict:
    """The fewest tokens per step measured on any bench prompt: lookahead's per swept setting (W, N, pool; G = W),
    prompt lookup's (`lade-pld` in the relatives' bench). Tokens per step do not depend on the machine (the output
    is greedy's), so these stand for any server."""
    from lade_core.measure.autoconfig import load_sweeps
    from lade_core.paths import BENCH

    sweeps = {
        (p["window"], p["ngram"], p["pool"]): min(p["compression_by_prompt"].values())
        for p in load_sweeps()
        if p.get("compression_by_prompt")
    }
    rows = json.loads((BENCH / "peers-relatives.json").read_text(encoding="utf-8"))["rows"]
    pld = min((r["runs"]["lade-pld"]["tokens_per_step"] for r in rows if "lade-pld" in r["runs"]), default=1.0)
    return {"lookahead": sweeps, "pld": pld}


def tokens_per_step(spec: MethodSpec | None) -> float:
    """The fewest tokens a step of this lane wrote on any bench prompt (lookahead: the swept setting of its N and
    pool nearest its W, or 1 where none is at least as wide; prompt lookup: its bench's; the others 1)."""
    if spec is None or spec.method not in ("lookahead", "pld"):
        return 1.0
    fewest = _fewest()
    if spec.method == "pld":
        return max(1.0, fewest["pld"])
    c = spec.config
    swept = [
        (w, v) for (w, n, pool), v in fewest["lookahead"].items() if n == c.ngram and pool == c.pool and w <= c.window
    ]
    return max(1.0, max(swept)[1]) if swept and c.guess >= c.window else 1.0


def step_widths(spec: MethodSpec | None, max_new: int) -> list[tuple[int, int]]:
    """(tokens the step's forward feeds, draft passes before it) for each step of a lane, as many steps as it takes
    at the fewest tokens a step any bench prompt gave it (`tokens_per_step`; greedy, Jacobi and early exit one a
    step): greedy (`spec` None) feeds 1; lookahead, Jacobi and prompt lookup at most their `tokens_per_forward`;
    early exit drafts k tokens (k passes) and verifies 1 + k, k following its schedule when the step keeps none of
    them."""
    if spec is None:
        return [(1, 0)] * max_new
    if spec.method not in DRAFTED:
        return [(spec.tokens_per_forward, 0)] * math.ceil(max_new / tokens_per_step(spec))
    widths, k = [], spec.draft.tokens
    for _ in range(max_new):
        widths.append((1 + k, k))
        k = spec.draft.next_tokens(k, k, 0)
    return widths


def lane_cost(spec: MethodSpec | None, prompt_tokens: int, max_new: int, cost: StepCost) -> float:
    """A lane's forwards in greedy steps (a one-token forward is 1): the prompt's forward, then each step's forward
    and its draft passes, at one token a step."""
    return cost(prompt_tokens) + sum(cost(fed) + passes for fed, passes in step_widths(spec, max_new))


@dataclass(frozen=True)
class Pace:
    """What the engine adds to its curve's forwards: its work per step besides the forward, by method (seconds;
    "greedy" for the baseline), and how much slower it runs now than when the curve was measured (at least 1)."""

    overhead_s: dict = field(default_factory=dict)
    slowdown: float = 1.0


AT_REST = Pace()  # no work between forwards, no slowdown: the curve alone


@dataclass(frozen=True)
class Race:
    """A race's predicted time: each lane's seconds (the methods in order, greedy last), from one curve, and the steps
    each lane was allowed (the prompt's read counted as one, as a recorded lane counts it)."""

    lanes: tuple[tuple[str, float], ...]
    prompt_tokens: int
    max_new: int
    steps: tuple[int, ...] = ()

    @property
    def seconds(self) -> float:
        return sum(s for _, s in self.lanes)

    @property
    def engine_s(self) -> float:
        """What it holds the engine: its seconds, or the budget where the engine stops it."""
        return min(self.seconds, limits.RUN_BUDGET_S)


def predict_race(
    specs: Sequence[MethodSpec], prompt_tokens: int, max_new: int, curve: dict, pace: Pace = AT_REST
) -> Race:
    """The race of `specs` against greedy on a prompt of `prompt_tokens` (after the chat template), `max_new` tokens,
    at one token a step, on `curve` (a cost curve: `greedy_s` and its points, read at their upper quartiles) at the
    engine's `pace`."""
    cost, one = step_cost(curve, "q3"), curve["greedy_s"]

    def lane(spec: MethodSpec | None) -> float:
        steps = len(step_widths(spec, max_new))
        extra = pace.overhead_s.get(spec.method if spec else "greedy", 0.0) * steps  # a step's work, each step
        return pace.slowdown * (one * lane_cost(spec, prompt_tokens, max_new, cost) + extra)

    lanes = [(METHOD_NAMES[s.method], lane(s)) for s in specs]
    lanes.append((METHOD_NAMES["greedy"], lane(None)))
    steps = tuple(1 + len(step_widths(s, max_new)) for s in (*specs, None))
    return Race(tuple(lanes), prompt_tokens, max_new, steps)


def promise(specs: Sequence[MethodSpec], prompt_tokens: int, max_new: int) -> Race | None:
    """What the expected wait promises for one race alone at the engine's pace now (its `engine_s`, at most the
    budget); None where nothing is predicted yet."""
    curve, _ = server_curve(MODEL.loaded())
    if curve is None:
        return None
    return predict_race(specs, prompt_tokens, max_new, curve, Pace(*MODEL.pace(curve)))


def overrun_words(race: Race, run: RunTrace, spent_s: float, load_end: float) -> str:
    """Why a race took longer on the engine (`spent_s`) than the expected wait promised it (`race`, predicted when it
    was asked), read off its own record: each lane that overran its share, by more steps than it was allowed or by
    slower steps (one of the two must hold), else the time between its steps; and the machine's 1-minute load at the
    race's start and end (`load_end`), with other work named only where the load rose past what the race's own
    threads can add. "" where it kept the promise (a race predicted past the budget was promised the budget's cut)."""
    if spent_s <= race.engine_s or race.seconds > limits.RUN_BUDGET_S:
        return ""
    lanes = [lane.run for lane in run.all_lanes] + [run.baseline]
    said = []
    for (name, allowed_s), allowed, lane in zip(race.lanes, race.steps, lanes):
        took, steps = sum(s.seconds for s in lane.steps), len(lane.steps)
        if took <= allowed_s or not steps:
            continue
        why = []
        if steps > allowed:
            why.append(f"{steps} steps where it allowed {allowed} (fewer tokens a step than on any bench prompt)")
        if took / steps > allowed_s / allowed:
            average, allowed_average = 1000 * took / steps, 1000 * allowed_s / allowed
            why.append(f"{average:.0f} ms a step on average where it allowed {allowed_average:.0f} ms")
        lane_name, share = name[:1].upper() + name[1:], duration(allowed_s)
        said.append(
            f" {lane_name} took {duration(took)} where its share of the bound was {share}: {' and '.join(why)}."
        )
    if not said:
        stepped = sum(s.seconds for lane in lanes for s in lane.steps)
        said.append(
            f" Its lanes' steps took {duration(stepped)} together, within the bound; the other "
            f"{duration(spent_s - stepped)} went between its steps."
        )
    words = (
        f"This race took {duration(spent_s)} on the engine, longer than the {duration(race.engine_s)} the expected "
        f"wait promised when it was asked.{''.join(said)}"
    )
    start, threads = run.machine.load, run.machine.threads
    if start < 0 or load_end < 0:
        return words + " This machine's load was not measured."
    load = f" This machine's 1-minute load went from {start:.2f} at the race's start to {load_end:.2f} at its end"
    if load_end > max(start, threads) + 0.25:
        own = f"{threads} thread{'s' * (threads != 1)}"
        return words + f"{load}, more than the race's own {own} can add: other work shared its CPUs."
    return words + f"{load}, no more than the race's own threads add: the load does not show why."


def server_curve(lm) -> tuple[dict | None, str]:
    """(the cost curve a prediction reads, or None and why there is none), without measuring one: the curve this
    process measured at start-up, the way a race runs."""
    if zerogpu.available():
        return None, "each race here runs on a GPU lent for one call, and no cost curve of that GPU is on file"
    if lm is None:
        return None, "the model has not loaded yet"
    measured = MODEL.measured_curve()
    if measured is None:
        return None, "the server is still measuring its engine's pace (once, at start-up)"
    return measured, ""


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


def ahead(jobs: Iterable, races: Sequence, lm, curve: dict | None, pace: Pace = AT_REST) -> tuple[int, list[float]]:
    """(engine jobs in the queue now, the predicted seconds of those that are races, each at most the budget)."""
    engine = [j for j in jobs if gradio_adapter.group(gradio_adapter.event_of(j)) == limits.ENGINE_GROUP]
    predicted = []
    for job in engine:
        fn, values = gradio_adapter.call_of(job)
        if fn in races and values is not None and lm is not None and curve is not None:
            try:
                predicted.append(predict_race(*race_of(values, lm), curve, pace).engine_s)
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


def _race_words(race: Race, specs: Sequence[MethodSpec], curve: dict, pace: Pace) -> str:
    """How the race's time was predicted: from which curve, its lanes, and what the bound takes in."""
    lanes = " + ".join(f"{name} {duration(s)}" for name, s in race.lanes)
    slower = f", times {pace.slowdown:.2f} for how much busier this machine is now" if pace.slowdown > 1.005 else ""
    words = (
        f"A bound for the slowest case from {plain(curve_source(curve))}: {lanes} = {duration(race.seconds)}, the "
        f"lanes taking turns on the one engine, each reading the prompt's {race.prompt_tokens:,} tokens, then writing "
        f"{race.max_new}, each at the fewest tokens a step it wrote on any bench prompt (one a step where none was "
        f"measured), each forward at the curve's upper quartile plus the engine's measured work between "
        f"forwards{slower}"
    )
    if any(s.method in DRAFTED for s in specs):
        words += "; early exit's draft passes count as whole forwards"
    words += ". It holds while this machine stays as busy as it is now; a race that overruns it says why when it ends."
    if race.seconds > limits.RUN_BUDGET_S:
        words += (
            f" That is over this server's limit of {limits.RUN_BUDGET_S:g} s per run: the engine will stop it at "
            f"{limits.RUN_BUDGET_S:g} s, each lane as far as it got, unless accepted guesses save enough steps."
        )
    return words


def expected(values: Sequence, lm, curve: dict | None) -> Race | None:
    """This race's bound (the Run button's inputs as `values`) at the engine's pace now; None without a curve.
    gr.Error where Run would refuse the request."""
    if lm is None or curve is None:
        return None
    overhead, slowdown = MODEL.pace(curve)
    return predict_race(*race_of(values, lm), curve, Pace(overhead, slowdown))


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
    race, pace = None, Pace(*MODEL.pace(curve)) if curve is not None else AT_REST
    try:
        if lm is not None:
            specs = race_of(values, lm)[0]
            race = expected(values, lm, curve)
    except gr.Error as exc:
        return f"**Run would be refused:** {plain(exc.message)}"
    except (RuntimeError, ValueError) as exc:  # the tokenizer, busy in another thread, or a curve it cannot read
        why = f"the prediction failed ({exc})"
    count, predicted = ahead(jobs, races, lm, curve, pace)
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
        f"about {duration(race.engine_s)}{cut}{more}. {AGAIN}\n\n{_race_words(race, specs, curve, pace)}"
    )
