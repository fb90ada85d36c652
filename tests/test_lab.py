"""The speed lab's predictions: the output contract on a recorded run, ranges computed (never widened) with each
part named, the batch dial, the break-even batch, the simulation's one-device case, and the CLI. Hand-made runs
carry only what a prediction reads (each step's accepted tokens, tokens fed and position). No model, no server."""

import json
from types import SimpleNamespace

import numpy as np
import pytest

from lade_core import cli
from lade_core.config import LookaheadConfig
from lade_core.measure import lab, roofline
from lade_core.paths import RUNS
from lade_core.tracefile import parse_run

RUN = RUNS / "code-class-W7N4G7.json"
CONTRACT = {
    "predicted_speedup",
    "predicted_speedup_range",
    "range_parts",
    "compression",
    "device",
    "model_size",
    "devices",
    "batch",
    "assumptions",
    "kind",
    "step_cost",
    "step_cost_range",
    "tokens_fed",
}


@pytest.fixture(scope="module")
def run():
    return parse_run(RUN.read_bytes())


def made_run(accepted, fed, position=0, window=7, ngram=4, guess=7, model="SmolLM2-135M-Instruct"):
    """A run whose prefill emits one token and whose lookahead steps emit `accepted[i]` tokens feeding `fed[i]`."""
    steps = [SimpleNamespace(accepted=(1,), n_input=0, position=position)]
    steps += [SimpleNamespace(accepted=(1,) * a, n_input=f, position=position) for a, f in zip(accepted, fed)]
    tokens = sum(len(s.accepted) for s in steps)
    return SimpleNamespace(
        parallel=SimpleNamespace(steps=steps, compression=tokens / len(steps)),
        model=model,
        dtype="float32",
        method="lookahead",
        config=LookaheadConfig(window, ngram, guess),
    )


def _point(w, n, g, compression, fed, by_prompt=None):
    return {
        "window": w,
        "ngram": n,
        "guess": g,
        "compression": compression,
        "mean_tokens_fed": fed,
        "compression_by_prompt": by_prompt or {"a": compression * 0.8, "b": compression, "c": compression * 1.2},
    }


def test_predict_run_keeps_the_contract(run):
    """The JSON `lade lab` prints is read by outside checks: these fields, a kind that never says measured."""
    result = lab.predict_run(run, "h100", "7B")
    assert CONTRACT <= set(result)
    assert result["compression"] == pytest.approx(run.parallel.compression)
    assert (result["device"], result["model_size"], result["devices"], result["kind"]) == ("h100", "7B", 1, "model")
    assert {"bandwidth", "peak_flops", "precision", "efficiency", "overlap", "bounds", "context"} <= set(
        result["assumptions"]
    )
    json.dumps(result, allow_nan=False)
    assert lab.predict_run(run, "h100", "7B") == result  # the bootstrap is seeded


def test_the_range_is_computed_never_widened_to_hold_the_point():
    """A compression band that lies above the point stays above it: the old code stretched the range to the point,
    so `low <= predicted` held whatever the numbers."""
    t = lab.target("a100-80gb", "7B", 0)
    cost = lab.step_cost({"window": 7, "guess": 7, "ngram": 4}, 20, t)
    result = lab._result(2.0, [2.2, 2.6], cost, t, 1, "made up")
    assert result["predicted_speedup"] == pytest.approx(2.0 / cost["step_cost"])
    assert result["predicted_speedup_range"][0] > result["predicted_speedup"]


def test_identical_steps_leave_only_the_assumptions_in_the_range():
    """Every step accepts 2 tokens feeding 22: the bootstrap cannot move the compression (its part has zero width),
    so the whole range is the roofline's bounds: [C / high cost, C / low cost] at 22 tokens."""
    r = made_run([2] * 40, [22] * 40)
    result = lab.predict_run(r, "a100-80gb", "7B")
    c, (low, high) = r.parallel.compression, result["step_cost_range"]
    assert result["range_parts"]["compression"] == pytest.approx([result["predicted_speedup"]] * 2)
    assert result["range_parts"]["assumptions"] == pytest.approx([c / high, c / low])
    assert result["predicted_speedup_range"] == pytest.approx([c / high, c / low])


def test_below_the_crossover_the_prediction_still_has_a_range():
    """A 22-token step on a 7B A100 is far below the crossover: it costs about one greedy step (mid), but not
    certainly so: with the overlap and efficiencies at their bounds it costs several percent more."""
    result = lab.predict_run(made_run([2] * 40, [22] * 40), "a100-80gb", "7B")
    assert result["step_cost"] == pytest.approx(1.0, abs=0.005)
    assert result["step_cost_range"][1] > 1.03
    assert result["predicted_speedup_range"][0] < 0.97 * result["predicted_speedup"]


def test_a_spread_of_steps_shows_in_the_compression_part():
    """Half the steps accept 1 token, half 3: the bootstrap band around the mean compression is wide, and the
    total range is at least as wide as either part."""
    result = lab.predict_run(made_run([1, 3] * 30, [22] * 60), "a100-80gb", "7B")
    (c_low, c_high), (a_low, a_high) = result["range_parts"]["compression"], result["range_parts"]["assumptions"]
    low, high = result["predicted_speedup_range"]
    assert c_high - c_low > 0.2
    assert low <= min(c_low, a_low) and high >= max(c_high, a_high)


def test_the_range_parts_name_their_sources(run):
    assert set(lab.predict_run(run, "h200", "13B")["range_parts"]) == {"compression", "assumptions"}
    assert set(lab.predict_run(run, "cpu", "135M")["range_parts"]) == {"compression", "measurement"}


def test_a_batch_makes_the_extra_tokens_stop_being_free():
    """31 tokens a step on a 7B A100: alone it costs about one greedy step; with 64 sequences the batch is
    compute-bound and the step costs about 17 of the batch's greedy steps (tests/test_roofline.py), so lookahead
    runs at a tenth of greedy's speed."""
    r = made_run([2] * 20, [31] * 20)
    alone, crowd = (lab.predict_run(r, "a100-80gb", "7B", batch=b) for b in (1, 64))
    assert alone["predicted_speedup"] > 1.8 and alone["breakdown"]["bound"] == "memory"
    assert crowd["predicted_speedup"] < 0.15 and crowd["breakdown"]["bound"] == "compute"
    assert crowd["batch"] == 64 and crowd["step_cost"] == pytest.approx(
        roofline.relative_cost("a100-80gb", "7B", 31, 0, batch=64), rel=1e-9
    )


def test_break_even_batch_is_the_first_batch_below_one():
    """Compression 1.5 at 31 tokens a step, 7B on an A100: the predicted break-even is the first B whose relative
    cost passes 1.5 (found here by scanning the roofline directly); the range runs earliest to latest."""
    setting = {"window": 7, "guess": 7, "ngram": 4}
    t = lab.target("a100-80gb", "7B", 0)
    even = lab.break_even_batch(setting, 31, 1.5, [1.3, 1.7], t)
    scan = next(b for b in range(1, 257) if 1.5 / roofline.relative_cost("a100-80gb", "7B", 31, 0, batch=b) < 1)
    assert even["predicted"] == scan
    early, late = even["range"]
    assert early < scan < late
    assert early <= min(even["range_parts"]["compression"][0], even["range_parts"]["assumptions"][0])
    assert lab.break_even_batch(setting, 1, 1.5, [1.3, 1.7], t)["predicted"] is None  # one token a step: free


def test_the_cpu_reads_its_batched_curve_at_a_measured_batch():
    """At batch 2 the CPU's step cost is the batched curve's: interpolated between its 16- and 32-token points
    (relative 2.0 and 3.0 of the batch's one-token forward), 24 tokens cost 2.5, and between the quartiles (2.0 to
    2.0 at 16, 2.5 to 3.5 at 32) 2.25 to 2.75; an unmeasured batch is refused."""
    single = {
        "model": "m",
        "dtype": "float32",
        "prefix": 100,
        "greedy_s": 0.05,
        "source": "shipped",
        "machine_description": "x",
        "points": [{"tokens": 1, "seconds": 0.05}, {"tokens": 64, "seconds": 0.2}],
    }
    batched = {
        "model": "m",
        "dtype": "float32",
        "source": "shipped",
        "machine_description": "x",
        "curves": [
            {
                "batch": 2,
                "greedy_s": 0.1,
                "points": [
                    {"tokens": 1, "seconds": 0.1, "q1": 0.1, "q3": 0.1},
                    {"tokens": 16, "seconds": 0.2, "q1": 0.2, "q3": 0.2},
                    {"tokens": 32, "seconds": 0.3, "q1": 0.25, "q3": 0.35},
                ],
            }
        ],
    }
    t = lab.Target("cpu", roofline.model_shape("135M"), 100, curves={"single": single, "batched": batched})
    result = lab.predict_run(made_run([2] * 10, [24] * 10), "cpu", "135M", batch=2, t=t)
    assert result["step_cost"] == pytest.approx(2.5) and result["step_cost_range"] == pytest.approx([2.25, 2.75])
    with pytest.raises(ValueError, match=r"measured at batch \[2\]"):
        lab.predict_run(made_run([2] * 10, [24] * 10), "cpu", "135M", batch=4, t=t)


def test_predict_run_on_this_cpu_uses_a_measured_curve(run):
    result = lab.predict_run(run, "cpu", "135M")
    assert result["breakdown"]["bound"] == "measured" and result["kind"] == "model"
    assert result["step_cost"] > 1.2  # a 27-token forward costs this CPU clearly more than a 1-token one
    # a run that recorded its machine's curve is predicted on that curve, not on one from another machine
    assert result["assumptions"]["source"] == ("this run's machine" if run.machine.curve else "shipped")


def test_kind_is_never_measured(run):
    points = [_point(4, 4, 4, 1.5, 20), _point(16, 5, 16, 1.9, 100)]
    kinds = {lab.predict_run(run, "h200", "13B", k)["kind"] for k in (1, 4)}
    kinds |= {lab.predict_run(run, "cpu", "135M")["kind"]}
    kinds |= {p["kind"] for p in lab.simulate_parallelism(points, "h100", "7B")["curve"]}
    kinds |= {r.get("kind", "model") for r in lab.paper_comparison(points=points)}
    assert kinds == {"model", "simulation"}


@pytest.mark.parametrize(
    "device, size, devices, batch, message",
    [
        ("tpu-v5", "7B", 1, 1, "unknown device"),
        ("h100", "8B", 1, 1, "no model of size"),
        ("h100", "seven", 1, 1, "write it like"),
        ("cpu", "7B", 1, 1, "SmolLM2-135M only"),
        ("cpu", "135M", 2, 1, "GPUs"),
        ("h100", "7B", 0, 1, "at least 1"),
        ("h100", "7B", 1, 0, "at least 1"),
    ],
)
def test_bad_device_size_or_batch_says_what_is_wrong(run, device, size, devices, batch, message):
    with pytest.raises(ValueError, match=message):
        lab.predict_run(run, device, size, devices, batch=batch)


def test_simulation_on_one_device_is_the_plain_prediction():
    """k = 1 carries no exchange and the whole step: the simulation must reproduce `predict` exactly, or the
    scaling curve would start from a different number than the single-GPU prediction beside it."""
    points = [_point(2, 3, 2, 1.3, 7), _point(8, 5, 8, 1.7, 60), _point(64, 5, 64, 2.6, 500)]
    sim = lab.simulate_parallelism(points, "a100-80gb", "7B")
    first = sim["curve"][0]
    chosen = next(
        p for p in points if (p["window"], p["ngram"], p["guess"]) == (first["window"], first["ngram"], first["guess"])
    )
    plain = lab.predict(chosen, "a100-80gb", "7B")
    assert first["predicted_speedup"] == plain["predicted_speedup"]
    assert first["predicted_speedup_range"] == plain["predicted_speedup_range"]
    assert first["kind"] == "model" and all(c["kind"] == "simulation" for c in sim["curve"][1:])
    assert [c["devices"] for c in sim["curve"]] == list(range(1, 9))


def test_parallelism_pays_for_a_wide_window():
    """W = G = 64, N = 5 feeds about 500 tokens: on one A100 a 7B forward is then compute-bound and costs several
    one-token steps; dealt over 8 devices each carries about 65 tokens and the step costs about one, plus the
    exchange. The speed-up must grow, and the 8-device step must carry its exchange."""
    wide = [_point(64, 5, 64, 2.6, 500)]
    curve = lab.simulate_parallelism(wide, "a100-80gb", "7B", devices_list=[1, 8])["curve"]
    assert curve[0]["step_cost"] > 3 and curve[1]["step_cost"] < 1.1
    assert curve[1]["predicted_speedup"] > 2 * curve[0]["predicted_speedup"]
    assert curve[1]["comm_s"] == pytest.approx(15e-6, rel=0.01) and curve[0]["comm_s"] == 0


def test_busiest_device_share():
    """W=7, G=7, N=4 feeds 43 tokens. Over 2 devices the columns go 0-3 and 4-6: the window costs 4 + 2 x 4 = 12
    and 7 + 2 x 3 = 13 tokens (the second device also feeds level 0's columns 0-3), with x 13 and 14; the seven
    candidates of 3 go to the lighter device in turn (4 and 3), so the first feeds 13 + 12 = 25 and the second
    14 + 9 = 23. At N = 2 (15 tokens) the first device's 5 against the second's 8 take candidates 0-3, then they
    alternate: 10 and 10. One device carries all of them."""
    assert lab.tokens_per_device(43, 7, 7, 2) == pytest.approx(25)
    assert lab.tokens_per_device(43, 7, 7, 1) == 43
    assert list(lab.tokens_per_device(np.array([43.0, 15.0]), 7, 7, 2)) == pytest.approx([25, 10])


def test_cli_lab_prints_the_contract(capsys):
    assert cli.main(["lab", "--run", str(RUN), "--device", "h200", "--model-size", "1.7B", "--json"]) == 0
    assert CONTRACT <= set(json.loads(capsys.readouterr().out))
    assert (
        cli.main(["lab", "--run", str(RUN), "--device", "a100-80gb", "--model-size", "7B", "--batch", "64", "--json"])
        == 0
    )
    crowded = json.loads(capsys.readouterr().out)
    assert crowded["batch"] == 64 and crowded["predicted_speedup"] < 1
    assert cli.main(["lab", "--run", str(RUN), "--device", "a100-80gb", "--model-size", "7B", "--devices", "4"]) == 0
    assert "Simulation" in capsys.readouterr().out
    assert cli.main(["lab", "--run", str(RUN), "--device", "cpu", "--model-size", "7B"]) == 2
    assert "135M" in capsys.readouterr().err


GRID_DEVICES = ("a100-80gb", "h100", "h200")
GRID_SIZES = ("135M", "7B", "13B", "34B", "70B")
GRID_BATCHES = (1, 4, 16, 64)


def test_every_reason_the_lab_chooses_holds_over_a_grid():
    """Reasons are chosen by predicates over the model's numbers; walked over devices x model sizes x batches x swept
    settings, each chosen word is checked against the roofline's own terms: the bound named is the largest of the
    forward's memory, compute and overhead times and agrees with the crossover (compute past it, not before);
    "does not fit" is said exactly where weights and cache pass the device's memory; a prediction never passes the
    compression it starts from; the reason lookahead stops paying at its break-even batch names each forward's
    regime at that batch; and the parallelism words (compute-bound on one device: dealing the step out pays; else
    more devices change little) match the simulated curve."""
    from lade_core.measure.autoconfig import load_sweeps

    points = [p for p in load_sweeps() if p["pool"] == "prompt" and p["ngram"] in (2, 4, 5)]
    for device in GRID_DEVICES:
        acc = roofline.accelerator(device)
        for size in GRID_SIZES:
            model = roofline.model_shape(size)
            for batch in GRID_BATCHES:
                cross = roofline.crossover_tokens(device, size, lab.CONTEXT, batch=batch)
                for p in points:
                    fed = p["mean_tokens_fed"]
                    f = roofline.forward_seconds(device, size, fed, lab.CONTEXT, batch=batch)
                    terms = {"memory": f["memory_s"], "compute": f["compute_s"], "overhead": f["overhead_s"]}
                    assert f["bound"] == max(terms, key=terms.get)
                    if f["bound"] == "compute" and cross is not None:
                        assert fed >= cross - 1e-9, (device, size, batch, fed, cross)
                    if f["bound"] == "memory" and cross is not None and f["memory_s"] > f["overhead_s"]:
                        assert fed <= cross + 1e-9, (device, size, batch, fed, cross)
                    r = lab.predict(p, device, size, batch=batch)
                    weights = model.params * roofline.ASSUME.bytes_per_value
                    fits = r["assumptions"]["fits_in_memory"]
                    if weights > acc.memory:
                        assert fits is False, (device, size, batch)
                    elif weights < acc.memory / 2 and batch == 1:  # the weights and one short cache fit
                        assert fits is True, (device, size)
                    assert r["predicted_speedup"] <= p["compression"] + 1e-9
            for p in points[:: max(1, len(points) // 4)]:
                t = lab.target(device, size, lab.CONTEXT)
                even = lab.break_even_batch(p, p["mean_tokens_fed"], p["compression"], [p["compression"]] * 2, t)
                why = even["why"]
                if why is None:
                    continue
                greedy = roofline.forward_seconds(device, size, 1, lab.CONTEXT, batch=why["batch"])["bound"]
                wide = roofline.forward_seconds(device, size, p["mean_tokens_fed"], lab.CONTEXT, batch=why["batch"])
                expected = (
                    "both compute"
                    if greedy == "compute"
                    else "lookahead crosses"
                    if wide["bound"] == "compute"
                    else "neither compute"
                )
                assert why["reason"] == expected, (device, size, p["window"], why)
    for device in GRID_DEVICES:
        for size in ("7B", "13B"):
            for p in points:
                rows = [lab.predict(p, device, size, k) for k in (1, 8)]
                if not rows[0]["assumptions"]["fits_in_memory"]:
                    continue
                one, eight = (r["predicted_speedup"] for r in rows)
                if rows[0]["breakdown"]["bound"] == "compute":  # "dealing ... out over devices is what pays"
                    assert eight > one, (device, size, p["window"], p["ngram"], one, eight)
                else:  # "more devices change little"
                    assert eight <= one * 1.1, (device, size, p["window"], p["ngram"], one, eight)
