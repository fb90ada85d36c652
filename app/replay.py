"""Playback of a run on the step clock: where to start, how to step, how fast to tick, and what each step shows.

All of it is plain functions of a `RunTrace` and a step number, so per-user state is just (run, step, playing).
`render_step` returns the views of one step in the order of `VIEW_IDS`, the order the UI lists its outputs in.
"""

from __future__ import annotations

from lade_core import RunTrace

from . import views
from .views.common import last_step

# elem_id of each view output, in the order `render_step` returns them.
VIEW_IDS = ("ar-output", "la-output", "counter", "progress-plot", "window-view", "trajectory-plot", "pool-view",
            "pool-plot", "verify-view", "mask-view")
MIN_SPEED, MAX_SPEED, DEFAULT_SPEED = 1, 20, 4  # steps per second


def clamp(run: RunTrace, k) -> int:
    return max(0, min(int(k or 0), last_step(run)))


def interesting_step(run: RunTrace) -> int:
    """The first lookahead step that accepted the most tokens: where a recorded run opens."""
    steps = run.lookahead.steps
    if not steps:
        return 0
    best = max(len(s.accepted) for s in steps)
    return next(s.index for s in steps if len(s.accepted) == best)


def next_step(run: RunTrace, k) -> int:
    return clamp(run, int(k or 0) + 1)


def prev_step(run: RunTrace, k) -> int:
    return clamp(run, int(k or 0) - 1)


def at_end(run: RunTrace, k) -> bool:
    return clamp(run, k) >= last_step(run)


def tick_seconds(speed) -> float:
    """Timer interval for a playback speed in steps per second."""
    return 1.0 / max(MIN_SPEED, min(float(speed or DEFAULT_SPEED), MAX_SPEED))


def render_step(run: RunTrace, k: int) -> tuple:
    """Every view of clock step k, in the order of VIEW_IDS."""
    return (
        views.ar_output_html(run, k),
        views.la_output_html(run, k),
        views.counter_html(run, k),
        views.progress_figure(run, k),
        views.window_html(run, k),
        views.trajectory_figure(run, k),
        views.pool_html(run, k),
        views.pool_size_figure(run, k),
        views.verify_html(run, k),
        views.mask_figure(run, k),
    )
