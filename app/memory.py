"""Giving freed memory back to the system after a live run (glibc's `malloc_trim`).

A wide live run (W=32 N=8 G=32) allocates and frees hundreds of MB of tensors of shapes no other run has; glibc keeps
the freed pages in its heap, so the server's resident memory stepped up after each new shape and stayed there
(BENCHMARKS.md, "Wide live runs in a row"). `trim()` returns what is free at the top and in the middle of the heap to
the system; it takes a few milliseconds and is a no-op where the C library is not glibc.
"""

from __future__ import annotations

import ctypes
import ctypes.util

_libc = None


def trim() -> bool:
    """Return free heap memory to the system; whether the C library could."""
    global _libc
    try:
        if _libc is None:
            _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(_libc.malloc_trim(0))
    except (OSError, AttributeError):
        return False
