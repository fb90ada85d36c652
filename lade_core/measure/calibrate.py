"""Calibrate where it runs: the cost curve of the machine that decodes, measured there once and kept.

Auto and adaptive sizes weigh every token a step feeds by this device's cost curve. The curve shipped in assets/
was measured on one host; another 2-core host measured a one-token step 14% faster and a 16-token step 1.45x
(not 1.23x), and there Auto's choice fell from 1.45x to 1.17x. So `calibrated_curve(lm)` measures a quick
interleaved curve (`QUICK_SIZES`, `QUICK_REPEATS` rounds: about 10 s on a 2-core CPU) the first time a machine,
model, dtype, kernels and thread count are seen, keeps it under the model loader's cache folder
(`machine.curve_file`), and reads it back afterwards. The shipped curve stays the fallback where nothing can be
measured (a static page, no model). Every curve handed out says where it came from (`source`: "measured here" or
"shipped", and `machine`, a description in words), so a page can say which machine a figure is from.
"""

from __future__ import annotations

import time

from ..machine import cached_curves, curve_file, identity, machine_name, save_curve
from ..paths import measurement
from .costcurve import curve_path, load_curve_file, measure_cost_curve

QUICK_SIZES = (1, 2, 3, 4, 6, 8, 12, 16, 32, 64, 128)  # 3 to 12: where one layout hands over to the other
QUICK_REPEATS = 5
BATCHED = measurement("costcurve-cpu-batched")  # the shipped batched curve (`lade costcurve --batch 1,2,4,8`)


def cache_dir():
    from ..checkpoint import cache_root

    return cache_root()


def _path(lm, batched: bool = False):
    import torch

    return curve_file(
        cache_dir(),
        identity(str(lm.device)),
        lm.name,
        str(lm.dtype).removeprefix("torch."),
        lm.kernels,
        torch.get_num_threads(),
        batched,
    )


def labelled(curve: dict, source: str) -> dict:
    """`curve` with where it came from: "measured here" (this machine, cached) or "shipped" (assets/, another
    machine or an earlier session), and the machine in words."""
    machine = curve.get("machine") or {}
    described = machine.get("description") or "its machine not recorded"
    n = curve.get("threads")
    threads = f", {n} thread{'' if n == 1 else 's'}" if n else ""
    when = curve.get("measured_at") or curve.get("recorded_at") or "an unrecorded date"
    where = "this machine" if source == "measured here" else "shipped with the project"
    return {
        **curve,
        "source": source,
        "machine_description": f"{described}{threads} ({where}, {when})",
        "machine_name": machine_name(machine.get("description"), n),
    }


_PROCESS: dict[tuple, dict] = {}  # the curves measured in this process, by model, device, dtype, kernels, threads


def _key(lm) -> tuple:
    import torch

    return lm.name, str(lm.device), str(lm.dtype), lm.kernels, torch.get_num_threads()


def process_curve(lm, sizes=QUICK_SIZES, repeats: int = QUICK_REPEATS) -> dict:
    """This process's curve for `lm` at torch's thread count now: measured the first time it is asked for (about 10
    s on a 2-core CPU), the way a race runs (`costcurve`), then kept for the process's life and written to the cache
    folder. What a recorded run carries as its machine's curve (`here.machine_record`)."""
    key = _key(lm)
    if key not in _PROCESS:
        t0 = time.perf_counter()
        curve = measure_cost_curve(lm, sizes, repeats=repeats)
        path = _path(lm)
        curve.update(seconds_to_measure=time.perf_counter() - t0, cached_at=str(path))
        save_curve(path, curve)
        _PROCESS[key] = labelled(curve, "measured here")
    return _PROCESS[key]


def calibrated_curve(lm, refresh: bool = False, sizes=QUICK_SIZES, repeats: int = QUICK_REPEATS) -> dict:
    """This machine's curve for `lm`: the one measured in this process, else the cached one, else one measured now
    (`refresh`: always measure)."""
    if refresh:
        _PROCESS.pop(_key(lm), None)
    elif _key(lm) in _PROCESS:
        return _PROCESS[_key(lm)]
    else:
        cached = load_curve_file(_path(lm))
        if cached is not None and cached.get("machine", {}).get("id") == identity(str(lm.device))["id"]:
            return labelled(cached, "measured here")
    return process_curve(lm, sizes, repeats)


def save_batched(lm, curve: dict) -> str:
    """Keep a batched curve measured here in this machine's cache too; returns where."""
    path = _path(lm, batched=True)
    save_curve(path, curve)
    return str(path)


def lab_cpu_curves(root=None, here: bool = True) -> dict:
    """The CPU curves the lab draws, without a model: this machine's newest cached curves of the shipped model if
    any (`root`: the cache folder, default the loader's) and `here`, else the shipped ones, measured on the host the
    gallery, the bench and the numerics were recorded on (what a page shows, whoever exports it). {"single": curve,
    "batched": curve or None}, each labelled."""
    shipped = load_curve_file(curve_path("cpu"))
    model = shipped["model"] if shipped else None
    root = cache_dir() if root is None else root
    here, here_batched = (cached_curves(root, model), cached_curves(root, model, batched=True)) if here else ([], [])
    single = labelled(here[0], "measured here") if here else labelled(shipped, "shipped") if shipped else None
    batched_file = load_curve_file(BATCHED)
    batched = (
        labelled(here_batched[0], "measured here")
        if here_batched
        else labelled(batched_file, "shipped")
        if batched_file
        else None
    )
    return {"single": single, "batched": batched}
