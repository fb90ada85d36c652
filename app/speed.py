"""When one timing on a CPU is faster than another: the project's one noise rule, declared here and nowhere else (the
browser's copy, `lade-derive.js` `speed`, is held to it by tests/test_derive_js.py on shared inputs).

The band comes from the run's own device, never from recordings made at other times or on other machines: the wider
of the run's own greedy steps (the mean step time of the first half of its decoding steps against the second half's:
how far the clock drifted during that race) and a floor measured on the same device in the same process
(`RunTrace.machine.noise`: a greedy step's samples in the cost curve measured before the race, one half against the
other). Two speed-ups whose ratio lies within the band are "about as fast"; a verdict against greedy is "faster" or
"slower" only when every measurement of that prompt and setting (the recording, and the bench's rows of the same
prompt and settings, measured in the same sitting) lies beyond it. A run with neither (under 4 decoding steps and no
machine recorded) gets no band and no verdict. Gallery captions, the lesson and the race all read what `speed`
computes here; the page applies no rule of its own.
"""

from __future__ import annotations

import statistics

from lade_core import MethodRun, RunTrace

OWN = "this run's greedy steps, first half against second"
DEVICE = "a greedy step on this run's device, in the cost curve measured before the race, one half against the other"


def mean_step_s(method: MethodRun) -> float:
    """A method's mean step time, the prefill left out (it scales with the prompt, not with decoding)."""
    steps = method.steps[1:]
    return statistics.fmean(s.seconds for s in steps) if steps else 0.0


def mean_forward_s(method: MethodRun) -> float:
    """A method's mean forward-pass time per decoding step, the engine's own work and drafting left out."""
    steps = method.steps[1:]
    return statistics.fmean(s.forward_s for s in steps) if steps else 0.0


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


def device_floor(run: RunTrace) -> dict | None:
    """The floor measured on the run's device in the process that ran it (None where the run recorded none)."""
    noise = run.machine.noise
    return {"what": DEVICE, "ratio": noise, "source": "this run's device"} if noise >= 1 else None


def band(run: RunTrace) -> dict | None:
    """{"ratio": the band (1.17 means 17%), "parts": each spread with its source}: the run's own and its device's
    floor; None where neither was measured."""
    parts = [p for p in (device_floor(run), own_spread(run)) if p]
    return {"ratio": max(p["ratio"] for p in parts), "parts": parts} if parts else None


def band_words(judged: dict) -> str:
    """The band in words, naming the spread that set it."""
    top = max(judged["parts"], key=lambda p: p["ratio"])
    percent = round(100 * (judged["ratio"] - 1))
    if top["what"] == OWN:
        return f"this run's own greedy steps differed by {percent}% between its first and second half"
    return f"a greedy step on this run's device varied by {percent}% within one measurement before the race"


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


def speed(run: RunTrace, lane_ids: dict[str, MethodRun], bench: list[float]) -> dict | None:
    """What the page says of a run's speed: each lane's speed-up and verdict (the main lane's with the bench's
    measurements of its prompt and setting), the lanes as fast as the fastest, and the band they were judged by;
    None where no band was measured."""
    judged, lanes = band(run), {}
    if judged is None:
        return None
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
