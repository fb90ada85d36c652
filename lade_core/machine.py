"""Which machine a measurement or a run came from, and where this machine's own cost curves are kept.

A cost curve is a property of one machine, one model, one dtype, one set of kernels and one thread count: a curve
measured on another host can be wrong by a lot (a second 2-core host measured 1.25x at 8 tokens where the shipped
curve says 1.03x). So a curve measured here is cached under the user's cache folder (the model loader's
`cache_root()`), in a file whose name carries all five, and says in words which machine it is: the CPU's model
name and core count from /proc/cpuinfo (or the GPU's name), and a short hash of the host name, never the name
itself. A recorded run carries the same in words and numbers (`run_machine`: `trace.Machine`). Left out: telling two
hosts apart that share a host name and a CPU model.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
from pathlib import Path

CURVE_DIR = "costcurves"


def cpu_name() -> str:
    """The CPU's model name ("Intel(R) Xeon(R) Processor"), or the platform's processor string."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def cores() -> int:
    """CPUs this process may run on (the affinity mask where there is one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def host_hash() -> str:
    return hashlib.sha256(platform.node().encode("utf-8")).hexdigest()[:8]


def describe_cpu() -> str:
    """'2-core Intel(R) Xeon(R) Processor': what a page can say about this CPU."""
    return f"{cores()}-core {cpu_name()}"


def machine_name(description: str | None, threads: int | None = None) -> str | None:
    """A machine as a page names the source of a figure: "2-core Intel(R) Xeon(R) Processor at 1 thread", its
    description as recorded with the threads it ran; None where nothing describes it (a page then says the machine
    is not recorded, and invents none)."""
    if not description:
        return None
    return f"{description} at {threads} thread{'' if threads == 1 else 's'}" if threads else description


def identity(device: str = "cpu") -> dict:
    """This machine as a cost curve records it: a description in words, the parts it is made of, and an id."""
    if str(device).startswith("cuda"):
        import torch

        name = torch.cuda.get_device_name(torch.device(device))
        description, parts = name, {"gpu": name}
    else:
        description, parts = describe_cpu(), {"cpu": cpu_name(), "cores": cores()}
    return {
        "description": description,
        **parts,
        "host": host_hash(),
        "id": f"{re.sub(r'[^a-z0-9]+', '-', description.lower()).strip('-')}-{host_hash()}",
    }


def _slug(text) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", str(text)).strip("-")


def curve_file(
    root: Path, machine: dict, model: str, dtype: str, kernels: str, threads: int, batched: bool = False
) -> Path:
    """Where the curve of this machine, model, dtype, kernels and thread count lives under `root`."""
    kind = "batched" if batched else "curve"
    name = "-".join(_slug(x) for x in (machine["id"], model, dtype, kernels, f"{threads}t", kind))
    return root / CURVE_DIR / f"{name}.json"


def save_curve(path: Path, curve: dict) -> None:
    """Write atomically, so that a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(curve, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def cached_curves(root: Path, model: str | None = None, batched: bool = False) -> list[dict]:
    """This machine's cached curves (of `model` if given), newest first; unreadable files are skipped."""
    me, found = identity()["id"], []
    for path in sorted((root / CURVE_DIR).glob(f"*-{'batched' if batched else 'curve'}.json")):
        try:
            curve = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if curve.get("machine", {}).get("id") == me and (model is None or curve.get("model") == model):
            found.append({**curve, "cached_at": str(path)})
    return sorted(found, key=lambda c: c.get("measured_at", ""), reverse=True)


def run_machine(lm, curve: dict | None = None, roof: dict | None = None):
    """The `trace.Machine` of a run on `lm` starting now: this machine in words, its CPUs, torch's threads, the
    layers' layouts, the libraries, the 1-minute load; and, where given, the cost curve measured in this process
    (`measure.costcurve`) and this CPU's roof (`measure.cpuroof`)."""
    import torch
    import transformers

    from .trace import CostPoint, Machine

    points = tuple(
        CostPoint(int(p["tokens"]), p["seconds"], p.get("q1", p["seconds"]), p.get("q3", p["seconds"]))
        for p in (curve or {}).get("points", ())
    )
    return Machine(
        description=identity(str(lm.device))["description"],
        cores=cores(),
        threads=torch.get_num_threads(),
        kernels=lm.kernels,
        versions=f"torch {torch.__version__}, transformers {transformers.__version__}",
        load=round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else -1.0,
        curve=points,
        curve_at=(curve or {}).get("measured_at", ""),
        bandwidth=float((roof or {}).get("bandwidth", 0.0)),
        flops=float((roof or {}).get("flops", 0.0)),
        noise=float((curve or {}).get("greedy_drift", 0.0)),
    )
