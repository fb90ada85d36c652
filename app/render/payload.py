"""What the browser's renderer gets for a run: the trace itself, plus what only the engine's own code can derive.
The renderer (app/static/*.js) draws every view from this, in the page, the HTML export and every embed. Two things
are derived here, once per run (or once per new step of a live run), because the engine's code owns them: the
attention mask of each distinct step layout (`StepLayout.mask()`, the very matrix the model used, as bits, with the
labels, positions and the reason rules of its hover text), and the state of the n-gram pool around each step
(replayed through the engine's `NGramPool`). A run raced in the visitor's browser is derived there by the engine's
second home (app/static/lade-derive.js over lade-engine.js), held to this by tests/test_derive_js.py. Everything
else a view shows (counts, colours, trajectories, sentences) is computed in the browser from the trace.

Every lane is derived: `steps[i]` for the main lane (`trace.parallel`), `lanes[j].steps[i]` for `trace.lanes[j]`,
all pointing into one shared `layouts` table; a speculative step's layout is its draft as a token tree with no
window (`StepLayout.tree(0, 0, candidates)`: x, then one path of up to K nodes), and only lookahead lanes have pool
rows.

Cost: the mask bits of a layout are q*q/8 bytes (q = 1 + L*W + nodes); a run has at most (N-1)(G+1) plain layouts
(a token tree, up to one per step), and `MASK_BUDGET` bounds the total: a layout past it is sent without its bits and
the mask view says so. The pool rows are at most `POOL_KEYS` keys of at most G n-grams per step.
"""

from __future__ import annotations

import base64
import json
from typing import (
    NotRequired,  # pydantic reads these on Python 3.11
)

import numpy as np
from typing_extensions import TypedDict

from lade_core import RunTrace, StepTrace
from lade_core.config import METHOD_NAMES
from lade_core.layout import REASONS, StepLayout
from lade_core.measure.labdata import LabRunData, MachineCurve, lab_run_data, machine_curve
from lade_core.metrics import MetricTerm, RunMetrics, run_metrics, terms
from lade_core.pool import NGramPool
from lade_core.schema import to_data

MASK_BUDGET = 8 * 2**20  # bytes of mask bits per run
CUT = ("cancelled", "budget")  # stop reasons of a race stopped before its lanes' ends
POOL_KEYS = 8  # keys shown per step: the lookup key x, then the keys the step touched
# The handles the server's store makes (app/store.py `add_run`, `add_live`): a finished run's keyed hash, a live run's
# unguessable token; a link naming one is a run that server may hold
STORED_HANDLE = r"u-[0-9a-f]{20}|live-[A-Za-z0-9_-]{16}"
ITEM_BUDGET = 4_000_000  # token ids in pool rows and layout tables per run (about 20 MB of JSON at most)


class LayoutRow(TypedDict):
    """One distinct step layout for the mask view: its tokens' labels, positions, kinds (`token_kinds`) and tree
    parents, and the mask as packed bits in base64 (null past `MASK_BUDGET`)."""

    size: int
    levels: int
    window: int
    nodes: int
    labels: list[str]
    positions: list[int]
    kinds: list[int]
    parents: list[int]
    mask: str | None


class PoolItem(TypedDict):
    cont: list[int]  # the n-gram's continuation after its key
    new: bool  # the step put it there


class PoolRow(TypedDict):
    key: int
    items: list[PoolItem]  # most recently added first
    evicted: list[list[int]]


class PoolState(TypedDict):
    size: int
    keys: int
    rows: list[PoolRow]
    more_keys: int  # keys the step touched past `POOL_KEYS`


class DerivedStep(TypedDict):
    layout: int  # index into `Derived.layouts`; -1 for a prefill or a one-token step
    kept: int  # draft tokens the step kept (`StepTrace.n_accepted_from_candidate`)
    pool: NotRequired[PoolState]  # lookahead lanes only
    # lookahead lanes: where the candidate whose tokens the step kept came from: "window" (a window column), "text"
    # (the prompt's or the answer's n-grams, by the pool policy), "copy" (prompt lookup's copy), "" (it kept none)
    kept_from: NotRequired[str]


class DerivedLane(TypedDict):
    steps: list[DerivedStep]


class LaneSpeed(TypedDict):
    speedup: float  # greedy's time over the lane's, on the recording's one clock
    bench: list[float]  # the bench's speed-ups of the same prompt and setting (the main lane only)
    verdict: str  # "faster than greedy", "slower than greedy" or "about as fast as greedy" (`app.speed`)


class BandPart(TypedDict):
    """One measured spread a band is the widest of (`app.speed` `own_spread`, `device_floor`)."""

    what: str  # the spread in words (`app.speed` OWN, DEVICE)
    ratio: float  # the slower half's time over the faster's (1.17: 17%)
    source: str  # "this run" (its own greedy steps) or "this run's device" (the floor measured before the race)


class Band(TypedDict):
    ratio: float  # two speed-ups within this ratio are about as fast (1.17: 17%)
    parts: list[BandPart]  # each measured spread it is the largest of, with its source


class Speed(TypedDict):
    """A finished run's speed as the one noise rule (`app.speed`) reads it."""

    band: Band
    lanes: dict[str, LaneSpeed]  # by the page's lane ids
    fastest: list[str]  # the lanes about as fast as the fastest, fastest first


class Derived(TypedDict):
    layouts: list[LayoutRow]
    steps: list[DerivedStep]  # the main lane's
    lanes: list[DerivedLane]  # the run's lanes, in order
    reasons: list[str]  # the mask's hover texts (`layout.REASONS`)
    rules: list[list[list[int]]]  # `reason_rules()`
    names: dict[str, str]  # every way of decoding by name (`config.METHOD_NAMES`)
    metrics: NotRequired[dict[str, RunMetrics]]  # by the page's lane ids
    speed: NotRequired[Speed]  # a finished run's (a live run has it once it ends)
    metric_terms: NotRequired[list[MetricTerm]]  # the metrics' names elsewhere (`lade_core.metrics.terms`)
    # the CPU curve the run's machine measured where it ran (`labdata.machine_curve`), for the sentences beside it; a
    # live run's comes with its whole payload, a race in the browser has none
    machine_curve: NotRequired[MachineCurve | None]
    # the speed lab's predictions (`labdata.lab_run_data`): only where the page cannot ask for them (an export);
    # the server and the static site answer them at the run's `runs/<handle>/lab.json`
    lab: NotRequired[LabRunData]


class Payload(TypedDict):
    """What the renderer draws a run from."""

    trace: RunTrace  # as the trace file's JSON (`schema.to_data`)
    derived: Derived


class LiveDelta(TypedDict):
    """What a live run's page lacks of it since the steps it has (`LiveRun.pull`): each lane's new steps, the main
    lane's new derived rows, the new step layouts, the texts of the tokens they hold, and the run's status line."""

    lanes: dict[str, list[StepTrace]]  # by the page's lane ids, as the trace file's JSON
    derived: list[DerivedStep]
    layouts: list[LayoutRow]
    token_text: dict[str, str]  # token id (as text) -> its text
    status: str


class LiveAnswer(TypedDict):
    """A live run at its address (`runs/<handle>.json` with `live` set): the whole run so far, or what the page lacks
    of it. A finished or gallery run answers its `Payload` itself."""

    payload: NotRequired[Payload]
    delta: NotRequired[LiveDelta]
    live: bool


class Held(TypedDict):
    """How long a link to a run may work (`runs/<handle>/held.json`, `RunStore.held`)."""

    held: bool  # the store holds the run (a gallery run always)
    gallery: bool
    persistent: bool  # a restart of the server keeps it (a folder on disk), or not (memory only)
    runs: int  # runs the store holds now
    most_runs: int  # ... at most, and in MiB of compressed view data
    most_mib: int
    client_runs: int  # one client's share of both
    client_mib: int
    next_out_opened_s: int | None  # at the bounds: how long ago the run it would drop next was opened (else null)


class PayloadTooLarge(ValueError):
    """A run whose view data would pass `ITEM_BUDGET`: too large to draw, whatever its file size."""


def token_kinds(layout: StepLayout) -> list[int]:
    """Per token: 0 x, 1 window level 0, 2 window level >= 1, 3 verification node (what the reason rules read)."""
    return layout.token_kinds()


def reason_rules() -> list[list[list[int]]]:
    """rules[query kind][key kind][visible] = index into REASONS, read off `StepLayout.reason_code` on a layout that
    has every kind of token (so the browser applies the engine's rule, not its own)."""
    layout = StepLayout.plain(levels=2, window=2, candidates=2, cand_len=2)
    kinds, mask = token_kinds(layout), layout.mask()
    rules = [[[-1, -1] for _ in range(4)] for _ in range(4)]
    for q in range(layout.size):
        for k in range(layout.size):
            rules[kinds[q]][kinds[k]][int(mask[q, k])] = layout.reason_code(q, k)
    return rules


class Deriver:
    """Derived data of one run, step by step (a live run adds its steps as they arrive)."""

    def __init__(self, run: RunTrace):
        self.run = run
        # one pool per lookahead lane, by lane index (0: the main lane, i: run.lanes[i - 1])
        self.pools = {
            i: NGramPool(lane.config.guess) for i, lane in enumerate(run.all_lanes) if lane.method == "lookahead"
        }
        self.index: dict[StepLayout, int] = {}
        self.layouts: list[LayoutRow] = []
        self.mask_bytes = 0
        self.items = 0

    def _spend(self, items: int) -> None:
        self.items += items
        if self.items > ITEM_BUDGET:
            raise PayloadTooLarge(
                f"this run is too large to draw: its views would need more than {ITEM_BUDGET:,} token ids"
            )

    def layout(self, step: StepTrace) -> int:
        if step.kind in ("prefill", "autoregressive"):
            return -1
        layout = step.layout
        if layout not in self.index:
            self.index[layout] = len(self.layouts)
            self.layouts.append(self._layout_row(layout))
        return self.index[layout]

    def _layout_row(self, layout: StepLayout) -> LayoutRow:
        q = layout.size
        self._spend(4 * q)
        row = {
            "size": q,
            "levels": layout.levels,
            "window": layout.window,
            "nodes": layout.nodes,
            "labels": layout.labels(),
            "positions": layout.positions().tolist(),
            "kinds": token_kinds(layout),
            "parents": list(layout.parents),
            "mask": None,
        }
        cost = (q * q + 7) // 8
        if self.mask_bytes + cost <= MASK_BUDGET:
            row["mask"] = base64.b64encode(np.packbits(layout.mask().ravel()).tobytes()).decode("ascii")
            self.mask_bytes += cost
        return row

    @staticmethod
    def kept_from(step: StepTrace, pool: NGramPool) -> str:
        """Where the candidate the step kept tokens of came from, read off the pool before the step adds to it."""
        if step.winner < 0 or not step.n_accepted_from_candidate:
            return ""
        if step.winner >= len(step.candidates) - step.copied:
            return "copy"
        return pool.source(step.input_token, step.candidates[step.winner]) or ""

    def pool_rows(self, step: StepTrace, pool: NGramPool) -> PoolState:
        """The pool around a step: size after it, and for x and the keys it touched, what each holds after it
        (most recently added first; `new` where the step put it there) and what it evicted. The step's n-grams go in
        as the engine added them: its window's columns first (one per column, once the window is full), then the
        text's (`lookahead.LookaheadDecoder.step`)."""
        touched = [step.input_token] + [n[0] for n in (*step.ngrams_added, *step.ngrams_evicted)]
        keys = list(dict.fromkeys(touched))[:POOL_KEYS]
        before = {key: set(pool.lookup(key)) for key in keys}
        columns = step.window if step.kind == "lookahead" else 0
        pool.add_all(step.ngrams_added[:columns], source="window")
        pool.add_all(step.ngrams_added[columns:], source="text")
        rows = []
        for key in keys:
            items = [{"cont": list(c), "new": c not in before[key]} for c in pool.lookup(key)]
            gone = [list(n[1:]) for n in step.ngrams_evicted if n[0] == key]
            rows.append({"key": key, "items": items, "evicted": gone})
            self._spend(1 + sum(len(it["cont"]) + 1 for it in items) + sum(map(len, gone)))
        return {
            "size": len(pool),
            "keys": pool.keys,
            "rows": rows,
            "more_keys": len(dict.fromkeys(touched)) - len(keys),
        }

    def step(self, step: StepTrace, lane: int = 0) -> DerivedStep:
        """A step's derived data: its layout's index, the draft tokens it kept, and the pool around it (lookahead
        lanes only). `lane` 0 is the main lane, i the run's lanes[i - 1]; steps of one lane arrive in order."""
        out: DerivedStep = {"layout": self.layout(step), "kept": step.n_accepted_from_candidate}
        if lane in self.pools:
            out["kept_from"] = self.kept_from(step, self.pools[lane])
            out["pool"] = self.pool_rows(step, self.pools[lane])
        return out


def empty_derived() -> Derived:
    """Derived data of a run with no steps yet: what a live run starts from."""
    return {
        "machine_curve": None,
        "layouts": [],
        "steps": [],
        "lanes": [],
        "reasons": [text for _, text in REASONS],
        "rules": reason_rules(),
        "names": dict(METHOD_NAMES),
    }


def derive(run: RunTrace) -> Derived:
    """Layouts (shared by every lane), the main lane's steps, and `lanes[i]["steps"]` for the run's lanes[i]."""
    deriver = Deriver(run)
    steps = [deriver.step(s) for s in run.parallel.steps]
    lanes = [{"steps": [deriver.step(s, i) for s in lane.run.steps]} for i, lane in enumerate(run.lanes, start=1)]
    return {**empty_derived(), "layouts": deriver.layouts, "steps": steps, "lanes": lanes}


def lane_methods(run: RunTrace) -> dict:
    """The run's lanes by the page's lane ids: "parallel", "baseline", then "lane0", "lane1", ... for its extra
    lanes."""
    return {
        "parallel": run.parallel,
        "baseline": run.baseline,
        **{f"lane{i}": lane.run for i, lane in enumerate(run.lanes)},
    }


def metrics(run: RunTrace) -> dict[str, RunMetrics]:
    """The practitioners' acceptance metrics of every lane (`lade_core.metrics.run_metrics`), by lane id."""
    return {name: run_metrics(method) for name, method in lane_methods(run).items()}


def speed(run: RunTrace) -> Speed:
    """Every lane but greedy's speed-up and verdict by the one noise rule (`app.speed`)."""
    from .. import speed as rule
    from ..captions import bench_speedups

    lanes = {k: m for k, m in lane_methods(run).items() if k != "baseline"}
    return rule.speed(run, lanes, bench_speedups(run))


def payload(run: RunTrace, lab: bool = False) -> dict:  # a Payload, the trace as JSON data
    """The run for the renderer: {"trace": the trace file's own JSON, "derived": layouts, masks, pool rows, the
    lanes' metrics and speed, and its machine's cost curve}; with `lab`, the speed lab's predictions too (a page that
    cannot ask for them at the run's address: an export)."""
    derived = {**derive(run), "metrics": metrics(run), "metric_terms": terms(), "machine_curve": machine_curve(run)}
    if not any(m.stop_reason in CUT for m in lane_methods(run).values()):
        derived["speed"] = speed(run)  # a race stopped early (Stop, the run's budget) stopped every lane at once: its
        # lanes' times are not a speed-up, so it gets none
    figures = run_lab_data(run) if lab else None
    if figures is not None:
        derived["lab"] = figures
    return {"trace": to_data(run), "derived": derived}


def run_lab_data(run: RunTrace) -> LabRunData | None:
    """The speed lab's predictions for a run (`lade_core.measure.labdata.lab_run_data`: about 0.2 s of CPU here,
    a sixth of a payload's bytes), computed when the lab asks; None for a run of one step, which has nothing to
    predict from."""
    return lab_run_data(run) if len(run.parallel.steps) > 1 else None


def as_text(data: dict) -> str:
    """A payload as the JSON text every address answers (the server's `runs/<handle>.json`, the static site's file)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
