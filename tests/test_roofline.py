"""The roofline pinned to hand-worked numbers: published shapes, one forward's parts, the batch, the overlap, the
crossover, and the bounds that give every figure its range. No model, no files."""

import numpy as np
import pytest

from lade_core.measure import roofline as rf


def test_published_shapes_give_published_parameter_counts():
    """A typo in a layer count or hidden size would shift every prediction for that size; the derived counts must
    equal the published totals."""
    assert rf.model_shape("7B").params == 6_738_415_616
    assert rf.model_shape("70B").params == 68_976_648_192
    assert rf.model_shape("34B").params == 33_743_970_304
    assert rf.model_shape("135M").params == 134_515_008


def test_model_sizes_parse_as_written():
    assert rf.model_shape("1.7b").name == "SmolLM2-1.7B"
    assert rf.model_shape(" 135M ").name == "SmolLM2-135M"
    assert rf.model_shape("13B").layers == 40
    with pytest.raises(ValueError, match="write it like"):
        rf.model_shape("seven")


def test_7b_on_a100_one_token_is_memory_bound():
    """Llama-2-7B in bf16 on an A100 80GB, one token, empty cache:
    weights 6,738,415,616 * 2 B = 13,476,831,232 B plus the token's KV, 2 * 32 * 32 * 128 * 2 B = 524,288 B,
    at 2.039e12 * 0.7 = 1.4273e12 B/s -> 9.44255 ms; compute 2 * 6,738,415,616 FLOP at 312e12 * 0.5 = 1.56e14
    FLOP/s -> 0.0864 ms, hidden (overlap 1); overhead 32 layers * 20 us = 0.64 ms; total 10.08255 ms."""
    f = rf.forward_seconds("a100-80gb", "7B", 1, 0)
    assert f["memory_s"] == pytest.approx(9.44255e-3, rel=1e-5)
    assert f["compute_s"] == pytest.approx(0.08639e-3, rel=1e-3)
    assert f["seconds"] == pytest.approx(10.08255e-3, rel=1e-5)
    assert f["bound"] == "memory" and f["exposed_s"] == 0


def test_7b_on_a100_at_the_papers_7b_setting_turns_compute_bound():
    """W=15, N=5, G=15 feeds 1 + 30 * 4 = 121 tokens: compute 121 * 13,476,831,232 FLOP / 1.56e14 = 10.4532 ms now
    exceeds memory (9.44219 ms of weights + 121 * 0.000367 ms of new KV = 9.48663 ms); total 10.4532 + 0.64 =
    11.0932 ms, 1.10024x the one-token forward."""
    f = rf.forward_seconds("a100-80gb", "7B", 121, 0)
    assert f["compute_s"] == pytest.approx(10.4532e-3, rel=1e-4)
    assert f["memory_s"] == pytest.approx(9.48663e-3, rel=1e-5)
    assert f["seconds"] == pytest.approx(11.0932e-3, rel=1e-4)
    assert f["bound"] == "compute"
    assert rf.relative_cost("a100-80gb", "7B", 121, 0) == pytest.approx(1.10024, rel=1e-5)


def test_135m_on_h100_is_launch_bound_and_counts_the_kv_cache():
    """SmolLM2-135M on an H100, one token over 512 cached positions:
    weights 134,515,008 * 2 B = 269,030,016 B at 3.35e12 * 0.7 = 2.345e12 B/s -> 0.114725 ms;
    KV cache 2 * 30 layers * 3 heads * 64 * 512 positions * 2 B = 11,796,480 B -> 0.005030 ms (the attention term);
    the token's own KV 23,040 B -> 0.0000098 ms; overhead 30 * 20 us = 0.6 ms dwarfs them: total 0.719765 ms."""
    f = rf.forward_seconds("h100", "135M", 1, 512)
    assert f["attention_s"] == pytest.approx(0.005030e-3, rel=1e-3)
    assert f["memory_s"] == pytest.approx(0.119765e-3, rel=1e-4)
    assert f["seconds"] == pytest.approx(0.719765e-3, rel=1e-4)
    assert f["bound"] == "overhead"


def test_a_batch_reads_the_weights_once_and_multiplies_the_arithmetic():
    """7B on an A100, 31 tokens per sequence, empty caches. One sequence: compute 31 * 2 * P / 1.56e14 = 2.678 ms,
    well under memory. 64 sequences: compute 64x that, 171.4 ms, while the weights are still read once (9.44 ms,
    plus 64 * 31 tokens of new KV, 0.729 ms): compute-bound, and the step costs 17x the batch's one-token forward,
    where at batch 1 it costs about one."""
    one, many = (rf.forward_seconds("a100-80gb", "7B", 31, 0, batch=b) for b in (1, 64))
    assert many["compute_s"] == pytest.approx(64 * one["compute_s"], rel=1e-12)
    assert many["memory_s"] - one["memory_s"] == pytest.approx(63 * 31 * 524_288 / 1.4273e12, rel=1e-9)
    assert (one["bound"], many["bound"]) == ("memory", "compute")
    assert rf.relative_cost("a100-80gb", "7B", 31, 0) < 1.01
    assert rf.relative_cost("a100-80gb", "7B", 31, 0, batch=64) == pytest.approx(17.01, rel=1e-3)


def test_partial_overlap_exposes_the_shorter_term():
    """At overlap 0.75 a quarter of the shorter term shows: 7B on an A100, 31 tokens, empty cache, compute 2.6781
    ms under memory 9.4536 ms, so 0.6695 ms more; the plain roofline (overlap 1) adds nothing."""
    f = rf.forward_seconds("a100-80gb", "7B", 31, 0, rf.Assumptions(overlap=0.75))
    assert f["exposed_s"] == pytest.approx(0.25 * f["compute_s"], rel=1e-12)
    assert f["exposed_s"] == pytest.approx(0.6695e-3, rel=1e-3)
    assert f["seconds"] == pytest.approx(f["memory_s"] + f["exposed_s"] + f["overhead_s"], rel=1e-12)


def test_below_the_crossover_the_step_cost_still_carries_a_range():
    """The plain roofline makes any step under the crossover cost 1.000 with no uncertainty; with the overlap and
    efficiencies varied within their bounds, a 16-token step on a 7B A100 costs up to several percent more."""
    low, mid, high = rf.cost_band("a100-80gb", "7B", 16, 512)
    assert mid < 1.001 and high > 1.03 and low <= mid


def test_the_band_is_the_extremes_over_the_corners():
    """Each corner is one bound per assumption: 2 ** 4 of them, and the band's ends are the smallest and largest
    relative cost among them (and the mid)."""
    corners = rf.BOUNDS.corners(rf.ASSUME)
    assert len(corners) == 16 and len(set(corners)) == 16
    costs = [rf.relative_cost("a100-80gb", "7B", 256, 512, c) for c in corners]
    low, mid, high = rf.cost_band("a100-80gb", "7B", 256, 512)
    assert (low, high) == (min(costs + [mid]), max(costs + [mid]))
    assert high > 2 * low  # past the crossover, compute efficiency 0.3 against 0.7 moves the step a lot


def test_crossover_tokens_solves_compute_equal_memory():
    """The crossover is where the two terms meet; at batch 1 on a 7B A100 with an empty cache that is about 110
    tokens (weights / bandwidth = tokens * 2P / compute), and it falls about 1/B as the batch grows."""
    x = rf.crossover_tokens("a100-80gb", "7B", 0)
    f = rf.forward_seconds("a100-80gb", "7B", x, 0)
    assert f["compute_s"] == pytest.approx(f["memory_s"], rel=1e-9)
    assert 105 < x < 115
    assert rf.crossover_tokens("a100-80gb", "7B", 0, batch=8) == pytest.approx(x / 8, rel=0.05)


def test_arrays_give_the_same_numbers_as_scalars():
    tokens = np.array([1.0, 8.0, 64.0, 300.0])
    vector = rf.relative_cost("h200", "70B", tokens, 512, batch=4)
    assert list(vector) == [rf.relative_cost("h200", "70B", t, 512, batch=4) for t in tokens]


def test_unknown_device_says_what_is_modelled():
    with pytest.raises(ValueError, match="a100-80gb, h100, h200"):
        rf.accelerator("tpu-v5")
