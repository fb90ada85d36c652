"""The machine a run is recorded on, with the figures measured in this process that stand beside the run: its cost
curve, measured the way a race runs (`calibrate.process_curve`, once per process), and this CPU's roof at the thread
count the run uses (`cpuroof`, on a CPU). What `lade trace` and the app record into `RunTrace.machine`."""

from __future__ import annotations

from ..machine import run_machine
from .calibrate import process_curve
from .cpuroof import cached_roof


def machine_record(lm):
    """`trace.Machine` for a run on `lm` starting now, with this process's curve and (on a CPU) the roof."""
    roof = cached_roof() if lm.device.type == "cpu" else None
    return run_machine(lm, process_curve(lm), roof)
