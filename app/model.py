"""The one language model of the process: loaded once (in the background at start-up), shared by every session.

Live runs take `MODEL.get()`, which waits for the load to finish. Only one live run uses it at a time: the engine
events (Run and the `generate` API) share one queue slot, and each run's worker holds `MODEL.engine_lock` while it
calls the model, so a cancelled run that is still finishing its step never overlaps the next one.
"""

from __future__ import annotations

import threading

from lade_core import load_model


class SharedModel:
    def __init__(self):
        self.name: str | None = None
        self._curve: dict | None = None
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


MODEL = SharedModel()
