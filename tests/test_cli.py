"""The command line as a user runs it: answers, summaries, bench JSON, traces, the lab's JSON contract, the method
choices and seeds, and one-line errors. Each command runs in this process (`lade_core.cli.main`, the engine's
commands; `app.cli.main`, those plus the app's), with the session's model standing in for a load of the default;
one subprocess per entry point (`python -m lade_core`, `python -m app`, the `lade` script) shows each starts. Would
catch a subcommand that drifts from its documented arguments or output, an error that ends in a traceback, or the
engine's command line importing the app."""

import json
import os
import shutil
import subprocess
import sys
from types import SimpleNamespace

import pytest

from lade_core.paths import ROOT, RUNS


def subprocess_cli(*args, script=False, app=False):
    """`python -m lade_core`, `python -m app` or the `lade` script, as a separate process."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    command = (
        [shutil.which("lade") or str(ROOT / ".venv" / "bin" / "lade")]
        if script
        else [sys.executable, "-m", "app" if app else "lade_core"]
    )
    return subprocess.run([*command, *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)


@pytest.fixture
def cli(capsys, monkeypatch, request):
    """cli(*args, app=False): one command in this process, as (returncode, stdout, stderr). A load of the default
    model in fp32 gives the session's (loaded once); any other load is real."""
    from lade_core import checkpoint

    load = checkpoint.load_model

    def session_model(model=None, device="auto", dtype=None, half_on_cpu=False, cpu_kernels="auto"):
        if model is None and device in ("auto", "cpu") and dtype in (None, "float32") and cpu_kernels == "auto":
            return request.getfixturevalue("lm")
        return load(model, device, dtype, half_on_cpu, cpu_kernels)

    monkeypatch.setattr(checkpoint, "load_model", session_model)

    def run(*args, app=False):
        from app.cli import main as app_main
        from lade_core.cli import main as engine_main

        capsys.readouterr()
        try:
            code = (app_main if app else engine_main)(list(args))
        except SystemExit as exit_:  # argparse's own refusals
            code = exit_.code
        out, err = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out, stderr=err)

    return run


@pytest.mark.model
def test_generate_streams_the_answer_and_a_summary(cli, lm):
    from lade_core import autoregressive_generate

    prompt = "Write a Python function that adds two numbers."
    out = cli("generate", "--prompt", prompt, "--max-new-tokens", "24", "-W", "5", "-N", "3", "-G", "5")
    assert out.returncode == 0, out.stderr
    expected = lm.decode(autoregressive_generate(lm, lm.encode_prompt(prompt), 24).tokens)
    assert expected in out.stdout
    assert "lookahead : 24 tokens" in out.stdout and "greedy    : 24 tokens, 24 steps" in out.stdout
    assert "identical to greedy" in out.stdout and "tokens/s" in out.stdout


@pytest.mark.model
def test_jacobi_method_is_selectable_and_exact(cli, lm):
    out = cli("generate", "--method", "jacobi", "-W", "4", "--prompt", "Count to five.", "--max-new-tokens", "16")
    assert out.returncode == 0, out.stderr
    assert "[jacobi W=4" in out.stdout and "jacobi    : 16 tokens" in out.stdout and "identical to greedy" in out.stdout


@pytest.mark.model
@pytest.mark.parametrize("method, extra", [("pld", []), ("early-exit", ["--exit-layer", "6", "-K", "4"])])
def test_speculative_methods_are_selectable_and_exact(cli, lm, method, extra):
    out = cli(
        "generate",
        "--method",
        method,
        *extra,
        "--prompt",
        "Write a Python function that adds two numbers.",
        "--max-new-tokens",
        "16",
    )
    assert out.returncode == 0, out.stderr
    assert f"[{method} " in out.stdout and f"{method:10s}: 16 tokens" in out.stdout
    assert f"{method} output identical to greedy" in out.stdout


def test_bad_input_gives_one_line_and_status_2(cli):
    for args, needle in [
        (["generate", "--prompt", "  "], "prompt is empty"),
        (["generate", "--prompt", "hi", "--window", "0"], "window (W) must be between 1"),
        (["generate", "--prompt", "hi", "--ngram", "1"], "ngram (N) must be between 2"),
        (["generate", "--prompt", "hi", "--pool-policy", "prompt", "--no-pool-from-prompt"], "contradicts"),
        (["lab", "--run", str(RUNS / "code-class-W7N4G7.json"), "--device", "tpu", "--model-size", "7B"], "error:"),
        (["sweep", "--windows", "0"], "window (W) must be between 1"),
        (["generate", "--prompt", "hi", "--method", "draft"], "needs a draft model: pass --draft-model"),
        (["generate", "--prompt", "hi", "--method", "pld", "-K", "0"], "draft tokens (K) must be between 1 and 64"),
    ]:
        out = cli(*args)
        assert out.returncode == 2, (args, out.stderr)
        assert needle in out.stderr and "Traceback" not in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1
    out = cli("export-html", "/nonexistent.json", "/tmp/x.html", app=True)
    assert out.returncode == 2 and "error:" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_the_lade_script_is_the_engine_command_line_plus_the_apps():  # the one subprocess test per entry point
    """`pip install -e .` puts `lade` on the venv's PATH; it is `python -m app`: the engine's commands
    (`python -m lade_core`) plus export-html, which only the app has."""
    engine, app = subprocess_cli("--help"), subprocess_cli("--help", app=True)
    script = subprocess_cli("--help", script=True)
    assert engine.returncode == app.returncode == script.returncode == 0
    assert "export-html" in app.stdout and "export-html" not in engine.stdout and script.stdout == app.stdout
    for command in ("generate", "trace", "bench", "costcurve", "sweep", "lab"):
        assert command in engine.stdout and command in app.stdout


def test_method_choices_and_seeds(cli):
    """--method takes the five methods; --seed sets both seeds unless one is given by its own name."""
    from lade_core.cli import build_parser
    from lade_core.cli_options import settings

    def made(*flags):
        return settings(build_parser().parse_args(["bench", *flags]))

    for method in ("lookahead", "jacobi", "pld", "early-exit"):
        assert made("--method", method)[0].method == method
    assert made("--method", "draft", "--draft-model", "x")[0].draft.draft_model == "x"
    spec, sampling, _ = made("--seed", "5")
    assert (sampling.sample_seed, spec.config.window_seed) == (5, 5)
    spec, sampling, _ = made("--seed", "5", "--window-seed", "2")
    assert (sampling.sample_seed, spec.config.window_seed) == (5, 2)
    spec, sampling, _ = made("--sample-seed", "3")
    assert (sampling.sample_seed, spec.config.window_seed) == (3, 0)
    spec = made("--method", "pld", "-K", "6", "--match", "3")[0]
    assert (spec.draft.tokens, spec.draft.match) == (6, 3)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["bench", "--method", "medusa"])
    assert "sets both --sample-seed and --window-seed" in cli("bench", "--help").stdout


def test_lab_prints_its_json_contract(cli):
    """The interface outside checks rely on: one JSON object with the prediction, its range and its kind."""
    for device, size, k, kind in (
        ("h100", "7B", 1, "model"),
        ("a100-80gb", "13B", 4, "simulation"),
        ("cpu", "135M", 1, "model"),
    ):
        out = cli(
            "lab",
            "--run",
            str(RUNS / "code-class-W7N4G7.json"),
            "--device",
            device,
            "--model-size",
            size,
            "--devices",
            str(k),
            "--json",
        )
        assert out.returncode == 0, out.stderr
        doc = json.loads(out.stdout)
        assert {
            "predicted_speedup",
            "predicted_speedup_range",
            "compression",
            "device",
            "model_size",
            "devices",
            "assumptions",
            "kind",
        } <= set(doc)
        low, high = doc["predicted_speedup_range"]
        assert low <= doc["predicted_speedup"] <= high and doc["kind"] == kind and doc["devices"] == k


EARLY_EXIT = ["--method", "early-exit", "--exit-layer", "8", "-K", "3"]
BENCH_VARIANTS = [
    [],
    ["--method", "jacobi"],
    ["--method", "pld"],
    EARLY_EXIT,
    ["--adaptive"],
    ["--pool-from-prompt"],
    ["--pool-policy", "output"],
]


@pytest.mark.model
def test_bench_writes_the_documented_json(cli, tmp_path, lm):
    """Lookahead with the output's pool and a speculative method (each a model-loading command); every option in
    `make test-soak`."""
    _bench_writes_the_documented_json(cli, tmp_path, [EARLY_EXIT, ["--pool-policy", "output"]])


@pytest.mark.model
@pytest.mark.soak
def test_bench_writes_the_documented_json_for_every_method_and_option(cli, tmp_path, lm):
    _bench_writes_the_documented_json(cli, tmp_path, BENCH_VARIANTS)


def _bench_writes_the_documented_json(cli, tmp_path, variants):
    prompts = tmp_path / "p.jsonl"
    prompts.write_text(json.dumps({"id": "fib", "kind": "code", "prompt": "Write fib(n) in Python."}) + "\n")
    for extra in variants:
        out = cli(
            "bench",
            "--prompts",
            str(prompts),
            "--max-new-tokens",
            "16",
            "-W",
            "3",
            "-N",
            "3",
            "-G",
            "3",
            "--json",
            str(tmp_path / "b.json"),
            *extra,
        )
        assert out.returncode == 0, (extra, out.stderr)
        doc = json.loads((tmp_path / "b.json").read_text())
        assert {"model", "device", "dtype", "config", "prompts", "summary", "method", "command"} <= set(doc)
        row = doc["prompts"][0]
        for key in [
            "id",
            "new_tokens",
            "steps",
            "compression",
            "exact",
            "first_divergence",
            "lookahead_s",
            "greedy_s",
            "forward_s",
            "overhead_s",
            "draft_s",
            "ms_per_token",
            "sizes",
            "metrics",
        ]:
            assert key in row
        assert {"mean_acceptance_length", "per_position_acceptance", "drafted_per_step"} <= set(row["metrics"])
        assert doc["summary"]["by_class"]["code"]["prompts"] == 1
        assert row["exact"] and row["new_tokens"] == 16 and row["compression"] == 16 / row["steps"]
        assert {"compression_mean", "speedup_median", "all_exact"} <= set(doc["summary"])
    assert doc["config"]["pool"] == "output"


@pytest.mark.model
def test_trace_command_writes_a_loadable_run(cli, tmp_path, lm):
    from lade_core import parse_run

    out = cli(
        "trace",
        "--prompt",
        "Count to five.",
        "--max-new-tokens",
        "12",
        "--out",
        str(tmp_path / "r.json"),
        "--also",
        "pld",
        "--also",
        "jacobi",
        "-W",
        "4",
    )
    assert out.returncode == 0, out.stderr
    run = parse_run((tmp_path / "r.json").read_text())
    assert run.parallel.tokens == run.baseline.tokens and len(run.parallel.tokens) == 12
    assert [lane.method for lane in run.lanes] == ["pld", "jacobi"]
    assert all(lane.run.tokens == run.baseline.tokens for lane in run.lanes)


def test_pool_flags_map_to_policies():
    """--pool-from-prompt (kept from earlier versions) is the prompt policy; --no-pool-from-prompt the paper's."""
    from lade_core.cli import build_parser
    from lade_core.cli_options import settings

    def config(*flags):
        return settings(build_parser().parse_args(["bench", *flags]))[0].config

    assert config().pool == "prompt" and config("--no-pool-from-prompt").pool == "paper"
    assert config("--pool-from-prompt").pool == "prompt" and config("--pool-policy", "output").pool == "output"
    assert config("--method", "jacobi", "-W", "5") == config("--method", "jacobi", "-W", "5", "-N", "6")
    assert (config("--method", "jacobi", "-W", "5").ngram, config("--method", "jacobi").guess) == (2, 0)


@pytest.mark.model
def test_numerics_writes_its_json_contract(cli, tmp_path, lm):
    """`lade numerics --dtype float32 --json PATH`: per prompt `identical` (bool), `first_divergence` and
    `logit_gap` (None where the texts agree); in fp32 lookahead is greedy's text."""
    prompts = tmp_path / "p.jsonl"
    prompts.write_text(json.dumps({"id": "fib", "kind": "code", "prompt": "Write fib(n) in Python."}) + "\n")
    out = cli(
        "numerics",
        "--dtype",
        "float32",
        "--max-new-tokens",
        "12",
        "--prompts",
        str(prompts),
        "--json",
        str(tmp_path / "n.json"),
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads((tmp_path / "n.json").read_text())
    (row,) = doc["prompts"]
    assert row["identical"] is True and row["first_divergence"] is None and row["logit_gap"] is None
    assert doc["dtype"] == "float32" and doc["command"].startswith("python -m lade_core numerics")
    assert "fib" in out.stdout and "identical to greedy on 1/1" in out.stdout


def test_measurements_write_to_out_unless_given_a_path(tmp_path, monkeypatch):
    """`lade numerics --json` with no path overwrote assets/bench/numerics-<dtype>.json, which chapter 5 quotes, and
    `costcurve`, `costcurve --batch` and `sweep` overwrote the shipped curves and sweeps: with no path each writes
    under out/ and nothing under assets/ changes (the measurements themselves are stubbed: this is the wiring)."""
    from types import SimpleNamespace

    from lade_core import checkpoint, paths
    from lade_core.cli import main
    from lade_core.measure import batched, calibrate, costcurve, numerics, sweep

    lm = SimpleNamespace(name="stub", device="cpu", dtype="torch.float32", kernels="stock")
    curve = {"greedy_s": 0.01, "points": [{"tokens": 1, "seconds": 0.01}], "threads": 1}
    monkeypatch.setattr(paths, "OUT", tmp_path / "out")
    monkeypatch.setattr(checkpoint, "load_model", lambda *a, **k: lm)
    monkeypatch.setattr(
        numerics,
        "numerics",
        lambda *a, **k: {"summary": {"identical": 0, "prompts": 0, "batch_shape_identical": 0}, "prompts": []},
    )
    monkeypatch.setattr(sweep, "sweep", lambda *a, **k: {"points": []})
    monkeypatch.setattr(costcurve, "measure_cost_curve", lambda *a, **k: dict(curve))
    monkeypatch.setattr(
        batched,
        "measure_batched_curve",
        lambda *a, **k: {
            "threads": 1,
            "clock": "wall",
            "curves": [{"batch": 1, "greedy_s": 0.01, "points": [{"tokens": 1, "relative": 1.0}]}],
        },
    )
    monkeypatch.setattr(calibrate, "save_batched", lambda *a, **k: "the cache")
    before = {p: p.read_bytes() for p in paths.ASSETS.rglob("*.json")}
    for argv in (
        ["numerics", "--json"],
        ["numerics", "--dtype", "bfloat16", "--json"],
        ["costcurve"],
        ["costcurve", "--batch", "1,2"],
        ["sweep", "--windows", "2", "--ngrams", "3"],
    ):
        assert main(argv) == 0, argv
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "costcurve-cpu-batched.json",
        "costcurve-cpu.json",
        "numerics-bfloat16.json",
        "numerics-float32.json",
        "sweep-paper.json",
    ]
    assert {p: p.read_bytes() for p in paths.ASSETS.rglob("*.json")} == before


def test_auto_runs_what_its_duel_chose_with_this_machines_step_cost(monkeypatch):
    """--auto takes Auto's choice as it is (adaptive sizes too, within its W, N, G) and the curve it was chosen on
    becomes the run's step cost; --adaptive makes a swept choice's W, N, G the bounds; --pool-policy, the tree and
    the copied candidates are passed on, so that the duel runs what will run."""
    from lade_core.cli import build_parser
    from lade_core.cli_options import settings, with_step_cost
    from lade_core.measure import autoconfig

    curve = {"greedy_s": 0.02, "points": [{"tokens": 1, "seconds": 0.02}, {"tokens": 8, "seconds": 0.04}]}
    asked = []

    def choose(lm, curve_, pool=None, **settings):
        asked.append((pool, settings))
        return {"window": 7, "ngram": 4, "guess": 7, "pool": pool or "prompt", "adaptive": picks_adaptive}

    monkeypatch.setattr(autoconfig, "curve_for", lambda lm: curve)
    monkeypatch.setattr(autoconfig, "choose", choose)
    picks_adaptive = True
    spec = with_step_cost(settings(build_parser().parse_args(["bench", "--auto"]), lm="lm")[0], "lm")
    assert spec.config.adaptive and spec.step_cost(8) == pytest.approx(2.0)
    picks_adaptive = False
    spec = with_step_cost(settings(build_parser().parse_args(["bench", "--auto"]), lm="lm")[0], "lm")
    assert not spec.config.adaptive and spec.step_cost is None
    args = build_parser().parse_args(["bench", "--auto", "--adaptive", "--pool-policy", "paper", "--lookup", "4"])
    config = settings(args, lm="lm")[0].config
    assert config.adaptive and config.pool == "paper" and config.lookup == 4
    assert asked[-1] == ("paper", {"tree": True, "lookup": 4})  # the duel runs what will run
