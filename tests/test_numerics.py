"""Numerics: where two decodings part, read by hand; lookahead identical to greedy in fp32 on every benchmark prompt;
and a bf16 divergence on file that reproduces, same position and same gap, when it is run again."""

import json
import math

import pytest
import torch

from lade_core import LookaheadConfig, greedy_generate
from lade_core.measure import numerics
from lade_core.paths import BENCH, ROOT

SHIPPED = {d: BENCH / f"numerics-{d}.json" for d in ("float32", "bfloat16")}


def test_divergence_is_read_at_the_first_differing_token():
    """Greedy 1 2 3 4 against 1 2 9 4: they part at position 2, where greedy's top two logits were 0.3 apart; one
    of the four gaps (0.1) is smaller, so a quarter of the positions were closer calls."""
    d = numerics._divergence([1, 2, 3, 4], [1, 2, 9, 4], [0.5, 0.1, 0.3, 2.0])
    assert d == {"identical": False, "first_divergence": 2, "logit_gap": 0.3, "gap_percentile": 0.25}
    assert numerics._divergence([1, 2], [1, 2], [0.5, 0.1])["identical"] is True


def test_a_longer_output_diverges_where_greedy_stopped():
    """Greedy stopped at EOS after two tokens and the other went on: they part at position 2, where greedy has no
    logits of its own, so no gap is claimed."""
    d = numerics._divergence([1, 2], [1, 2, 5], [0.5, 0.1])
    assert (d["first_divergence"], d["logit_gap"], d["gap_percentile"]) == (2, None, None)


def test_what_benchmarks_says_of_the_formats_is_what_torch_stores():
    """bf16 stores 7 mantissa bits (8 significant), fp16 10: three more, which BENCHMARKS.md says (it said two)."""
    stored = {d: -round(math.log2(torch.finfo(d).eps)) for d in (torch.bfloat16, torch.float16)}
    assert stored == {torch.bfloat16: 7, torch.float16: 10}
    text = " ".join((ROOT / "BENCHMARKS.md").read_text(encoding="utf-8").split())
    assert "bf16 keeps 8 bits of mantissa: logits between 16 and 32 are spaced 0.125 apart" in text
    assert 2.0 ** (4 - stored[torch.bfloat16]) == 0.125  # 16 = 2**4; one step at that scale
    assert "fp16** has three more bits of mantissa than bf16 (10 stored against 7)" in text


def test_the_shipped_results_say_how_they_were_made():
    for dtype, path in SHIPPED.items():
        data = json.loads(path.read_text())
        assert data["dtype"] == dtype and data["command"].startswith("python -m lade_core numerics")
        assert data["summary"]["prompts"] == len(data["prompts"]) >= 8
        for row in data["prompts"]:
            assert row["identical"] == (row["first_divergence"] is None) == (row["logit_gap"] is None)
    assert json.loads(SHIPPED["float32"].read_text())["summary"]["identical"] == 8


@pytest.mark.model
def test_greedy_with_gaps_is_greedy(lm, bench_prompts):
    """The experiment's own greedy loop must write the engine's greedy tokens, or its gaps describe another run."""
    ids = lm.encode_prompt(bench_prompts[0]["prompt"])
    tokens, gaps = numerics.greedy_with_gaps(lm, ids, 24)
    assert tokens == list(greedy_generate(lm, ids, 24).tokens) and len(gaps) == 24 and min(gaps) >= 0


@pytest.mark.model
def test_lookahead_is_identical_to_greedy_in_fp32_on_a_prompt_of_each_kind(lm, bench_prompts):
    """The numerics report's fp32 check on a code, a chat and a grounded prompt (every prompt in make test-soak)."""
    _identical_in_fp32(lm, bench_prompts[::4])


@pytest.mark.model
@pytest.mark.soak
def test_lookahead_is_identical_to_greedy_in_fp32_on_every_prompt(lm, bench_prompts):
    _identical_in_fp32(lm, bench_prompts)


def _identical_in_fp32(lm, prompts):
    result = numerics.numerics(lm, prompts, LookaheadConfig(window=7, ngram=4, guess=7), max_new_tokens=24)
    assert result["dtype"] == "float32"
    assert [r["id"] for r in result["prompts"] if not r["identical"]] == []


@pytest.mark.model
@pytest.mark.soak  # 48 s, a second model load in bf16; fp32 exactness stays in `make test`
def test_a_bf16_divergence_on_file_reproduces():
    """The first prompt on file whose bf16 run leaves greedy within 64 tokens, run again in bf16 with the thread
    count it was recorded with: the same first divergent position and the same top-two gap."""
    from lade_core import load_model

    data = json.loads(SHIPPED["bfloat16"].read_text())
    row = next(r for r in data["prompts"] if not r["identical"] and r["first_divergence"] < 64)
    prompt = next(
        p for p in __import__("lade_core.measure.prompts", fromlist=["x"]).load_prompts() if p["id"] == row["id"]
    )
    threads = torch.get_num_threads()
    torch.set_num_threads(data["threads"])
    try:
        lm = load_model(dtype="bfloat16", half_on_cpu=True)
        c = data["config"]
        again = numerics.compare_prompt(
            lm,
            lm.encode_prompt(prompt["prompt"]),
            LookaheadConfig(c["window"], c["ngram"], c["guess"], pool=c["pool"], tree=c["tree"]),
            64,
        )
    finally:
        torch.set_num_threads(threads)
    assert (again["first_divergence"], again["logit_gap"]) == (row["first_divergence"], row["logit_gap"])
