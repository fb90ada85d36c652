"""The speed lab: the roofline pinned to hand-worked numbers, the simulation's one-device case equal to the plain
prediction, the output contract on a recorded run, and the paper's figures kept honest. No model, no server."""

import json

import pytest

from lade_core import cli
from lade_core.load import parse_run
from lade_core.measure import lab

from lade_core.paths import RUNS

RUN = RUNS / "code-class-W7N4G7.json"
CONTRACT = {"predicted_speedup", "predicted_speedup_range", "compression", "device", "model_size", "devices",
            "assumptions", "kind"}


@pytest.fixture(scope="module")
def run():
    return parse_run(RUN.read_bytes())


def _point(w, n, g, compression, fed, by_prompt=None):
    return {"window": w, "ngram": n, "guess": g, "compression": compression, "mean_tokens_fed": fed,
            "compression_by_prompt": by_prompt or {"a": compression * 0.8, "b": compression, "c": compression * 1.2}}


def test_published_shapes_give_published_parameter_counts():
    """A typo in a layer count or hidden size would shift every prediction for that size; the derived counts must
    equal the published totals."""
    assert lab.model_shape("7B").params == 6_738_415_616
    assert lab.model_shape("70B").params == 68_976_648_192
    assert lab.model_shape("34B").params == 33_743_970_304
    assert lab.model_shape("135M").params == 134_515_008


def test_model_sizes_parse_as_written():
    assert lab.model_shape("1.7b").name == "SmolLM2-1.7B"
    assert lab.model_shape(" 135M ").name == "SmolLM2-135M"
    assert lab.model_shape("13B").layers == 40


def test_7b_on_a100_one_token_is_memory_bound():
    """Llama-2-7B in bf16 on an A100 80GB, one token, empty cache:
    weights 6,738,415,616 * 2 B = 13,476,831,232 B at 2.039e12 * 0.7 = 1.4273e12 B/s -> 9.4422 ms;
    compute 2 * 6,738,415,616 FLOP at 312e12 * 0.5 = 1.56e14 FLOP/s -> 0.0864 ms;
    overhead 32 layers * 20 us = 0.64 ms; total max(9.4422, 0.0864) + 0.64 = 10.0822 ms, memory-bound."""
    f = lab.forward_seconds("a100-80gb", "7B", 1, 0)
    assert f["memory_s"] == pytest.approx(9.4422e-3, rel=1e-4)
    assert f["compute_s"] == pytest.approx(0.08639e-3, rel=1e-3)
    assert f["seconds"] == pytest.approx(10.0822e-3, rel=1e-4)
    assert f["bound"] == "memory"


def test_7b_on_a100_at_the_papers_7b_setting_turns_compute_bound():
    """W=15, N=5, G=15 feeds 1 + 30 * 4 = 121 tokens: compute 121 * 13,476,831,232 FLOP / 1.56e14 = 10.4532 ms now
    exceeds the 9.4422 ms of memory; total 10.4532 + 0.64 = 11.0932 ms, 1.1003x the one-token forward."""
    f = lab.forward_seconds("a100-80gb", "7B", 121, 0)
    assert f["compute_s"] == pytest.approx(10.4532e-3, rel=1e-4)
    assert f["seconds"] == pytest.approx(11.0932e-3, rel=1e-4)
    assert f["bound"] == "compute"
    relative = lab.cost_curve("a100-80gb", "7B", [1, 121], context=0)[1]["relative"]
    assert relative == pytest.approx(1.1003, rel=1e-4)


def test_135m_on_h100_is_launch_bound_and_counts_the_kv_cache():
    """SmolLM2-135M on an H100, one token over 512 cached positions:
    weights 134,515,008 * 2 B = 269,030,016 B at 3.35e12 * 0.7 = 2.345e12 B/s -> 0.114725 ms;
    KV cache 2 * 30 layers * 3 heads * 64 * 512 positions * 2 B = 11,796,480 B -> 0.005030 ms (the attention term);
    overhead 30 * 20 us = 0.6 ms dwarfs both: total 0.119755 + 0.6 = 0.719755 ms."""
    f = lab.forward_seconds("h100", "135M", 1, 512)
    assert f["attention_s"] == pytest.approx(0.005030e-3, rel=1e-3)
    assert f["memory_s"] == pytest.approx(0.119755e-3, rel=1e-4)
    assert f["seconds"] == pytest.approx(0.719755e-3, rel=1e-4)
    assert f["bound"] == "overhead"


def test_busiest_device_share():
    """W=7, G=7, N=4 feeds 43 tokens; over 2 devices the busiest carries ceil(7/2) + ceil(7/2) = 8 of the 14 rows:
    1 + 42 * 8 / 14 = 25 tokens. One device carries all of them."""
    assert lab.tokens_per_device(43, 7, 7, 2) == pytest.approx(25)
    assert lab.tokens_per_device(43, 7, 7, 1) == 43


def test_predict_run_keeps_the_contract(run):
    """The JSON `lade lab` prints is read by outside checks: these fields, a range around the prediction, a kind
    that never says measured."""
    result = lab.predict_run(run, "h100", "7B")
    assert CONTRACT <= set(result)
    low, high = result["predicted_speedup_range"]
    assert low <= result["predicted_speedup"] <= high
    assert result["compression"] == pytest.approx(run.parallel.compression)
    assert (result["device"], result["model_size"], result["devices"], result["kind"]) == ("h100", "7B", 1, "model")
    assert {"bandwidth", "peak_flops", "precision", "efficiency", "overhead", "context"} <= set(result["assumptions"])
    json.dumps(result)
    assert lab.predict_run(run, "h100", "7B") == result  # the bootstrap is seeded


def test_predict_run_on_this_cpu_uses_the_measured_curve(run):
    result = lab.predict_run(run, "cpu", "135M")
    assert result["breakdown"]["bound"] == "measured" and result["kind"] == "model"
    assert result["step_cost"] > 1.2  # a 31-token forward costs this CPU clearly more than a 1-token one
    low, high = result["predicted_speedup_range"]
    assert low <= result["predicted_speedup"] <= high


def test_kind_is_never_measured(run):
    points = [_point(4, 4, 4, 1.5, 20), _point(16, 5, 16, 1.9, 100)]
    kinds = {lab.predict_run(run, "h200", "13B", k)["kind"] for k in (1, 4)}
    kinds |= {lab.predict_run(run, "cpu", "135M")["kind"]}
    kinds |= {p["kind"] for p in lab.simulate_parallelism(points, "h100", "7B")["curve"]}
    kinds |= {r.get("kind", "model") for r in lab.paper_comparison(points=points)}
    assert kinds == {"model", "simulation"}


@pytest.mark.parametrize("device, size, devices, message", [
    ("tpu-v5", "7B", 1, "unknown device"),
    ("h100", "8B", 1, "no model of size"),
    ("h100", "seven", 1, "write it like"),
    ("cpu", "7B", 1, "SmolLM2-135M only"),
    ("cpu", "135M", 2, "GPUs"),
    ("h100", "7B", 0, "at least 1"),
])
def test_bad_device_or_size_says_what_is_wrong(run, device, size, devices, message):
    with pytest.raises(ValueError, match=message):
        lab.predict_run(run, device, size, devices)


def test_simulation_on_one_device_is_the_plain_prediction():
    """k = 1 carries no exchange and the whole step: the simulation must reproduce `predict` exactly, or the
    scaling curve would start from a different number than the single-GPU prediction beside it."""
    points = [_point(2, 3, 2, 1.3, 7), _point(8, 5, 8, 1.7, 60), _point(64, 5, 64, 2.6, 500)]
    sim = lab.simulate_parallelism(points, "a100-80gb", "7B")
    first = sim["curve"][0]
    chosen = next(p for p in points if (p["window"], p["ngram"], p["guess"]) == (first["window"], first["ngram"],
                                                                                 first["guess"]))
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


def test_paper_rows_are_sourced_and_single_device():
    """Every measured row names its source and figure; no single-device row may carry the multi-GPU 4x (the blog's
    single-GPU range is 1.5x to 2.3x)."""
    paper = lab.paper_figures()
    rows = [paper["rows_defaults"] | r for r in paper["rows"]]
    assert rows and all(r["source"].startswith("https://") and r["figure"] for r in rows)
    assert all(r["devices"] == 1 and 1.0 < r["speedup"] <= 2.3 for r in rows)
    assert paper["missing"]


def test_paper_comparison_sets_prediction_beside_measurement():
    """With compression 2.0 at the 7B setting (W=15, N=5, G=15) and an empty cache, the prediction is
    2.0 / 1.1003 = 1.8177x and the gap for MT-Bench 7B (measured 1.64x) is 1.64 / 1.8177 = 0.9022. The 70B row has
    no W, N, G in the sources, so no prediction."""
    given = {(15, 5, 15): 2.0, (10, 5, 10): 2.0, (7, 5, 7): 2.0}
    rows = lab.paper_comparison(given, points=[], context=0)
    mt7 = next(r for r in rows if r["dataset"] == "MT-Bench" and r["model_size"] == "7B")
    assert mt7["predicted_speedup"] == pytest.approx(1.8177, rel=1e-4)
    assert mt7["gap"] == pytest.approx(0.9022, rel=1e-3)
    assert mt7["compression_source"] == "given"
    mt70 = next(r for r in rows if r["model_size"] == "70B")
    assert mt70["predicted_speedup"] is None and mt70["gap"] is None


def test_cli_lab_prints_the_contract(capsys):
    assert cli.main(["lab", "--run", str(RUN), "--device", "h200", "--model-size", "1.7B", "--json"]) == 0
    assert CONTRACT <= set(json.loads(capsys.readouterr().out))
    assert cli.main(["lab", "--run", str(RUN), "--device", "a100-80gb", "--model-size", "7B", "--devices", "4"]) == 0
    assert "Simulation" in capsys.readouterr().out
    assert cli.main(["lab", "--run", str(RUN), "--device", "cpu", "--model-size", "7B"]) == 2
    assert "135M" in capsys.readouterr().err
