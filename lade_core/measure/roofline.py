"""The roofline: how long one forward pass takes on a GPU, from the model's shape and the device's peaks.

A forward of B sequences, each feeding `tokens` tokens over `context` cached positions, reads the weights once, each
sequence's KV cache and writes the new tokens' KV (memory), and does 2 FLOPs per weight per token plus attention
(compute). Its time is the longer of the two, plus the part of the shorter one that does not hide under it
(1 - overlap), plus a fixed launch overhead per layer:

    t = max(memory, compute) + (1 - overlap) * min(memory, compute) + layers * overhead_per_layer

At batch 1 on a large model the weights dominate, so a forward of dozens of tokens costs about what one costs; as B
grows the arithmetic grows B-fold while the weights are still read once, until compute takes over and every extra
token is paid for. `Assumptions` holds the model's guesses and `BOUNDS` the range each is varied over, so every
figure comes as low, mid and high (the extremes over the 16 corners of that box). This is a model, never a
measurement. Left out: quantisation, tensor or pipeline parallelism, kernel effects beyond the per-layer overhead,
and the attention among a step's own tokens.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, fields, replace

import numpy as np


@dataclass(frozen=True)
class Accelerator:
    """One GPU as the roofline sees it. Peaks are the vendors' spec-sheet figures, dense (no sparsity): A100 80GB
    SXM 2,039 GB/s and 312 TFLOP/s BF16, NVLink 600 GB/s; H100 SXM 3.35 TB/s and 989 TFLOP/s, NVLink 900 GB/s; H200
    SXM 4.8 TB/s and 141 GB with the H100's compute and NVLink. `link_latency` is assumed, not measured: an
    all-gather of a few bytes inside one NVLink node is latency-bound, NCCL taking on the order of 10-20 us."""

    name: str
    label: str
    bandwidth: float  # HBM, bytes/s
    peak_flops: float  # dense BF16, FLOP/s
    memory: float  # bytes
    link_bandwidth: float  # NVLink, bytes/s per GPU
    link_latency: float  # seconds per all-gather


ACCELERATORS = (
    Accelerator("a100-80gb", "NVIDIA A100 80GB SXM", 2.039e12, 312e12, 80e9, 600e9, 15e-6),
    Accelerator("h100", "NVIDIA H100 SXM", 3.35e12, 989e12, 80e9, 900e9, 15e-6),
    Accelerator("h200", "NVIDIA H200 SXM", 4.8e12, 989e12, 141e9, 900e9, 15e-6),
)


@dataclass(frozen=True)
class ModelShape:
    """A decoder's published shape (its config.json on the Hugging Face hub). The parameter count is derived, and
    matches the published totals (Llama-2-7B 6,738,415,616; SmolLM2-135M 134,515,008). CodeLlama 7B and 13B differ
    from Llama-2 only by 16 vocabulary rows."""

    size: str
    name: str
    layers: int
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    tied: bool  # input embedding shared with the output head

    @property
    def params(self) -> int:
        attention = self.hidden * self.head_dim * 2 * (self.heads + self.kv_heads)  # q, o; k, v
        block = attention + 3 * self.hidden * self.intermediate + 2 * self.hidden  # gated MLP, two norms
        return self.vocab * self.hidden * (1 if self.tied else 2) + self.layers * block + self.hidden

    @property
    def kv_values_per_position(self) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim  # K and V in every layer


MODELS = (
    ModelShape("135M", "SmolLM2-135M", 30, 576, 1536, 9, 3, 64, 49152, True),
    ModelShape("360M", "SmolLM2-360M", 32, 960, 2560, 15, 5, 64, 49152, True),
    ModelShape("1.7B", "SmolLM2-1.7B", 24, 2048, 8192, 32, 32, 64, 49152, True),
    ModelShape("7B", "Llama-2-7B", 32, 4096, 11008, 32, 32, 128, 32000, False),
    ModelShape("13B", "Llama-2-13B", 40, 5120, 13824, 40, 40, 128, 32000, False),
    ModelShape("34B", "CodeLlama-34B", 48, 8192, 22016, 64, 8, 128, 32000, False),
    ModelShape("70B", "Llama-2-70B", 80, 8192, 28672, 64, 8, 128, 32000, False),
)


@dataclass(frozen=True)
class Assumptions:
    """What the roofline takes for granted (mid values; the bounds below give the range of each). None is measured here.
    Bandwidth 0.7 of peak: gpt-fast's compiled Llama-2-7B decodes at 1,397 GB/s on an A100-80GB, 0.69 of 2,039.
    Compute 0.5 of peak: a round figure for matrix products a few dozen rows tall. 20 us per layer: about a dozen
    kernels a layer at 1-2 us each when launches set the pace. Overlap 1.0: the shorter of memory and compute hides
    fully under the longer (the plain roofline); with it the paper's one paired figure (1.78x at 1.96 tokens per step,
    a step cost of 1.10 at W=15 N=5 G=15 on 7B, from a secondary summary) is reproduced. bf16: 2 bytes a value."""

    bandwidth_efficiency: float = 0.7
    compute_efficiency: float = 0.5
    overhead_per_layer: float = 20e-6
    overlap: float = 1.0
    bytes_per_value: int = 2


@dataclass(frozen=True)
class Bounds:
    """The range each assumption is varied over (stated, not measured). Bandwidth 0.55 to 0.85 of peak: eager
    frameworks reach about half, tuned decode kernels 0.8 and more. Compute 0.3 to 0.7: skinny matrix products run
    well below peak, large ones near 0.7. Launches 5 to 40 us per layer: CUDA graphs to eager PyTorch. Overlap 0.75
    to 1.0: kernels that leave a quarter of the shorter term exposed, to the plain roofline."""

    bandwidth_efficiency: tuple[float, float] = (0.55, 0.85)
    compute_efficiency: tuple[float, float] = (0.3, 0.7)
    overhead_per_layer: tuple[float, float] = (5e-6, 40e-6)
    overlap: tuple[float, float] = (0.75, 1.0)

    def corners(self, mid: Assumptions) -> list[Assumptions]:
        """The 16 corners of the box: every assumption at one of its two bounds."""
        names = [f.name for f in fields(self)]
        return [
            replace(mid, **dict(zip(names, values))) for values in itertools.product(*(getattr(self, n) for n in names))
        ]

    def to_dict(self) -> dict:
        return {f.name: list(getattr(self, f.name)) for f in fields(self)}


ASSUME, BOUNDS = Assumptions(), Bounds()


def accelerator(device) -> Accelerator:
    if isinstance(device, Accelerator):
        return device
    for acc in ACCELERATORS:
        if acc.name == str(device).strip().lower():
            return acc
    names = ", ".join(a.name for a in ACCELERATORS)
    raise ValueError(f"unknown device {device!r}: the lab models {names}, and cpu (this machine's measured curve)")


def _count(text) -> float:
    s = str(text).strip().upper().replace(" ", "")
    try:
        return float(s[:-1]) * {"M": 1e6, "B": 1e9}[s[-1]]
    except (KeyError, ValueError, IndexError):
        raise ValueError(f"model size {text!r}: write it like 135M, 1.7B or 7B") from None


def model_shape(size) -> ModelShape:
    """The model of a size written "7B", "135M" or "1.7b" (a `ModelShape` passes through)."""
    if isinstance(size, ModelShape):
        return size
    for m in MODELS:
        if math.isclose(_count(size), _count(m.size)):
            return m
    raise ValueError(f"no model of size {size!r} here; sizes: {', '.join(m.size for m in MODELS)}")


def _terms(acc: Accelerator, m: ModelShape, tokens, context: int, a: Assumptions, batch) -> dict:
    """Memory, compute and overhead seconds of one forward; `tokens` and `batch` may be numpy arrays."""
    bandwidth, flops = acc.bandwidth * a.bandwidth_efficiency, acc.peak_flops * a.compute_efficiency
    kv_bytes = m.kv_values_per_position * a.bytes_per_value * batch
    kv_s = kv_bytes * context / bandwidth  # read every sequence's cache
    memory_s = (m.params * a.bytes_per_value + kv_bytes * tokens) / bandwidth + kv_s  # weights once; new KV written
    attention_flops_s = 4 * m.layers * m.heads * m.head_dim * tokens * context * batch / flops
    compute_s = 2 * m.params * tokens * batch / flops + attention_flops_s
    seconds = (
        np.maximum(memory_s, compute_s)
        + (1 - a.overlap) * np.minimum(memory_s, compute_s)
        + m.layers * a.overhead_per_layer
    )
    return {
        "seconds": seconds,
        "memory_s": memory_s,
        "compute_s": compute_s,
        "kv_s": kv_s,
        "attention_flops_s": attention_flops_s,
        "overhead_s": m.layers * a.overhead_per_layer,
    }


def seconds(device, model, tokens, context: int, a: Assumptions = ASSUME, batch=1):
    """Forward time alone (a float, or an array where `tokens` or `batch` is one)."""
    return _terms(accelerator(device), model_shape(model), tokens, context, a, batch)["seconds"]


def forward_seconds(device, model, tokens: float, context: int, a: Assumptions = ASSUME, batch: int = 1) -> dict:
    """One forward of `batch` sequences of `tokens` tokens over `context` cached positions each, in seconds, with
    its parts. `attention_s` is attention's share of the bounding term: reading the KV caches when memory bounds the
    forward, their 4 * layers * heads * head_dim * tokens * context FLOPs per sequence when compute does."""
    t = {k: float(v) for k, v in _terms(accelerator(device), model_shape(model), tokens, context, a, batch).items()}
    terms = {"memory": t["memory_s"], "compute": t["compute_s"], "overhead": t["overhead_s"]}
    return {
        "seconds": t["seconds"],
        "memory_s": t["memory_s"],
        "compute_s": t["compute_s"],
        "attention_s": t["kv_s"] if t["memory_s"] >= t["compute_s"] else t["attention_flops_s"],
        "overhead_s": t["overhead_s"],
        "exposed_s": (1 - a.overlap) * min(t["memory_s"], t["compute_s"]),
        "bound": max(terms, key=terms.get),
        "batch": batch,
    }


def relative_cost(device, model, tokens, context: int, a: Assumptions = ASSUME, batch=1):
    """A forward of `tokens` tokens per sequence against a one-token forward of the same batch (arrays allowed)."""
    return seconds(device, model, tokens, context, a, batch) / seconds(device, model, 1, context, a, batch)


def cost_band(
    device, model, tokens: float, context: int, batch: int = 1, a: Assumptions = ASSUME, bounds: Bounds = BOUNDS
) -> tuple[float, float, float]:
    """(low, mid, high) relative cost: the mid assumptions, and the extremes over the corners of `bounds`."""
    corners = [relative_cost(device, model, tokens, context, c, batch) for c in bounds.corners(a)]
    mid = relative_cost(device, model, tokens, context, a, batch)
    return np.minimum(np.min(corners, axis=0), mid), mid, np.maximum(np.max(corners, axis=0), mid)


def crossover_tokens(device, model, context: int, a: Assumptions = ASSUME, batch: int = 1) -> float | None:
    """Tokens per sequence where compute overtakes memory: below 1 where a batch is compute-bound from its first
    token, None where compute never overtakes (a token's arithmetic costs less than writing its KV)."""
    one, two = (forward_seconds(device, model, t, context, a, batch) for t in (1, 2))
    memory_slope, compute_slope = two["memory_s"] - one["memory_s"], two["compute_s"] - one["compute_s"]
    if compute_slope <= memory_slope:
        return None
    return 1 + (one["memory_s"] - one["compute_s"]) / (compute_slope - memory_slope)
