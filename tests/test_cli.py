"""The command line, run as a user would: answers, summaries, bench JSON, traces, and one-line errors."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cli(*args, timeout=600):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "lade_core", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=timeout)


def test_generate_streams_the_answer_and_a_summary(lm):
    from lade_core import greedy_generate

    prompt = "Write a Python function that adds two numbers."
    out = cli("generate", "--prompt", prompt, "--max-new-tokens", "24", "-W", "5", "-N", "3", "-G", "5")
    assert out.returncode == 0, out.stderr
    expected = lm.decode(greedy_generate(lm, lm.encode_prompt(prompt), 24).tokens)
    assert expected in out.stdout
    assert "lookahead: 24 tokens" in out.stdout and "greedy   : 24 tokens, 24 steps" in out.stdout
    assert "identical to greedy" in out.stdout and "tokens/s" in out.stdout


def test_bad_input_gives_one_line_and_status_2():
    for args, needle in [
        (["generate", "--prompt", "  "], "prompt is empty"),
        (["generate", "--prompt", "hi", "--window", "0"], "window (W) must be between 1"),
        (["generate", "--prompt", "hi", "--ngram", "1"], "ngram (N) must be between 2"),
        (["generate", "--prompt", "hi", "--max-new-tokens", "0"], "max_new_tokens"),
        (["export-html", "/nonexistent.json", "/tmp/x.html"], "error:"),
    ]:
        out = cli(*args)
        assert out.returncode == 2, (args, out.stderr)
        assert needle in out.stderr and "Traceback" not in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1


def test_bench_writes_the_documented_json(tmp_path):
    prompts = tmp_path / "p.jsonl"
    prompts.write_text(json.dumps({"id": "fib", "kind": "code", "prompt": "Write fib(n) in Python."}) + "\n")
    out = cli("bench", "--prompts", str(prompts), "--max-new-tokens", "16", "-W", "3", "-N", "3", "-G", "3",
              "--json", str(tmp_path / "b.json"))
    assert out.returncode == 0, out.stderr
    doc = json.loads((tmp_path / "b.json").read_text())
    assert {"model", "device", "dtype", "config", "prompts", "summary"} <= set(doc)
    row = doc["prompts"][0]
    for key in ["id", "new_tokens", "steps", "compression", "exact", "first_divergence", "lookahead_s", "greedy_s",
                "forward_s", "overhead_s"]:
        assert key in row
    assert row["exact"] and row["new_tokens"] == 16 and row["compression"] == 16 / row["steps"]
    assert {"compression_mean", "speedup_median", "all_exact"} <= set(doc["summary"])


def test_trace_command_writes_a_loadable_run(tmp_path):
    from lade_core import parse_run

    out = cli("trace", "--prompt", "Count to five.", "--max-new-tokens", "12", "--out", str(tmp_path / "r.json"))
    assert out.returncode == 0, out.stderr
    run = parse_run((tmp_path / "r.json").read_text())
    assert run.lookahead.tokens == run.greedy.tokens and len(run.lookahead.tokens) == 12


def test_auto_and_pool_seeding_flags(lm):
    """--pool-from-prompt / --no-pool-from-prompt set the seeding; with --auto, leaving both out lets Auto decide."""
    from lade_core.autoconfig import predict
    from lade_core.cli import _settings, build_parser

    def config(*flags):
        return _settings(build_parser().parse_args(["bench", *flags]), lm)[0]

    assert not config().pool_from_prompt and not config("--no-pool-from-prompt").pool_from_prompt
    assert config("--pool-from-prompt").pool_from_prompt
    for flags, seeded in ((("--auto",), None), (("--auto", "--pool-from-prompt"), True),
                          (("--auto", "--no-pool-from-prompt"), False)):
        best, got = predict(lm, seeded), config(*flags)
        assert (got.window, got.ngram, got.guess, got.pool_from_prompt) == (
            best["window"], best["ngram"], best["guess"], best["pool_from_prompt"])
        assert seeded is None or got.pool_from_prompt == seeded
