"""What the lab page draws: `lab_page_data()` and `lab_run_data(run)` as plain JSON within their size budgets, every
band ordered, every figure sourced, and the run's numbers the very ones `lade lab` prints. No model, no server."""

import json

import pytest

from lade_core.measure import calibrate, lab, labdata
from lade_core.paths import RUNS
from lade_core.tracefile import parse_run


@pytest.fixture(scope="module")
def page():
    return labdata.lab_page_data(calibrate.lab_cpu_curves(root=RUNS / "no-cache-here"))


@pytest.fixture(scope="module")
def run():
    return parse_run((RUNS / "code-class-W7N4G7.json").read_bytes())


@pytest.fixture(scope="module")
def run_data(run):
    return labdata.lab_run_data(run)


def test_page_data_is_plain_json_within_budget(page):
    text = json.dumps(page, separators=(",", ":"), allow_nan=False)
    assert len(text) < 150_000
    assert page["schema"] == "lade-explorer/lab-page" and json.loads(text) == page


def test_every_gpu_curve_is_a_band_with_its_mid_inside(page):
    """low <= mid <= high at every tokens-fed point, one point per entry of `tokens`, the one-token cost 1 exactly,
    for every device, size and batch; a swapped min and max, or a curve drawn against the wrong batch, fails."""
    n = len(page["tokens"])
    for device, sizes in page["gpu_curves"].items():
        for size, batches in sizes.items():
            assert list(batches) == [str(b) for b in page["batches"]]
            for b, c in batches.items():
                assert len(c["low"]) == len(c["mid"]) == len(c["high"]) == n
                assert c["mid"][0] == 1.0
                assert all(lo <= mid <= hi for lo, mid, hi in zip(c["low"], c["mid"], c["high"])), (device, size, b)
    seven, at32 = page["gpu_curves"]["a100-80gb"]["7B"], page["tokens"].index(32)
    assert seven["1"]["mid"][at32] < 1.05 and seven["64"]["mid"][at32] > 5  # crowded batches pay for their tokens
    assert seven["64"]["crossover_tokens"] < seven["1"]["crossover_tokens"] / 16


def test_the_cpu_lines_say_where_they_were_measured(page):
    cpu = page["cpu"]
    assert cpu["single"]["source"] == "shipped" and cpu["single"]["relative"][0] == 1.0
    assert cpu["batched"]["batches"] == [1, 2, 4, 8]
    for b in cpu["batched"]["batches"]:
        line = cpu["batched"]["curves"][str(b)]
        assert all(q1 <= r <= q3 for q1, r, q3 in zip(line["q1"], line["relative"], line["q3"]))


def test_thresholds_each_name_their_setting_and_source(page):
    servers = page["thresholds"]["servers"]
    assert {"vLLM (V0 engine)", "TensorRT-LLM (PyTorch backend)", "SGLang"} <= {s["server"] for s in servers}
    for s in servers:
        assert s["setting"] and s["rule"] and s["sources"]
        assert all(
            src.get("url", "").startswith("https://") or (src.get("repo") and src.get("path")) for src in s["sources"]
        )
        assert s["off_from_batch"] is None or isinstance(s["off_from_batch"], int)


def test_the_parallelism_scenario_shows_the_mechanism(page):
    """On one A100 the widest window's 7B step is past the crossover (compute-bound, several greedy steps); dealt
    out over devices it falls back under it, so the simulated speed-up grows with k, while the swept point nearest
    the default 7/4/7 on a 7B A100 is flat: one device already feeds it for free."""
    wide, default = page["parallelism"]["wide"], page["parallelism"]["default"]
    assert wide["bound"][0] == "compute" and wide["step_cost"][0] > 2 and "memory" in wide["bound"]
    assert wide["predicted_speedup"][-1] > 2 * wide["predicted_speedup"][0]
    assert max(default["predicted_speedup"]) - min(default["predicted_speedup"]) < 0.01
    assert wide["kind"] == ["model"] + ["simulation"] * 7
    assert all(lo <= p <= hi for (lo, hi), p in zip(wide["range"], wide["predicted_speedup"]))


def test_the_parallelism_scenarios_come_from_one_sweep(page):
    """The chart set the default's compression from a 128-token bench beside the wide window's from a 64-token sweep,
    so the wide window on eight devices never beat the default on one, against "compression grows": both now come
    from one sweep (one pool, one budget, one set of prompts), the wider window compresses more, and no simulated
    speed-up passes the compression it starts from (what the page says of the paper's 4x)."""
    wide, default = page["parallelism"]["wide"], page["parallelism"]["default"]
    assert wide["source"] == default["source"] and wide["max_new_tokens"] == default["max_new_tokens"]
    assert wide["compression"] > default["compression"]
    assert wide["predicted_speedup"][-1] > default["predicted_speedup"][0]
    for scenario in (wide, default):
        assert max(scenario["predicted_speedup"]) <= scenario["compression"]


def test_every_parallelism_scenario_fits_one_device(page):
    """The featured scenario put a 70B model (138 GB in bf16) on each A100 80GB: Lookahead Parallelism keeps a whole
    model on every device, so a scenario must fit one, and the page says which model and device it is."""
    for name, scenario in page["parallelism"].items():
        assert scenario["fits_in_memory"] is True, (name, scenario["model_size"], scenario["device"])


def test_a_prediction_carries_every_note_and_its_fit(run, run_data):
    """labdata kept only the first note of one prediction (h100, 7B), dropping "does not fit" and "assumes a 7B
    model accepts as many tokens per step"; each device and size now carries every note `predict_run` gives, says
    whether the model fits one device, and offers no Lookahead Parallelism (a whole model on every device) where it
    does not."""
    for device in ("a100-80gb", "h100", "h200"):
        for size in ("7B", "34B", "70B"):
            entry, direct = run_data["predictions"][device][size], lab.predict_run(run, device, size)
            assert entry["notes"] == direct["note"].split("; ")
            fits = direct["assumptions"]["fits_in_memory"]
            assert entry["fits_in_memory"] is fits
            assert any("does not fit" in n for n in entry["notes"]) is (not fits)
            assert entry["devices"] == ([1, 2, 3, 4, 5, 6, 7, 8] if fits else [1])
    assert not run_data["predictions"]["h100"]["70B"]["fits_in_memory"]
    assert run_data["predictions"]["h200"]["70B"]["fits_in_memory"]  # 141 GB holds its 138 GB, at a small batch
    assert run_data["predictions"]["h200"]["70B"]["batches"][-1] < 256


def test_why_lookahead_stops_paying_is_read_off_the_roofline(run, run_data):
    """The lab said lookahead stops paying at batch B "because the forward is already compute-bound without them",
    while by the roofline the greedy forward there is memory-bound (H100, 7B, B = 16: 0.44 ms of arithmetic against
    7.6 ms of reading); it is lookahead's forward of B x its tokens that crosses. The reason is now chosen from the
    bounds of both forwards at that batch, and agrees with the roofline everywhere."""
    from lade_core.measure.lab import run_target
    from lade_core.measure.roofline import forward_seconds

    fed = run_data["run"]["tokens_fed"]
    for device in ("a100-80gb", "h100", "h200"):
        for size, entry in run_data["predictions"][device].items():
            even, t = entry["break_even_batch"], run_target(run, device, size)
            if even["predicted"] is None:
                assert even["why"] is None
                continue
            b = even["why"]["batch"]
            greedy = forward_seconds(device, size, 1, t.context, batch=b)
            wide = forward_seconds(device, size, fed, t.context, batch=b)
            assert even["why"]["greedy_bound"] == greedy["bound"]
            assert even["why"]["lookahead_bound"] == wide["bound"]
            expected = (
                "both compute"
                if greedy["bound"] == "compute"
                else "lookahead crosses"
                if wide["bound"] == "compute"
                else "neither compute"
            )
            assert even["why"]["reason"] == expected, (device, size)
    h100 = run_data["predictions"]["h100"]["7B"]["break_even_batch"]["why"]
    assert h100 == {**h100, "reason": "lookahead crosses", "greedy_bound": "memory", "lookahead_bound": "compute"}


def test_run_data_is_plain_json_within_budget(run_data):
    text = json.dumps(run_data, separators=(",", ":"), allow_nan=False)
    # 56 KB: the GPU predictions are about 48 KB; since trace version 5 the CPU entry also carries the run's own
    # measurement and this CPU's roof (about 1.2 KB)
    assert len(text) < 56_000 and run_data["schema"] == "lade-explorer/lab-run"


@pytest.mark.parametrize(
    "device, size, devices, batch",
    [("h100", "7B", 4, 1), ("a100-80gb", "7B", 1, 64), ("h200", "70B", 8, 1), ("cpu", "135M", 1, 1)],
)
def test_run_data_holds_the_numbers_lade_lab_prints(run, run_data, device, size, devices, batch):
    """The page and the command line must never disagree: each entry equals `predict_run` for the same choice,
    to the 4 digits the page keeps. On the CPU both read the measurement host's shipped curves (the page states
    those whoever exports it; `lade lab` on a machine that measured its own says "measured here")."""
    entry = run_data["predictions"][device][size]
    axis, at = (
        ("by_devices", entry["devices"].index(devices)) if batch == 1 else ("by_batch", entry["batches"].index(batch))
    )
    t = lab.run_target(run, device, size, here=False)
    direct = lab.predict_run(run, device, size, devices, batch=batch, t=t)
    series = entry[axis]
    assert series["predicted_speedup"][at] == pytest.approx(direct["predicted_speedup"], rel=1e-3)
    assert [series["low"][at], series["high"][at]] == pytest.approx(direct["predicted_speedup_range"], rel=1e-3)
    assert series["step_cost"][at] == pytest.approx(direct["step_cost"], rel=1e-3)
    assert series["bound"][at] == direct["breakdown"]["bound"]


def test_run_data_break_even_batch_is_ordered(run_data):
    """Earliest <= predicted <= latest wherever all three exist, for every device and size; a 135M model on a GPU
    is launch-bound, so lookahead keeps paying to a larger batch there than on a 7B model."""
    for device, sizes in run_data["predictions"].items():
        for size, entry in sizes.items():
            even = entry["break_even_batch"]
            early, late = even["range"]
            if None not in (early, even["predicted"], late):
                assert early <= even["predicted"] <= late, (device, size)
    h100 = run_data["predictions"]["h100"]
    assert h100["135M"]["break_even_batch"]["predicted"] > h100["7B"]["break_even_batch"]["predicted"]


def test_the_page_states_the_measurement_hosts_curves_whoever_exports_it(monkeypatch):
    """A static site exported on a machine that had measured its own CPU curve stated that curve ("measured here,
    2-core AMD EPYC ... this machine") beside gallery runs recorded on another host, and its figures changed with
    the exporter. The page's data now reads the shipped curves, whatever the exporter's cache holds."""
    calls = []
    real = calibrate.cached_curves
    monkeypatch.setattr(calibrate, "cached_curves", lambda *a, **k: calls.append(a) or real(*a, **k))
    page = labdata.lab_page_data()
    assert page["cpu"]["single"]["source"] == "shipped" and calls == []
