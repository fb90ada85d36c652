"""The model's forward as a weightless ONNX graph, for the engine in the browser (onnxruntime-web).

One graph does every forward the engines make: the prompt, one token, or a lookahead step. It takes what `LM`
gives transformers (`model.py`): the step's token ids at explicit positions, a 4D additive mask over the cache and
the step, the cache's K/V, and the rows whose logits the step reads; it returns those rows' logits and argmax and
each layer's K/V with the step's rows appended (the caller keeps the rows it wants, as `LM.keep_in_cache`).

    inputs   input_ids [1, q] int64, position_ids [1, q] int64, attention_mask [1, 1, q, past + q] float32,
             logit_rows [r] int64, past_key_i / past_value_i [1, kv_heads, past, head_dim] float32 per layer i
    outputs  logits [r, vocab] float32, argmax [r] int64, present_key_i / present_value_i [1, kv_heads, past + q,
             head_dim] float32

The graph is a Llama decoder (SmolLM2's architecture): RMSNorm, rotary positions ("default" RoPE), grouped-query
attention, a gated SiLU MLP, an output head tied to the embedding or not. It is emitted node by node with
`onnx.helper` from the model's config, so it is deterministic and quick to make (no tracing export). Its weights are
not in it: every initializer is external data in one file (`WEIGHTS`), at the offsets `weight_layout` gives, named
as the transformers model names its parameters; `gguf_weights.py` says where each comes from in the GGUF.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WEIGHTS = "weights.bin"  # the external data file every initializer points into
ALIGN = 64  # each initializer's offset in it, in bytes


@dataclass(frozen=True)
class Shape:
    """What the graph needs of a model's config."""

    layers: int
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    eps: float
    rope_theta: float
    tied: bool

    @classmethod
    def of(cls, config) -> Shape:
        """From a transformers `LlamaConfig` (SmolLM2's); anything else is refused by name."""
        if getattr(config, "model_type", None) != "llama":
            raise ValueError(f"the browser graph is a Llama decoder; this model is {config.model_type!r}")
        rope = getattr(config, "rope_parameters", None) or {"rope_type": "default", "rope_theta": config.rope_theta}
        if rope.get("rope_type", "default") != "default" or getattr(config, "attention_bias", False):
            raise ValueError("the browser graph takes default RoPE and no attention bias")
        head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        return cls(
            config.num_hidden_layers,
            config.hidden_size,
            config.intermediate_size,
            config.num_attention_heads,
            config.num_key_value_heads,
            head_dim,
            config.vocab_size,
            float(config.rms_norm_eps),
            float(rope["rope_theta"]),
            bool(config.tie_word_embeddings),
        )


def weight_names(s: Shape) -> list[tuple[str, tuple[int, ...]]]:
    """(name, shape) of every weight, in the order they lie in `WEIGHTS`; names and shapes as transformers has them
    (a linear layer's weight is [out, in])."""
    out = [("model.embed_tokens.weight", (s.vocab, s.hidden))]
    for i in range(s.layers):
        p = f"model.layers.{i}."
        out += [
            (p + "input_layernorm.weight", (s.hidden,)),
            (p + "self_attn.q_proj.weight", (s.heads * s.head_dim, s.hidden)),
            (p + "self_attn.k_proj.weight", (s.kv_heads * s.head_dim, s.hidden)),
            (p + "self_attn.v_proj.weight", (s.kv_heads * s.head_dim, s.hidden)),
            (p + "self_attn.o_proj.weight", (s.hidden, s.heads * s.head_dim)),
            (p + "post_attention_layernorm.weight", (s.hidden,)),
            (p + "mlp.gate_proj.weight", (s.intermediate, s.hidden)),
            (p + "mlp.up_proj.weight", (s.intermediate, s.hidden)),
            (p + "mlp.down_proj.weight", (s.hidden, s.intermediate)),
        ]
    out.append(("model.norm.weight", (s.hidden,)))
    if not s.tied:
        out.append(("lm_head.weight", (s.vocab, s.hidden)))
    return out


def weight_layout(s: Shape) -> list[dict]:
    """Each weight's name, shape, byte offset and length in `WEIGHTS` (fp32, offsets aligned to `ALIGN`)."""
    out, offset = [], 0
    for name, shape in weight_names(s):
        length = 4 * int(np.prod(shape))
        out.append({"name": name, "shape": list(shape), "offset": offset, "length": length})
        offset += -(-length // ALIGN) * ALIGN
    return out


class _Graph:
    """Nodes, initializers and names, with one method per operation the decoder uses."""

    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0

    def op(self, kind: str, *inputs: str, **attrs) -> str:
        from onnx import helper

        self.count += 1
        out = f"{kind.lower()}_{self.count}"
        self.nodes.append(helper.make_node(kind, list(inputs), [out], **attrs))
        return out

    def const(self, value, dtype=np.int64) -> str:
        from onnx import numpy_helper

        self.count += 1
        name = f"const_{self.count}"
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def linear(self, x: str, weight: str) -> str:
        """x [q, in] @ weight[out, in]^T."""
        return self.op("Gemm", x, weight, transB=1)

    def rms_norm(self, x: str, weight: str, eps: float) -> str:
        mean = self.op("ReduceMean", self.op("Mul", x, x), self.const([-1]), keepdims=1)
        scale = self.op("Reciprocal", self.op("Sqrt", self.op("Add", mean, self.const(eps, np.float32))))
        return self.op("Mul", self.op("Mul", x, scale), weight)

    def heads(self, x: str, n: int, head_dim: int) -> str:
        """[q, n * head_dim] -> [1, n, q, head_dim]."""
        return self.op("Transpose", self.op("Reshape", x, self.const([1, -1, n, head_dim])), perm=[0, 2, 1, 3])

    def rotate(self, x: str, cos: str, sin: str, half: int) -> str:
        """x * cos + rotate_half(x) * sin, rotate_half(x) = [-x2, x1] over the last axis."""
        x1 = self.op("Slice", x, self.const([0]), self.const([half]), self.const([-1]))
        x2 = self.op("Slice", x, self.const([half]), self.const([2 * half]), self.const([-1]))
        rotated = self.op("Concat", self.op("Neg", x2), x1, axis=-1)
        return self.op("Add", self.op("Mul", x, cos), self.op("Mul", rotated, sin))


def build_graph(s: Shape):
    """The forward graph (an `onnx.ModelProto`, weights external) for a model of shape `s`."""
    from onnx import TensorProto, helper

    g = _Graph()
    f32 = TensorProto.FLOAT
    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "q"]),
        helper.make_tensor_value_info("position_ids", TensorProto.INT64, [1, "q"]),
        helper.make_tensor_value_info("attention_mask", f32, [1, 1, "q", "total"]),
        helper.make_tensor_value_info("logit_rows", TensorProto.INT64, ["r"]),
    ]
    outputs = [
        helper.make_tensor_value_info("logits", f32, ["r", s.vocab]),
        helper.make_tensor_value_info("argmax", TensorProto.INT64, ["r"]),
    ]
    weights = []
    for w in weight_layout(s):
        t = TensorProto(name=w["name"], data_type=f32, dims=w["shape"])
        t.data_location = TensorProto.EXTERNAL
        for key, value in (("location", WEIGHTS), ("offset", str(w["offset"])), ("length", str(w["length"]))):
            entry = t.external_data.add()
            entry.key, entry.value = key, value
        weights.append(t)

    # rotary angles from the positions: cos and sin [1, 1, q, head_dim]
    half = s.head_dim // 2
    inv_freq = 1.0 / (s.rope_theta ** (np.arange(0, s.head_dim, 2, dtype=np.int64).astype(np.float32) / s.head_dim))
    positions = g.op("Cast", g.op("Reshape", "position_ids", g.const([-1, 1])), to=f32)
    freqs = g.op("Mul", positions, g.const(inv_freq[None, :], np.float32))
    angles = g.op("Reshape", g.op("Concat", freqs, freqs, axis=-1), g.const([1, 1, -1, s.head_dim]))
    cos, sin = g.op("Cos", angles), g.op("Sin", angles)
    scale = g.const(1.0 / np.sqrt(s.head_dim), np.float32)
    group = s.heads // s.kv_heads

    h = g.op("Gather", "model.embed_tokens.weight", g.op("Reshape", "input_ids", g.const([-1])), axis=0)
    for i in range(s.layers):
        p = f"model.layers.{i}."
        x = g.rms_norm(h, p + "input_layernorm.weight", s.eps)
        q = g.rotate(g.heads(g.linear(x, p + "self_attn.q_proj.weight"), s.heads, s.head_dim), cos, sin, half)
        k = g.rotate(g.heads(g.linear(x, p + "self_attn.k_proj.weight"), s.kv_heads, s.head_dim), cos, sin, half)
        v = g.heads(g.linear(x, p + "self_attn.v_proj.weight"), s.kv_heads, s.head_dim)
        cache = [f"past_key_{i}", f"past_value_{i}"]
        inputs += [helper.make_tensor_value_info(n, f32, [1, s.kv_heads, "past", s.head_dim]) for n in cache]
        keys = g.op("Concat", cache[0], k, axis=2)
        values = g.op("Concat", cache[1], v, axis=2)
        g.nodes.append(helper.make_node("Identity", [keys], [f"present_key_{i}"]))
        g.nodes.append(helper.make_node("Identity", [values], [f"present_value_{i}"]))
        outputs += [
            helper.make_tensor_value_info(f"present_{n}_{i}", f32, [1, s.kv_heads, "total", s.head_dim])
            for n in ("key", "value")
        ]
        # grouped-query attention: each K/V head serves `group` query heads, as [1, kv_heads, group, q, head_dim]
        grouped = g.op("Reshape", q, g.const([1, s.kv_heads, group, -1, s.head_dim]))
        k5 = g.op("Unsqueeze", keys, g.const([2]))
        v5 = g.op("Unsqueeze", values, g.const([2]))
        scores = g.op("Mul", g.op("MatMul", grouped, g.op("Transpose", k5, perm=[0, 1, 2, 4, 3])), scale)
        mask = g.op("Unsqueeze", "attention_mask", g.const([1]))
        attn = g.op("MatMul", g.op("Softmax", g.op("Add", scores, mask), axis=-1), v5)
        merged = g.op("Reshape", attn, g.const([1, s.heads, -1, s.head_dim]))
        merged = g.op("Reshape", g.op("Transpose", merged, perm=[0, 2, 1, 3]), g.const([-1, s.heads * s.head_dim]))
        h = g.op("Add", h, g.linear(merged, p + "self_attn.o_proj.weight"))
        x = g.rms_norm(h, p + "post_attention_layernorm.weight", s.eps)
        gate = g.linear(x, p + "mlp.gate_proj.weight")
        up = g.linear(x, p + "mlp.up_proj.weight")
        silu = g.op("Mul", gate, g.op("Sigmoid", gate))
        h = g.op("Add", h, g.linear(g.op("Mul", silu, up), p + "mlp.down_proj.weight"))
    kept = g.op("Gather", g.rms_norm(h, "model.norm.weight", s.eps), "logit_rows", axis=0)
    head = "model.embed_tokens.weight" if s.tied else "lm_head.weight"
    g.nodes.append(helper.make_node("Gemm", [kept, head], ["logits"], transB=1))
    g.nodes.append(helper.make_node("ArgMax", ["logits"], ["argmax"], axis=-1, keepdims=0))
    graph = helper.make_graph(g.nodes, "lade-forward", inputs, outputs, initializer=[*weights, *g.inits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], producer_name="lade-explorer")
    model.ir_version = 9
    return model


def build_keep_graph(s: Shape):
    """The K/V a step keeps, gathered where the forward left it (on the GPU under WebGPU, so the cache never travels
    back to the page): `LM.keep_in_cache` as one graph. In: every layer's present_key_i / present_value_i
    [1, kv_heads, total, head_dim] and `kept` [k] int64, the positions to keep (the cache's, then the step's kept rows,
    each counted from the cache's start). Out: past_key_i / past_value_i [1, kv_heads, k, head_dim]."""
    from onnx import TensorProto, helper

    f32, nodes, inputs, outputs = TensorProto.FLOAT, [], [], []
    inputs.append(helper.make_tensor_value_info("kept", TensorProto.INT64, ["k"]))
    for i in range(s.layers):
        for n in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"present_{n}_{i}", f32, [1, s.kv_heads, "total", s.head_dim]))
            outputs.append(helper.make_tensor_value_info(f"past_{n}_{i}", f32, [1, s.kv_heads, "k", s.head_dim]))
            nodes.append(helper.make_node("Gather", [f"present_{n}_{i}", "kept"], [f"past_{n}_{i}"], axis=2))
    graph = helper.make_graph(nodes, "lade-keep", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], producer_name="lade-explorer")
    model.ir_version = 9
    return model


def write_weights(state: dict, s: Shape, path) -> None:
    """Write `state` (parameter name -> tensor or array, fp32) as `WEIGHTS` at `path`, in `weight_layout` order."""
    with open(path, "wb") as f:
        for w in weight_layout(s):
            data = np.ascontiguousarray(np.asarray(state[w["name"]], dtype=np.float32))
            if list(data.shape) != w["shape"]:
                raise ValueError(f"{w['name']}: shape {list(data.shape)}, the graph wants {w['shape']}")
            f.seek(w["offset"])
            f.write(data.tobytes())
