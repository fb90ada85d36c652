"""When one timing on this CPU is faster than another: the project's one noise rule, declared here and nowhere else.

The band is the largest spread this project has measured between greedy runs of one prompt on its measurement host,
from two sources: two greedy runs of each bench prompt in one process (`assets/bench/adaptive-vs-auto.json`) and the
gallery's greedy lanes of one prompt, recorded at different times (the ratio of their mean step times, the prefill
left out); and, for the run being judged, its own greedy steps: the mean step time of the first half of its decoding
steps against the second half's, how far the clock drifted during that race (a live race on a loaded machine can
drift further than anything on file, and then that sets its band). Two speed-ups whose ratio lies within the band are
"about as fast"; a verdict against greedy is "faster"
or "slower" only when every measurement of that prompt and setting (the recording, and the bench's rows of the same
prompt and settings) lies beyond it. Gallery captions, the lesson and the race all read what `speed` computes here;
the page applies no rule of its own.
"""

from __future__ import annotations

import json
import statistics
from functools import lru_cache

from lade_core import MethodRun, RunTrace, parse_run
from lade_core.paths import BENCH, RUNS

BENCH_PAIRS = BENCH / "adaptive-vs-auto.json"


def mean_step_s(method: MethodRun) -> float:
    """A method's mean step time, the prefill left out (it scales with the prompt, not with decoding)."""
    steps = method.steps[1:]
    return statistics.fmean(s.seconds for s in steps) if steps else 0.0


def mean_forward_s(method: MethodRun) -> float:
    """A method's mean forward-pass time per decoding step, the engine's own work and drafting left out."""
    steps = method.steps[1:]
    return statistics.fmean(s.forward_s for s in steps) if steps else 0.0


def _gallery_spread() -> dict | None:
    """The widest spread of greedy's mean step time among the gallery's recorded runs (assets/runs/) of one prompt."""
    by_prompt: dict[str, list[float]] = {}
    for path in sorted(RUNS.glob("*.json")):
        run = parse_run(path.read_bytes())
        by_prompt.setdefault(run.prompt, []).append(mean_step_s(run.baseline))
    spreads = [(max(v) / min(v), prompt, v) for prompt, v in by_prompt.items() if len(v) > 1 and min(v) > 0]
    if not spreads:
        return None
    ratio, prompt, times = max(spreads)
    return {
        "what": "the gallery's greedy runs of one prompt, recorded at different times",
        "ratio": ratio,
        "runs": len(times),
        "ms": [1000 * min(times), 1000 * max(times)],
        "prompt": prompt,
        "source": "assets/runs/ (greedy's mean step time, the prefill left out)",
    }


OWN = "this run's greedy steps, first half against second"


def own_spread(run: RunTrace) -> dict | None:
    """How far greedy's mean step time moved within the run: its first half of decoding steps against its second
    (None under 4 decoding steps, too few to halve)."""
    steps = [s.seconds for s in run.baseline.steps[1:]]
    if len(steps) < 4:
        return None
    half = len(steps) // 2
    first, second = statistics.fmean(steps[:half]), statistics.fmean(steps[half:])
    if min(first, second) <= 0:
        return None
    return {"what": OWN, "ratio": max(first, second) / min(first, second), "source": "this run"}


def band(run: RunTrace | None = None) -> dict:
    """{"ratio": the band (1.17 means 17%), "parts": each measured spread with its source}: the spreads on file, and
    `run`'s own when a run is judged."""
    own = own_spread(run) if run is not None else None
    parts = [*_measured(), *([own] if own else [])]
    return {"ratio": max((p["ratio"] for p in parts), default=1.0), "parts": parts}


@lru_cache(maxsize=1)
def _measured() -> list[dict]:
    """The spreads on file: the bench's paired greedy runs and the gallery's greedy runs of one prompt."""
    parts = []
    if BENCH_PAIRS.exists():
        ratio = json.loads(BENCH_PAIRS.read_text())["summary"]["greedy_noise_max"]
        parts.append(
            {
                "what": "two greedy runs of each bench prompt in one process",
                "ratio": ratio,
                "source": f"assets/bench/{BENCH_PAIRS.name}",
            }
        )
    gallery = _gallery_spread()
    if gallery:
        parts.append(gallery)
    return parts


def band_words(judged: dict) -> str:
    """The band in words, naming the spread that set it."""
    top = max(judged["parts"], key=lambda p: p["ratio"])
    percent = round(100 * (judged["ratio"] - 1))
    if top["what"] == OWN:
        return f"this run's own greedy steps differed by {percent}% between its first and second half"
    return f"greedy runs of one prompt here have differed by up to {percent}%"


def against_greedy(values: list[float], ratio: float) -> str:
    """ "faster than greedy", "slower than greedy" or "about as fast as greedy", for the speed-ups measured of one
    prompt and setting, judged by the band `ratio`."""
    if values and all(v > ratio for v in values):
        return "faster than greedy"
    if values and all(v < 1 / ratio for v in values):
        return "slower than greedy"
    return "about as fast as greedy"


def within(a: float, b: float, ratio: float) -> bool:
    """Whether two speed-ups are about as fast as each other by the band `ratio`."""
    return max(a, b) <= ratio * min(a, b)


def speedup(run: RunTrace, method: MethodRun | None = None) -> float:
    """Greedy's time over a method's (the main one by default), both recorded on one clock."""
    method = method or run.parallel
    time = lambda m: sum(s.seconds for s in m.steps)  # noqa: E731
    return time(run.baseline) / time(method) if time(method) else 0.0


def speed(run: RunTrace, lane_ids: dict[str, MethodRun], bench: list[float]) -> dict:
    """What the page says of a run's speed: each lane's speed-up and verdict (the main lane's with the bench's
    measurements of its prompt and setting), the lanes as fast as the fastest, and the band they were judged by."""
    judged, lanes = band(run), {}
    for lane, method in lane_ids.items():
        values = [speedup(run, method), *(bench if lane == "parallel" else [])]
        lanes[lane] = {
            "speedup": values[0],
            "bench": values[1:],
            "verdict": against_greedy(values, judged["ratio"]),
        }
    top = max((v["speedup"] for v in lanes.values()), default=0.0)
    fastest = sorted(
        (lane for lane, v in lanes.items() if within(v["speedup"], top, judged["ratio"])),
        key=lambda lane: -lanes[lane]["speedup"],
    )
    return {"band": judged, "lanes": lanes, "fastest": fastest}
