"""CPU kernels: the model's linear layers with their weights packed once for oneDNN, both layouts side by side so that
each forward runs on the one this machine measured faster for its width, and attention that shares the key/value heads
of grouped-query attention instead of copying them.

A stock `nn.Linear` on a CPU hands its weight to the GEMM library on every call, which rearranges (packs) it for its
micro-kernel each time: for the one to a few dozen tokens a decoding step feeds, that costs about as much as the
arithmetic. `PackedLinear` asks oneDNN to reorder the weight into its blocked layout once, at load time, and then
runs oneDNN's inner product on ordinary dense activations (no per-call conversion of the input or the output).
These are the two operators torch's own compiler uses for the same purpose on a CPU
(`torch.ops.mkldnn._reorder_linear_weight`, `torch.ops.mkldnn._linear_pointwise`); they are not public API, so
`packing_available` checks that they exist and agree with `nn.Linear` before `load_model` relies on them, and torch
is pinned. Greedy output is token for token the same (tests/test_checkpoint.py, BENCHMARKS.md "CPU kernels").

Which layout is faster depends on the width: on one 2-core host, at one thread, the stock layers took 59 ms for one
token and 122 ms for eight, the packed ones 67 and 77. So `dual_linears` keeps both layouts of every layer (about 0.4 GB
more for the default model) and a `Switch` that puts one or the other in place; the model's adapter (`model.LM`) sets
it before each forward from the plan `kernel_choice.py` measured, so one forward runs wholly on one layout.

The model's code is untouched: its `nn.Linear` children are swapped for `PackedLinear` modules, as
`torch.utils.mkldnn.to_mkldnn` does for its own (slower, per-call converting) `MkldnnLinear`; the attention function
is registered with transformers' `AttentionInterface`, the documented way to supply one.
"""

from __future__ import annotations

import functools

import torch

KERNELS = "onednn-packed"  # the label a bench, a cost curve and an `LM` carry for this path ("stock" otherwise)


class PackedLinear(torch.nn.Module):
    """`nn.Linear` for inference on a CPU in fp32, its weight packed once into oneDNN's blocked layout. Inference
    only: the packed weight is no `Parameter`, so it takes no gradient, no `state_dict` round trip and no re-tying."""

    def __init__(self, linear: torch.nn.Linear):
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        weight = linear.weight.detach()
        self.register_buffer("weight", torch.ops.mkldnn._reorder_linear_weight(weight))
        self.register_buffer("bias", None if linear.bias is None else linear.bias.detach().clone())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.mkldnn._linear_pointwise(x, self.weight, self.bias, "none", [], "")

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


@functools.cache
def packing_available() -> bool:
    """Whether this torch has oneDNN and both operators, and a packed layer agrees with `nn.Linear` (checked once)."""
    if not (torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise")):
        return False
    try:
        generator = torch.Generator().manual_seed(0)
        linear = torch.nn.Linear(64, 48).requires_grad_(False)
        with torch.no_grad():
            linear.weight.copy_(torch.randn(48, 64, generator=generator))
            linear.bias.copy_(torch.randn(48, generator=generator))
            x = torch.randn(3, 5, 64, generator=generator)
            return torch.allclose(PackedLinear(linear)(x), linear(x), rtol=1e-4, atol=1e-4)
    except (RuntimeError, AttributeError):
        return False


class Switch:
    """Which layout a model's linear layers run on: both layouts of every layer are held, and setting `packed` puts
    one or the other in each layer's place (only when it changes: a race alternates greedy's one-token forwards with
    lookahead's wide ones, and a swap of every layer costs about a tenth of a millisecond, where a wrapper module
    dispatching on every call cost about a millisecond a forward). Set by `LM` before each forward from its
    `KernelPlan`."""

    def __init__(self, pairs):
        self.pairs = pairs  # (parent, name, stock, packed) of every linear layer (`packed_pairs`)
        self._packed = False

    @property
    def packed(self) -> bool:
        return self._packed

    @packed.setter
    def packed(self, value: bool) -> None:
        if value != self._packed:
            swap(self.pairs, packed=value)
            self._packed = value

    def keep(self, packed: bool) -> None:
        """Keep one layout in every layer's place for good and let go of the other (its memory is freed)."""
        self.packed = packed
        self.pairs = []


def packed_pairs(model: torch.nn.Module) -> list[tuple[torch.nn.Module, str, torch.nn.Linear, PackedLinear]]:
    """(parent, name, the stock layer, its packed twin) for every `nn.Linear` in `model`; nothing is swapped yet."""
    return [
        (parent, name, child, PackedLinear(child))
        for parent in list(model.modules())
        for name, child in list(parent.named_children())
        if type(child) is torch.nn.Linear
    ]


def swap(pairs, packed: bool) -> None:
    """Put the packed (or the stock) layer of every pair in its place."""
    for parent, name, stock, twin in pairs:
        setattr(parent, name, twin if packed else stock)


def pack_linears(model: torch.nn.Module, pairs=None) -> torch.nn.Module:
    """Swap every `nn.Linear` in `model` (in place) for a `PackedLinear` (`pairs`: from `packed_pairs`, if already
    made); returns `model`, for inference only.

    Gradients go off (inference only), and what stays dense (embeddings, norms) gets its own memory, else it pins
    the whole memory-mapped checkpoint. A tied output layer gets its own packed copy; the embedding keeps the dense
    one.
    """
    model.requires_grad_(False)
    swap(packed_pairs(model) if pairs is None else pairs, packed=True)
    with torch.no_grad():
        for tensor in (*model.parameters(), *model.buffers()):
            if not tensor.is_mkldnn:
                tensor.data = tensor.data.clone()
    return model


def dual_linears(model: torch.nn.Module) -> Switch:
    """Give every `nn.Linear` in `model` a packed twin, both held; the `Switch` that puts one or the other in place
    (stock until set). For inference only; what stays dense gets its own memory, as in `pack_linears`."""
    model.requires_grad_(False)
    switch = Switch(packed_pairs(model))
    with torch.no_grad():
        for tensor in (*model.parameters(), *model.buffers()):
            if not tensor.is_mkldnn:
                tensor.data = tensor.data.clone()
    return switch


ATTENTION = "lade_cpu_gqa_sdpa"  # the name `load_model` registers `grouped_query_sdpa` under with transformers


def grouped_query_sdpa(module, query, key, value, attention_mask, dropout=0.0, scaling=None, is_causal=None, **kwargs):
    """transformers' `sdpa` attention less one copy. Under an explicit mask (every lookahead step has one) that
    function repeats each key/value head for its group of query heads first, a copy of the whole KV cache in every
    layer and step, because CUDA's fused kernels need it; the CPU's kernel shares the heads itself (`enable_gqa`).
    Everything else (no mask, no grouped heads, dropout, soft-capping, position biases, attention sinks, returned
    weights) goes to transformers' own function unchanged."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    extras = any(kwargs.get(name) is not None for name in ("softcap", "position_bias", "s_aux", "sinks"))
    if attention_mask is None or query.shape[1] == key.shape[1] or dropout or extras or kwargs.get("output_attentions"):
        return sdpa_attention_forward(
            module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, is_causal=is_causal, **kwargs
        )
    out = torch.nn.functional.scaled_dot_product_attention(
        query, key, value, attn_mask=attention_mask, scale=scaling, enable_gqa=True
    )
    return out.transpose(1, 2).contiguous(), None


def use_grouped_query_sdpa(model) -> bool:
    """Switch a model that runs transformers' `sdpa` attention to `grouped_query_sdpa`, through transformers' public
    attention registry (masks built as for `sdpa`); False, and the model unchanged, where it runs something else or
    takes no registered attention function."""
    from transformers import AttentionInterface, AttentionMaskInterface
    from transformers.masking_utils import sdpa_mask

    if getattr(model.config, "_attn_implementation", None) != "sdpa":
        return False
    AttentionInterface.register(ATTENTION, grouped_query_sdpa)
    AttentionMaskInterface.register(ATTENTION, sdpa_mask)
    try:
        model.set_attn_implementation(ATTENTION)
    except (ValueError, ImportError):
        return False
    return model.config._attn_implementation == ATTENTION  # some models only warn and keep their own


def use_stock_sdpa(model) -> None:
    """Undo `use_grouped_query_sdpa`: transformers' own `sdpa` again."""
    if getattr(model.config, "_attn_implementation", None) == ATTENTION:
        model.set_attn_implementation("sdpa")
