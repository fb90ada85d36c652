"""CPU kernels: the model's linear layers in up to three layouts side by side (transformers' own, weights packed once
for oneDNN, weights stored transposed), so that each forward runs on the one this machine measured fastest for its
width, and attention that shares the key/value heads of grouped-query attention instead of copying them.

A stock `nn.Linear` on a CPU hands its weight to the GEMM library on every call, which rearranges (packs) it for its
micro-kernel each time: for the one to a few dozen tokens a decoding step feeds, that costs about as much as the
arithmetic. `PackedLinear` asks oneDNN to reorder the weight into its blocked layout once, at load time, and then
runs oneDNN's inner product on ordinary dense activations (no per-call conversion of the input or the output).
These are the two operators torch's own compiler uses for the same purpose on a CPU
(`torch.ops.mkldnn._reorder_linear_weight`, `torch.ops.mkldnn._linear_pointwise`); they are not public API, so
`packing_available` checks that they exist and agree with `nn.Linear` before `load_model` relies on them, and torch
is pinned. `TransposedLinear` keeps the weight as (in, out) rows, so a one-token product is BLAS's plain
matrix-vector product down the weight's rows rather than `nn.Linear`'s transposed one: the same numbers read once, in
another order (on one 2-core host at one thread, a one-token forward 8% faster; from two tokens on, slower). Greedy
output is token for token the same on each (tests/test_checkpoint.py, BENCHMARKS.md "CPU kernels").

Which layout is faster depends on the width: on one 2-core host, at one thread, the stock layers took 59 ms for one
token and 122 ms for eight, the packed ones 67 and 77. So `layered_linears` keeps every layout of every layer (about
0.5 GB more for the default model per layout added) and a `Switch` that puts one of them in place; the model's adapter
(`model.LM`) sets it before each forward from the plan `kernel_choice.py` measured, so one forward runs wholly on one
layout, and the layouts the plan never runs are let go.

The model's code is untouched: its `nn.Linear` children are swapped for these modules, as `torch.utils.mkldnn.to_mkldnn`
does for its own (slower, per-call converting) `MkldnnLinear`; the attention function is registered with
transformers' `AttentionInterface`, the documented way to supply one.
"""

from __future__ import annotations

import functools

import torch

from .trace import CPU_LAYOUTS

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


class TransposedLinear(torch.nn.Module):
    """`nn.Linear` for inference, its weight stored transposed ((in, out), contiguous) so that `x @ weight` streams
    it row by row; the same arithmetic as `nn.Linear` in another summation order."""

    def __init__(self, linear: torch.nn.Linear):
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.register_buffer("weight_t", linear.weight.detach().t().contiguous())
        self.register_buffer("bias", None if linear.bias is None else linear.bias.detach().clone())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.matmul(x, self.weight_t)
        return y if self.bias is None else y + self.bias

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


BUILDERS = {"stock": lambda linear: linear, "packed": PackedLinear, "transposed": TransposedLinear}
LABELS = {"stock": "stock", "packed": KERNELS, "transposed": "transposed"}  # a model on one layout, as a bench names it


class Switch:
    """Which layout a model's linear layers run on: every held layout of every layer is kept, and setting `layout`
    puts that one in each layer's place (only when it changes: a race alternates greedy's one-token forwards with
    lookahead's wide ones, and a swap of every layer costs about a tenth of a millisecond, where a wrapper module
    dispatching on every call cost about a millisecond a forward). Set by `LM` before each forward from its
    `KernelPlan`."""

    def __init__(self, layers):
        self.layers = layers  # (parent, name, {layout: module}) of every linear layer (`twins`)
        self._layout = "stock"

    @property
    def layouts(self) -> tuple[str, ...]:
        """The layouts held, in `CPU_LAYOUTS` order."""
        return tuple(self.layers[0][2]) if self.layers else (self._layout,)

    @property
    def layout(self) -> str:
        return self._layout

    @layout.setter
    def layout(self, value: str) -> None:
        if value != self._layout:
            swap(self.layers, value)
            self._layout = value

    def keep(self, layouts) -> None:
        """Hold only `layouts` and let the others' memory go; with one left it stays in every layer's place for good
        (nothing more to switch)."""
        keep = [layout for layout in self.layouts if layout in set(layouts)]
        if self._layout not in keep:
            self.layout = keep[0]
        for _, _, modules in self.layers:
            for layout in set(modules) - set(keep):
                del modules[layout]
        if len(keep) == 1:
            self.layers = []


def twins(model: torch.nn.Module, layouts=CPU_LAYOUTS) -> list[tuple[torch.nn.Module, str, dict]]:
    """(parent, name, {layout: module}) for every `nn.Linear` in `model`, the stock layer itself always among them;
    nothing is swapped yet."""
    wanted = [layout for layout in CPU_LAYOUTS if layout == "stock" or layout in layouts]
    return [
        (parent, name, {layout: BUILDERS[layout](child) for layout in wanted})
        for parent in list(model.modules())
        for name, child in list(parent.named_children())
        if type(child) is torch.nn.Linear
    ]


def swap(layers, layout: str) -> None:
    """Put every layer's `layout` module in its place."""
    for parent, name, modules in layers:
        setattr(parent, name, modules[layout])


def layered_linears(model: torch.nn.Module, layouts=CPU_LAYOUTS) -> Switch:
    """Give every `nn.Linear` in `model` its twins in `layouts`, all held; the `Switch` that puts one in place (stock
    until set). For inference only: gradients go off, and what stays dense (embeddings, norms) gets its own memory,
    else it pins the whole memory-mapped checkpoint. A tied output layer gets its own copy in each layout; the
    embedding keeps the dense one."""
    model.requires_grad_(False)
    switch = Switch(twins(model, layouts))
    with torch.no_grad():
        for tensor in (*model.parameters(), *model.buffers()):
            if not tensor.is_mkldnn:
                tensor.data = tensor.data.clone()
    return switch


def fix_layout(model: torch.nn.Module, layout: str) -> torch.nn.Module:
    """Swap every `nn.Linear` in `model` (in place) for its `layout` twin, for good; returns `model`, for inference
    only (as `layered_linears`)."""
    layered_linears(model, (layout,)).keep((layout,))
    return model


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
