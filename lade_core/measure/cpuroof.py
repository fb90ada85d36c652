"""This CPU's roofline, measured: the memory bandwidth and the fp32 matrix throughput it attains at the thread count a
run uses, and from them the least time a forward of w tokens can take on it.

The bandwidth is the faster of two reads of a tensor far larger than the caches: a sum over it (`READ_MIB`), and a
matrix-vector product with a weight of the same size (what a one-token forward is made of). The throughput is an
fp32 matrix product of `GEMM_N` x `GEMM_N` x `GEMM_N`. Each is the best of `REPEATS` (a roofline is what the machine
can do, not what it did on average). A forward of w tokens over c cached positions then takes at least

    max(weights and KV bytes / bandwidth, (2 x weights x w + attention) FLOPs / throughput)

with the model's shape from `roofline.MODELS` in fp32: the roofline of `roofline.py` with the measured peaks at full
efficiency, no per-layer overhead, the plain max. Below `crossover_tokens` a forward is memory-bound: a step of that
many tokens costs what one token costs, on this roof. The engine's measured forward sits above it by what the
kernels, the layers' small operators and Python leave on the table; the lab draws both.

About 3 s; kept per machine and thread count beside the cost curves (`machine.py`).
"""

from __future__ import annotations

import functools
import json
import time

from ..machine import cores, identity, save_curve
from .roofline import Accelerator, Assumptions, crossover_tokens, forward_seconds, model_shape

READ_MIB = 512
GEMM_N = 2048
REPEATS = 5
FP32 = Assumptions(
    bandwidth_efficiency=1.0, compute_efficiency=1.0, overhead_per_layer=0.0, overlap=1.0, bytes_per_value=4
)
FOLDER = "roofs"


def _best(fn, repeats: int = REPEATS) -> float:
    fn()  # warm-up
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def measure_roof() -> dict:
    """This machine's attainable read bandwidth (bytes/s) and fp32 matrix throughput (FLOP/s) at torch's thread
    count now, with how each was measured."""
    import torch

    with torch.inference_mode():
        values = READ_MIB * 2**20 // 4
        x = torch.ones(values)
        summed = x.numel() * 4 / _best(x.sum)
        del x
        weight, vector = torch.ones(values // 2048, 2048), torch.ones(2048, 1)
        gemv = weight.numel() * 4 / _best(functools.partial(torch.mm, weight, vector))
        del weight
        square = torch.ones(GEMM_N, GEMM_N)
        flops = 2 * GEMM_N**3 / _best(functools.partial(torch.mm, square, square))
    return {
        "bandwidth": max(summed, gemv),
        "flops": flops,
        "threads": torch.get_num_threads(),
        "how": {
            "bandwidth": f"the faster of a sum over {READ_MIB} MiB of fp32 ({summed / 1e9:.1f} GB/s) and a "
            f"matrix-vector product with a {READ_MIB} MiB weight ({gemv / 1e9:.1f} GB/s), best of {REPEATS}",
            "flops": f"an fp32 matrix product {GEMM_N} x {GEMM_N} x {GEMM_N}, best of {REPEATS}",
        },
        "machine": identity(),
        "torch": torch.__version__,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }


def roof_file(root, threads: int):
    return root / FOLDER / f"{identity()['id']}-{threads}t.json"


def cached_roof(root=None, refresh: bool = False) -> dict:
    """This machine's roof at torch's thread count now: kept under the loader's cache folder, measured once."""
    import torch

    if root is None:
        from ..checkpoint import cache_root

        root = cache_root()
    path = roof_file(root, torch.get_num_threads())
    if not refresh:
        try:
            kept = json.loads(path.read_text(encoding="utf-8"))
            if kept.get("machine", {}).get("id") == identity()["id"]:
                return kept
        except (OSError, ValueError):
            pass
    roof = measure_roof()
    save_curve(path, roof)
    return roof


def device(roof: dict) -> Accelerator:
    """The roof as a device the roofline takes: the measured peaks (used at full efficiency, `FP32`)."""
    description = (roof.get("machine") or {}).get("description") or f"{cores()}-core CPU"
    return Accelerator("cpu", description, roof["bandwidth"], roof["flops"], 0.0, 0.0, 0.0)


def floor(roof: dict, size: str, tokens: float, context: int) -> dict:
    """The least time of a forward of `tokens` tokens over `context` cached positions of the `size` model on this
    roof: seconds, its memory and compute parts, and which bounds it."""
    return forward_seconds(device(roof), model_shape(size), tokens, context, FP32)


def crossover(roof: dict, size: str, context: int) -> float | None:
    """The width where compute overtakes memory on this roof (tokens)."""
    return crossover_tokens(device(roof), model_shape(size), context, FP32)
