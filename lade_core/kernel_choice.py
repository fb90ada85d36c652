"""Which CPU layout each forward runs on, by its width: the stock linear layers or `kernels.py`'s packed or transposed
ones, measured once on the loaded model, kept per machine, model and thread count, and read back by later loads.

The layouts are machine- and width-dependent. On one 2-core host at one thread a one-token forward took 59 ms stock
and 67 ms packed, an eight-token one 122 ms stock and 77 ms packed (at two threads 36/44 and 63/51), and the
transposed layers took 8% less than the stock ones at one token and more from two on: one layout for every width gives
away either greedy's step or lookahead's. So `measure` times a forward of each width in `SIZES` over a `CONTEXT`-token
cache on every layout held (grouped-query attention in all), interleaved round by round, `ROUNDS` rounds, and `plan`
keeps, at each width, the fastest layout only where the others take more than 1 / `MARGIN` of its time (a near tie
goes to the stock layers, transformers' own, then to the packed ones, so that a layout is held only for widths where
it clearly pays); a width between two measured ones reads each layout's time off the straight line between them.
Greedy decoding, the baseline of every speed-up, still runs on this machine's fastest one-token forward, and
lookahead's wider steps on theirs. About 30 s on a 2-core CPU, once; the plan and every timing are written
under the model loader's cache folder beside the cost curves (`machine.py` names the machine). The layouts compute the
same numbers up to the GEMM's rounding, so greedy output is token for token the same (tests/test_checkpoint.py); the
exactness tests run on a mixed plan.
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import torch

from .kernels import LABELS
from .machine import identity, save_curve
from .trace import CPU_LAYOUTS

SIZES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)  # tokens a forward feeds
CONTEXT = 64  # cached positions behind them
ROUNDS = 7
MARGIN = 0.95  # a layout runs at a width only where those before it take over 1 / MARGIN of its time there
FOLDER = "kernel-plans"
VERSION = 3  # 3: the transposed layout too; 2: a layout per width (1: one layout, chosen for the one-token forward)


@dataclass(frozen=True)
class KernelPlan:
    """The layout of a forward by its width: `layouts[w - 1]` for w tokens; wider than the table, its last entry."""

    layouts: tuple[str, ...]

    def at(self, width: int) -> str:
        return self.layouts[min(max(width, 1), len(self.layouts)) - 1]

    @property
    def used(self) -> tuple[str, ...]:
        """The layouts some width runs on, in order of the first width that does."""
        return tuple(dict.fromkeys(self.layouts))

    @property
    def uniform(self) -> str | None:
        """The layout every width runs on, else None."""
        return self.layouts[0] if len(self.used) == 1 else None

    @property
    def label(self) -> str:
        """The plan in a few words, as a bench, a cost curve and a trace name it: a model on one layout as
        `kernels.LABELS` names it ("stock", "onednn-packed", "transposed"), else the widths each other layout runs
        ("packed 3+", "transposed 1; packed 4-8, 12+"; "+": that width and every wider one)."""
        if self.uniform is not None:
            return LABELS[self.uniform]
        spans: dict[str, list[str]] = {}
        start, widest = 1, len(self.layouts)
        for w in range(2, widest + 2):
            if w > widest or self.layouts[w - 1] != self.layouts[start - 1]:
                layout = self.layouts[start - 1]
                span = f"{start}+" if w > widest else f"{start}" if start == w - 1 else f"{start}-{w - 1}"
                if layout != "stock":
                    spans.setdefault(layout, []).append(span)
                start = w
        return "; ".join(f"{layout} {', '.join(widths)}" for layout, widths in spans.items())


def plan(median_s: dict[str, dict[str, float]], widest: int = SIZES[-1]) -> KernelPlan:
    """The plan for measured medians ({"stock": {"1": s, ...}, "packed": {...}, ...}): at each width 1..`widest`, of
    the layouts whose time there (straight lines between measured widths) is within MARGIN of the fastest one's, the
    first in `CPU_LAYOUTS` order (the stock layers, transformers' own, before the packed ones, before the transposed
    ones): a layout runs, and its memory is held, only where it is clearly faster than the ones before it."""
    sizes = sorted(int(n) for n in median_s["stock"])

    def time_at(layout: str, w: int) -> float:
        points = [(n, median_s[layout][str(n)]) for n in sizes]
        if w <= points[0][0]:
            return points[0][1]
        for (a, ta), (b, tb) in zip(points, points[1:]):
            if w <= b:
                return ta + (w - a) * (tb - ta) / (b - a)
        return points[-1][1]

    def best(w: int) -> str:
        fastest = min(time_at(layout, w) for layout in median_s)
        return next(layout for layout in CPU_LAYOUTS if layout in median_s and MARGIN * time_at(layout, w) <= fastest)

    return KernelPlan(tuple(best(w) for w in range(1, widest + 1)))


def verdict_file(root: Path, model: str, threads: int) -> Path:
    """Where this machine's plan for `model` at `threads` threads lives under `root`."""
    slug = "".join(c if c.isalnum() or c in ".-" else "-" for c in f"{identity()['id']}-{model}-{threads}t")
    return root / FOLDER / f"{slug}.json"


def read_verdict(path: Path) -> dict | None:
    """A kept verdict of this machine in this version, or None (absent, unreadable, older, or another machine's)."""
    try:
        verdict = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = isinstance(verdict, dict) and verdict.get("version") == VERSION and isinstance(verdict.get("median_s"), dict)
    ok = ok and "stock" in verdict["median_s"] and set(verdict["median_s"]) <= set(CPU_LAYOUTS)
    return verdict if ok and verdict.get("machine") == identity()["id"] else None


def _forward_s(model, inputs: dict[int, torch.Tensor], cache) -> dict[int, float]:
    """Seconds of one forward per size over the cache, cropped back to its prefix after each."""
    out = {}
    for n, ids in inputs.items():
        start = time.perf_counter()
        model(input_ids=ids, cache=cache, use_cache=True)
        out[n] = time.perf_counter() - start
        cache.crop(-n)
    return out


@torch.inference_mode()
def measure(model, switch, sizes=SIZES, rounds: int = ROUNDS) -> dict:
    """Median forward seconds per size on every layout `switch` holds (`kernels.layered_linears`'s), interleaved
    round by round so that a change in the machine's load falls on all; the switch is left stock."""
    from transformers import DynamicCache

    vocab = int(model.config.vocab_size)
    generator = torch.Generator().manual_seed(0)
    prefix = torch.randint(0, vocab, (1, CONTEXT), generator=generator)
    inputs = {n: torch.randint(0, vocab, (1, n), generator=generator) for n in sizes}
    cache = DynamicCache(config=model.config)
    model(input_ids=prefix, cache=cache, use_cache=True)
    times = {layout: {n: [] for n in sizes} for layout in switch.layouts}
    for round_ in range(rounds + 1):  # the first round warms every layout up and is not kept
        for layout in times:
            switch.layout = layout
            for n, s in _forward_s(model, inputs, cache).items():
                if round_:
                    times[layout][n].append(s)
    switch.layout = "stock"
    return {layout: {str(n): statistics.median(v) for n, v in by_size.items()} for layout, by_size in times.items()}


def over_stock(median_s: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """Each other layout's time at each size over the stock layers'."""
    stock = median_s["stock"]
    return {layout: {n: t / stock[n] for n, t in by.items()} for layout, by in median_s.items() if layout != "stock"}


def choose(model, switch, name: str, root: Path) -> tuple[KernelPlan, dict]:
    """(the plan, the verdict it came from): the kept verdict of this machine for `name`, or one measured now on
    `model` (its layers given their twins by `kernels.layered_linears`, `switch` theirs) and kept."""
    path = verdict_file(root, name, torch.get_num_threads())
    kept = read_verdict(path)
    if kept is None:
        seconds = measure(model, switch)
        kept = {
            "version": VERSION,
            "machine": identity()["id"],
            "machine_description": identity()["description"],
            "model": name,
            "threads": torch.get_num_threads(),
            "sizes": list(SIZES),
            "context": CONTEXT,
            "rounds": ROUNDS,
            "margin": MARGIN,
            "median_s": seconds,
            "over_stock": over_stock(seconds),
            "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "kept_at": str(path),
        }
        kept["plan"] = plan(seconds).label
        save_curve(path, kept)
    return plan(kept["median_s"]), kept
