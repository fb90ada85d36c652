"""Live runs on Hugging Face ZeroGPU: the whole run is computed inside ONE `@spaces.GPU` call, then replayed.

ZeroGPU lends a GPU to a decorated function for the length of one call, in a separate process, so streaming steps
out of it one by one would hold the GPU while the browser draws. Instead `record_on_gpu` records the run (both
methods) in one call and returns the finished `RunTrace` (plain picklable data), which the page then plays back like a
recorded run. Where `spaces` cannot be imported (anywhere but a ZeroGPU Space) `available()` is False, the
decorator is left off, and the app streams live runs from the local device as usual.
"""

from __future__ import annotations

import dataclasses

from lade_core import RunTrace, Sampling, record_run

from .model import MODEL

try:
    import spaces
except ImportError:  # not on a Hugging Face Space
    spaces = None

GPU_SECONDS = 120  # the longest run the public limits allow (512 new tokens, both methods) fits in this


def available() -> bool:
    """True on a ZeroGPU Space (the `spaces` package is importable)."""
    return spaces is not None


def on_gpu(fn):
    """`fn` decorated with `spaces.GPU` where that exists, else `fn` itself."""
    return spaces.GPU(duration=GPU_SECONDS)(fn) if available() else fn


def _record(prompt: str, methods, max_new_tokens: int, sampling: Sampling | None = None) -> RunTrace:
    """The whole race (`methods`: a `LookaheadConfig` or `MethodSpec`s, as `record_run` takes them) in one call."""
    run = record_run(MODEL.get(), prompt, methods, max_new_tokens, sampling=sampling)
    return dataclasses.replace(run, title="live")


# Decorated at import, as ZeroGPU requires of the functions it lends a GPU to.
record_on_gpu = on_gpu(_record)
