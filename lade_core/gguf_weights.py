"""Where each of the browser graph's weights comes from in the GGUF the project ships, and what it must hash to.

The embedded model ships as a GGUF (`checkpoint.bundled_gguf`, 98 MB, mostly Q4_1) and the project converts it once
to fp32 safetensors (`checkpoint.default_model_path`). The browser does the same conversion itself, so it downloads
the GGUF and not the 538 MB of fp32 weights: `lade-weights.js` reads the GGUF, dequantises each tensor (F32, F16,
Q8_0, Q4_1, as gguf-py does), undoes llama.cpp's row permutation of the q and k projections, lays the results out as
`onnx_graph.weight_layout` says and checks each against the SHA-256 of the converter's tensor, which this manifest
carries.

    manifest: {gguf: {file, bytes}, weights: {file, bytes}, tensors: [{name (transformers'), gguf (llama.cpp's),
               type, shape, heads (the q/k permutation's head count, 0 for none), offset, length (in the weights
               file), sha256 (of the fp32 little-endian bytes)}]}

llama.cpp's converter permutes q and k rows so its RoPE can rotate adjacent pairs: row (h, t, d) of the model (head
h, half t of the head, index d within the half) is stored at row (h, d, t). Reading it back swaps them again.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from .onnx_graph import WEIGHTS, Shape, weight_layout

LAYER = {  # transformers' per-layer name -> llama.cpp's
    "input_layernorm": "attn_norm",
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "post_attention_layernorm": "ffn_norm",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
}
TOP = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight"}
TOP["lm_head.weight"] = "output.weight"


def gguf_name(name: str) -> str:
    """llama.cpp's name of a transformers weight: model.layers.3.mlp.up_proj.weight -> blk.3.ffn_up.weight."""
    if name in TOP:
        return TOP[name]
    _, _, layer, rest = name.split(".", 3)
    return f"blk.{layer}.{LAYER[rest.removesuffix('.weight')]}.weight"


def heads(name: str, s: Shape) -> int:
    """How many heads the q or k projection's rows were permuted over (0: not permuted)."""
    return s.heads if name.endswith("q_proj.weight") else s.kv_heads if name.endswith("k_proj.weight") else 0


def unpermute(rows: np.ndarray, n_heads: int) -> np.ndarray:
    """llama.cpp's q/k rows back in the model's order: stored row (h, d, t) is row (h, t, d)."""
    half = rows.shape[0] // n_heads // 2
    return rows.reshape(n_heads, half, 2, *rows.shape[1:]).swapaxes(1, 2).reshape(rows.shape)


def manifest(gguf: Path, state: dict, s: Shape) -> dict:
    """The manifest for `gguf` (the file the browser downloads) and `state`, the converter's fp32 weights by name."""
    from gguf import GGUFReader

    reader = GGUFReader(gguf)
    types = {t.name: t.tensor_type.name for t in reader.tensors}
    tensors = []
    for w in weight_layout(s):
        data = np.ascontiguousarray(np.asarray(state[w["name"]], dtype="<f4"))
        tensors.append(
            {
                "name": w["name"],
                "gguf": gguf_name(w["name"]),
                "type": types[gguf_name(w["name"])],
                "shape": w["shape"],
                "heads": heads(w["name"], s),
                "offset": w["offset"],
                "length": w["length"],
                "sha256": hashlib.sha256(data.tobytes()).hexdigest(),
            }
        )
    last = tensors[-1]
    return {
        "gguf": {"file": gguf.name, "bytes": gguf.stat().st_size},
        "weights": {"file": WEIGHTS, "bytes": last["offset"] + last["length"]},
        "tensors": tensors,
    }
