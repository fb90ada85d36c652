"""Calibrating where it runs: a curve measured here is cached per machine, model, dtype, kernels and threads, read
back instead of measured again, never taken from another machine, and every curve handed out says where it came
from. No model: the measurement is replaced by a recorded one."""

import json
from types import SimpleNamespace

import pytest

from lade_core import machine
from lade_core.measure import calibrate


def _curve(points=((1, 0.05), (8, 0.06), (64, 0.15)), ident=None):
    return {
        "model": "SmolLM2-135M-Instruct",
        "device": "cpu",
        "dtype": "float32",
        "kernels": "onednn-packed",
        "threads": 1,
        "prefix": 100,
        "greedy_s": points[0][1],
        "machine": ident or machine.identity(),
        "measured_at": "2026-12-02T10:00:00",
        "points": [{"tokens": n, "seconds": s, "q1": 0.9 * s, "q3": 1.1 * s} for n, s in points],
    }


@pytest.fixture
def fake(monkeypatch, tmp_path):
    """A stand-in `LM`, this session's cache folder, and a measurement that counts its calls."""
    calls = []
    monkeypatch.setattr(calibrate, "cache_dir", lambda: tmp_path)
    monkeypatch.setattr(calibrate, "_PROCESS", {})
    monkeypatch.setattr(calibrate, "measure_cost_curve", lambda lm, sizes, repeats: calls.append(sizes) or _curve())
    lm = SimpleNamespace(name="SmolLM2-135M-Instruct", device="cpu", dtype="torch.float32", kernels="onednn-packed")
    return lm, calls, tmp_path


def test_the_machine_is_described_in_words_and_by_a_hashed_host():
    me = machine.identity()
    assert me["description"] == f"{machine.cores()}-core {machine.cpu_name()}"
    assert me["host"] == machine.host_hash() and len(me["host"]) == 8 and me["host"] in me["id"]
    assert " " not in me["id"]


def test_the_cache_file_names_every_part_of_the_key(tmp_path):
    """Two thread counts, two dtypes or two kinds of kernel must never share a curve."""
    me = machine.identity()
    paths = {
        machine.curve_file(tmp_path, me, "m", d, k, t)
        for d in ("float32", "bfloat16")
        for k in ("a", "b")
        for t in (1, 2)
    }
    assert len(paths) == 8
    assert machine.curve_file(tmp_path, me, "m", "float32", "a", 1, batched=True) not in paths


def test_a_curve_is_measured_once_then_read_back(fake):
    lm, calls, root = fake
    first = calibrate.calibrated_curve(lm)
    again = calibrate.calibrated_curve(lm)
    assert len(calls) == 1 and calls[0] == calibrate.QUICK_SIZES
    assert first["source"] == again["source"] == "measured here"
    assert "this machine" in again["machine_description"] and machine.describe_cpu() in again["machine_description"]
    assert again["points"] == first["points"]
    calibrate.calibrated_curve(lm, refresh=True)
    assert len(calls) == 2


def test_a_run_gets_the_curve_measured_in_its_own_process(fake):
    """A recorded run carries the curve of the process that ran it, measured once there (never a file kept from
    another moment); Auto and the lab read the same one afterwards."""
    lm, calls, root = fake
    path = calibrate._path(lm)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(_curve(points=((1, 0.5), (8, 0.9)))))  # an older measurement of this machine
    first = calibrate.process_curve(lm)
    assert len(calls) == 1 and first["points"][0]["seconds"] == 0.05
    assert calibrate.process_curve(lm) is first and calibrate.calibrated_curve(lm) is first and len(calls) == 1


def test_a_curve_from_another_machine_is_not_used(fake):
    """Copying a cache folder to another host must not hand that host the first host's curve."""
    lm, calls, root = fake
    path = calibrate._path(lm)
    path.parent.mkdir(parents=True)
    other = {**machine.identity(), "id": "8-core-other-cpu-00000000"}
    path.write_text(json.dumps(_curve(ident=other)))
    assert calibrate.calibrated_curve(lm)["machine"]["id"] == machine.identity()["id"]
    assert len(calls) == 1


def test_the_lab_reads_this_machines_curve_before_the_shipped_one(tmp_path):
    """With nothing cached, the lab's CPU line is the shipped curve and says so; once this machine has measured
    one, that one, labelled as measured here."""
    shipped = calibrate.lab_cpu_curves(root=tmp_path)
    assert (
        shipped["single"]["source"] == "shipped"
        and "shipped with the project" in shipped["single"]["machine_description"]
    )
    path = machine.curve_file(tmp_path, machine.identity(), shipped["single"]["model"], "float32", "x", 1)
    machine.save_curve(path, _curve())
    here = calibrate.lab_cpu_curves(root=tmp_path)
    assert here["single"]["source"] == "measured here" and here["single"]["points"][1]["seconds"] == 0.06


def test_the_shipped_batched_curve_is_labelled_and_complete():
    batched = calibrate.lab_cpu_curves(root=calibrate.BATCHED.parent / "no-cache-here")["batched"]
    assert batched["source"] == "shipped"
    assert batched["command"].startswith("python -m lade_core costcurve --device cpu --batch")
    assert [c["batch"] for c in batched["curves"]] == [1, 2, 4, 8]
    for c in batched["curves"]:
        assert c["points"][0]["tokens"] == 1 and c["points"][0]["relative"] == 1.0
        assert all(p["q1"] <= p["seconds"] <= p["q3"] for p in c["points"])
