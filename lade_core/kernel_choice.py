"""Which CPU kernels this machine decodes with, the stock ones or `kernels.py`'s packed ones: measured once on the
loaded model, kept per machine, model and thread count, and read back by later loads.

The packed linear layers are machine-dependent: on one 2-core host they made a greedy step 1.81x faster
(BENCHMARKS.md §10), on another 17-30% slower (§14), and on that one they were still faster for the 8 to 32 tokens a
lookahead step feeds. Every speed-up this project shows is measured against greedy decoding, so the choice is made
for greedy's step: `choose` times a forward of 1 token (and, for the record, of 8 and 32) over a 64-token cache on
the model `load_model` has just loaded, stock and packed in turn, `ROUNDS` rounds, and keeps the packed layers only
when their one-token median is under `MARGIN` of the stock one's. Lookahead then never runs on kernels that would
make the baseline slower than this machine can make it (a tie goes to the stock layers, transformers' own). About
5 s on a 2-core CPU, once; the verdict and every timing are written under the model loader's cache folder beside
the cost curves (`machine.py` names the machine). Either path writes the same greedy tokens
(tests/test_checkpoint.py); only the time differs.
"""

from __future__ import annotations

import json
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path

import torch

from . import kernels
from .machine import identity, save_curve

SIZES = (1, 8, 32)  # tokens a step feeds
CONTEXT = 64  # cached positions behind them
ROUNDS = 9
MARGIN = 0.95  # packed is kept only when its one-token forward takes less than this share of the stock one
FOLDER = "kernels"


def verdict_file(root: Path, model: str, threads: int) -> Path:
    """Where this machine's verdict for `model` at `threads` threads lives under `root`."""
    slug = "".join(c if c.isalnum() or c in ".-" else "-" for c in f"{identity()['id']}-{model}-{threads}t")
    return root / FOLDER / f"{slug}.json"


def read_verdict(path: Path) -> dict | None:
    """A kept verdict of this machine, or None (absent, unreadable, or another machine's)."""
    try:
        verdict = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = isinstance(verdict, dict) and verdict.get("choice") in ("packed", "stock")
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
def measure(model, pairs) -> dict:
    """Median forward seconds per size with the stock and with the packed layers (and attention), interleaved
    round by round so that a change in the machine's load falls on both; the model is left stock."""
    from transformers import DynamicCache

    vocab = int(model.config.vocab_size)
    generator = torch.Generator().manual_seed(0)
    prefix = torch.randint(0, vocab, (1, CONTEXT), generator=generator)
    inputs = {n: torch.randint(0, vocab, (1, n), generator=generator) for n in SIZES}
    caches = {}
    for path in ("stock", "packed"):  # each path's own cache of the prefix (the same numbers up to rounding)
        _use(model, pairs, path)
        caches[path] = DynamicCache(config=model.config)
        model(input_ids=prefix, cache=caches[path], use_cache=True)
        _forward_s(model, inputs, caches[path])  # a warm-up, not kept
    times = {"stock": {n: [] for n in SIZES}, "packed": {n: [] for n in SIZES}}
    for _ in range(ROUNDS):
        for path in ("stock", "packed"):
            _use(model, pairs, path)
            for n, s in _forward_s(model, inputs, caches[path]).items():
                times[path][n].append(s)
    _use(model, pairs, "stock")
    return {path: {str(n): statistics.median(v) for n, v in by_size.items()} for path, by_size in times.items()}


def _use(model, pairs, path: str) -> None:
    kernels.swap(pairs, packed=path == "packed")
    if path == "packed":
        kernels.use_grouped_query_sdpa(model)
    else:
        kernels.use_stock_sdpa(model)


def choose(model, name: str, root: Path) -> tuple[bool, dict]:
    """(whether to pack, the verdict): the kept verdict of this machine for `name`, or one measured now and kept."""
    path = verdict_file(root, name, torch.get_num_threads())
    kept = read_verdict(path)
    if kept is not None:
        return kept["choice"] == "packed", kept
    pairs = kernels.packed_pairs(model)
    seconds = measure(model, pairs)
    ratio = {n: seconds["packed"][n] / seconds["stock"][n] for n in seconds["stock"]}
    verdict = {
        "choice": "packed" if ratio["1"] < MARGIN else "stock",
        "machine": identity()["id"],
        "machine_description": identity()["description"],
        "model": name,
        "threads": torch.get_num_threads(),
        "sizes": list(SIZES),
        "context": CONTEXT,
        "rounds": ROUNDS,
        "median_s": seconds,
        "packed_over_stock": ratio,
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "kept_at": str(path),
    }
    save_curve(path, verdict)
    return verdict["choice"] == "packed", verdict
