"""Which CPU layout each forward runs on, by its width: the stock linear layers or `kernels.py`'s packed ones, measured
once on the loaded model, kept per machine, model and thread count, and read back by later loads.

The packed layers are machine- and width-dependent. On one 2-core host at one thread a one-token forward took 59 ms
stock and 67 ms packed, an eight-token one 122 ms stock and 77 ms packed (at two threads 36/44 and 63/51): one layout
for every width gives away either greedy's step or lookahead's. So `measure` times a forward of each width in `SIZES`
over a `CONTEXT`-token cache with the stock and the packed layers (grouped-query attention in both), interleaved round
by round, `ROUNDS` rounds, and `plan` keeps, at each width, the packed layers only where their median is under
`MARGIN` of the stock one's (a tie goes to the stock layers, transformers' own); a width between two measured ones
takes the layout whose time, read off the straight line between them, is lower. Greedy decoding, the baseline of
every speed-up, still runs on this machine's faster one-token forward, and lookahead's wider steps on theirs. About
15 s on a 2-core CPU, once; the plan and every timing are written under the model loader's cache folder beside the
cost curves (`machine.py` names the machine). Both layouts compute the same numbers up to the GEMM's rounding, so
greedy output is token for token the same (tests/test_checkpoint.py); the exactness tests run on the mixed plan.
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import torch

from .machine import identity, save_curve

SIZES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)  # tokens a forward feeds
CONTEXT = 64  # cached positions behind them
ROUNDS = 7
MARGIN = 0.95  # packed is kept at a width only when it takes less than this share of the stock layers' time there
FOLDER = "kernel-plans"
VERSION = 2  # 2: a layout per width (1: one layout, chosen for the one-token forward)


@dataclass(frozen=True)
class KernelPlan:
    """The layout of a forward by its width: `packed[w - 1]` for w tokens; wider than the table, its last entry."""

    packed: tuple[bool, ...]

    def at(self, width: int) -> bool:
        return self.packed[min(max(width, 1), len(self.packed)) - 1]

    @property
    def uniform(self) -> bool | None:
        """True or False where every width runs on one layout (packed or stock), else None."""
        return self.packed[0] if len(set(self.packed)) == 1 else None

    @property
    def label(self) -> str:
        """The plan in a few words, as a bench, a cost curve and a trace name it: "stock", "onednn-packed", or the
        widths that run packed ("packed 3+", "packed 1, 4-8"; "+": that width and every wider one)."""
        if self.uniform is not None:
            return "onednn-packed" if self.uniform else "stock"
        spans, start, widest = [], None, len(self.packed)
        for w, packed in enumerate((*self.packed, False), start=1):
            if packed and start is None:
                start = w
            elif not packed and start is not None:
                spans.append(f"{start}+" if w > widest else f"{start}" if start == w - 1 else f"{start}-{w - 1}")
                start = None
        return "packed " + ", ".join(spans)


def plan(median_s: dict[str, dict[str, float]], widest: int = SIZES[-1]) -> KernelPlan:
    """The plan for measured medians ({"stock": {"1": s, ...}, "packed": {...}}): at each width 1..`widest`, packed
    where its time (straight lines between measured widths) is under MARGIN of the stock layers' time."""
    sizes = sorted(int(n) for n in median_s["stock"])

    def time_at(path: str, w: int) -> float:
        points = [(n, median_s[path][str(n)]) for n in sizes]
        if w <= points[0][0]:
            return points[0][1]
        for (a, ta), (b, tb) in zip(points, points[1:]):
            if w <= b:
                return ta + (w - a) * (tb - ta) / (b - a)
        return points[-1][1]

    return KernelPlan(tuple(time_at("packed", w) < MARGIN * time_at("stock", w) for w in range(1, widest + 1)))


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
    """Median forward seconds per size on the stock and on the packed layers (`switch`: `kernels.dual_linears`'s),
    interleaved round by round so that a change in the machine's load falls on both; the switch is left stock."""
    from transformers import DynamicCache

    vocab = int(model.config.vocab_size)
    generator = torch.Generator().manual_seed(0)
    prefix = torch.randint(0, vocab, (1, CONTEXT), generator=generator)
    inputs = {n: torch.randint(0, vocab, (1, n), generator=generator) for n in sizes}
    cache = DynamicCache(config=model.config)
    model(input_ids=prefix, cache=cache, use_cache=True)
    times = {"stock": {n: [] for n in sizes}, "packed": {n: [] for n in sizes}}
    for round_ in range(rounds + 1):  # the first round warms both up and is not kept
        for path in ("stock", "packed"):
            switch.packed = path == "packed"
            for n, s in _forward_s(model, inputs, cache).items():
                if round_:
                    times[path][n].append(s)
    switch.packed = False
    return {path: {str(n): statistics.median(v) for n, v in by_size.items()} for path, by_size in times.items()}


def choose(model, switch, name: str, root: Path) -> tuple[KernelPlan, dict]:
    """(the plan, the verdict it came from): the kept verdict of this machine for `name`, or one measured now on
    `model` (its layers made dual by `kernels.dual_linears`, `switch` theirs) and kept."""
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
            "packed_over_stock": {n: seconds["packed"][n] / seconds["stock"][n] for n in seconds["stock"]},
            "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "kept_at": str(path),
        }
        kept["plan"] = plan(seconds).label
        save_curve(path, kept)
    return plan(kept["median_s"]), kept
