"""The one language model of the process: loaded once (in the background at start-up), shared by every session.

Live runs take `MODEL.get()`, which waits for the load to finish. Only one live run uses it at a time: the engine
events (Run and the `generate` API) share one queue slot, and each run's worker holds `MODEL.engine_lock` while it
calls the model, so a cancelled run that is still finishing its step never overlaps the next one.
"""

from __future__ import annotations

import os
import statistics
import threading
import time

from lade_core import load_model

CALIBRATION = "Count from one to twenty, separated by commas."  # the start-up race that measures the engine's pace


class SharedModel:
    def __init__(self):
        self.name: str | None = None
        self._curve: dict | None = None
        self._overhead: dict[str, float] = {}  # method -> the engine's work per step besides its forward (seconds)
        self._slow: tuple[float, float] | None = None  # (greedy's forward against the curve's, when) of the last race
        self._lm = None
        self._error: Exception | None = None
        self._lock = threading.Lock()
        self.engine_lock = threading.Lock()

    def configure(self, name: str | None) -> None:
        """Choose the model (None = the embedded default) before anything loads it."""
        self.name = name

    def preload(self) -> None:
        """Start loading in a background thread so that the first Run does not wait for it."""
        threading.Thread(target=self._load_quietly, name="lade-model-load", daemon=True).start()

    def _load_quietly(self) -> None:
        try:
            self.get()
            self.cost_curve()  # measured now, not in the first visitor's race
            self._calibrate()
        except Exception:  # kept in self._error, reported by the next get()
            pass

    def get(self):
        with self._lock:
            if self._lm is None and self._error is None:
                try:
                    self._lm = load_model(self.name)
                except Exception as exc:
                    self._error = exc
            if self._error is not None:
                raise self._error
            return self._lm

    def loaded(self):
        """The model if it has loaded, else None; never waits (the page's light events ask it)."""
        return self._lm

    def measured_curve(self) -> dict | None:
        """The cost curve `cost_curve` has read or measured in this process, else None; never measures."""
        return self._curve

    def cost_curve(self) -> dict:
        """This process's cost curve for the model, measured once the way a race runs (at start-up, after the load),
        inside the engine lock so that it never overlaps a live run: what Auto, adaptive runs, the expected wait and
        every race's recorded machine read (`calibrate.process_curve`)."""
        from lade_core.measure.calibrate import process_curve

        lm = self.get()
        if self._curve is None:
            with self.engine_lock:
                if self._curve is None:
                    self._curve = process_curve(lm)
        return self._curve

    def _calibrate(self) -> None:
        """A short race of every raced method at start-up, inside the engine lock: the engine's work between forwards
        per step, before any visitor's race has shown it (`observe`)."""
        from lade_core import LookaheadConfig, record_run

        from .limits import RACE_METHODS, check_methods

        with self.engine_lock:
            for i in range(0, len(RACE_METHODS), 3):  # a race is at most three methods, each as a visitor's runs it
                specs = check_methods(list(RACE_METHODS[i : i + 3]), LookaheadConfig())
                self.observe(record_run(self.get(), CALIBRATION, specs, 12))

    def observe(self, run) -> None:
        """Learn the engine's pace from a finished race: per method, the work of a step besides its forward (its
        90th percentile over the race's steps, kept at its largest: a bound, not an average; prompt lookup's search
        counted in, a draft model's passes not, which the wait counts as forwards), and how much slower greedy's
        forwards ran than the curve's greedy step."""
        lanes = [("greedy", run.baseline), *((lane.method, lane.run) for lane in run.all_lanes)]
        for method, lane in lanes:
            extra = [s.overhead_s + (s.draft_s if method == "pld" else 0.0) for s in lane.steps[1:]]
            if len(extra) >= 4:
                p90 = statistics.quantiles(extra, n=10)[-1]
                self._overhead[method] = max(self._overhead.get(method, 0.0), p90)
        greedy = [s.forward_s for s in run.baseline.steps[1:]]
        if greedy and self._curve:
            self._slow = (statistics.median(greedy) / self._curve["greedy_s"], time.monotonic())

    def pace(self, curve: dict, recent_s: float = 120.0) -> tuple[dict[str, float], float]:
        """(the engine's work per step besides its forward, by method; how much slower than `curve` it runs now, at
        least 1): the larger of the load now against the load when the curve was measured (CPUs other work keeps
        busy) and greedy's pace in a race that ended in the last `recent_s` seconds."""
        import torch

        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        then = (curve.get("load_average") or [0.0])[0]
        now = os.getloadavg()[0] if hasattr(os, "getloadavg") else then
        busy = lambda load: max(1.0, (load + torch.get_num_threads()) / cores)  # noqa: E731
        slowdown = busy(now) / busy(then)
        if self._slow and time.monotonic() - self._slow[1] < recent_s:
            slowdown = max(slowdown, self._slow[0])
        return dict(self._overhead), max(1.0, slowdown)


MODEL = SharedModel()
