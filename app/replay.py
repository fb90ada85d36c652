"""Playback of a run on the step clock: where to start, how to step, how fast to tick, and what each step shows.

All of it is plain functions of a `RunTrace` and a step number, so per-user state is just (run, step, playing).
`render_step` returns the views of one step in the order of `VIEW_IDS`, the order the UI lists its outputs in.
"""

from __future__ import annotations

from lade_core import RunTrace

from . import views
from .views.common import last_step, step_at

# elem_id of each view output, in the order `render_step` returns them.
VIEW_IDS = ("ar-output", "la-output", "counter", "progress-plot", "window-view", "trajectory-view", "pool-view",
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


# Views that playback does not re-send each tick: the small charts (their step line is moved in the browser) and
# the mask (re-sent only when the step's layout changes).
STEP_LINE_VIEWS = ("progress-plot", "pool-plot")


def stale_views(run: RunTrace, k: int, shown: int) -> set[str]:
    """Views that need no update when moving from step `shown` to step k during playback."""
    stale = set(STEP_LINE_VIEWS)
    before, now = step_at(run, shown), step_at(run, k)
    if before is not None and now is not None and before.kind != "prefill" and now.kind != "prefill" \
            and before.layout == now.layout:
        stale.add("mask-view")
    return stale


_RENDERERS = {
    "ar-output": views.ar_output_html,
    "la-output": views.la_output_html,
    "counter": views.counter_html,
    "progress-plot": views.progress_figure,
    "window-view": views.window_html,
    "trajectory-view": views.trajectory_html,
    "pool-view": views.pool_html,
    "pool-plot": views.pool_size_figure,
    "verify-view": views.verify_html,
    "mask-view": views.mask_figure,
}


def render_step(run: RunTrace, k: int, skip: set[str] = frozenset()) -> tuple:
    """Every view of clock step k, in the order of VIEW_IDS (None for the views named in `skip`)."""
    return tuple(None if name in skip else _RENDERERS[name](run, k) for name in VIEW_IDS)
