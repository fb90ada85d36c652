"""The browser's forward graph (`lade_core/onnx_graph.py`) in onnxruntime against the torch model (`LM`): the prompt
and a lookahead-shaped step under the engine's own mask, the logits of the rows read within a stated tolerance and
the same argmax on every row, the K/V it returns carrying the next step the same way."""

import numpy as np
import pytest

from lade_core.layout import StepLayout
from lade_core.onnx_graph import WEIGHTS, Shape, build_graph, build_keep_graph, weight_layout, write_weights

TOLERANCE = 2e-4  # largest |logit difference| allowed (fp32; logits here span about +-30)


def test_the_weights_lie_aligned_and_apart():
    from lade_core.onnx_graph import ALIGN

    s = Shape(2, 8, 16, 4, 2, 2, 10, 1e-5, 1e4, True)
    layout = weight_layout(s)
    assert [w["name"] for w in layout][:2] == ["model.embed_tokens.weight", "model.layers.0.input_layernorm.weight"]
    for a, b in zip(layout, layout[1:]):
        assert a["offset"] % ALIGN == 0 and a["offset"] + a["length"] <= b["offset"]
    assert not any(w["name"] == "lm_head.weight" for w in layout)  # tied: the embedding is the head


def test_the_keep_graph_keeps_the_rows_the_cache_keeps(tmp_path):
    """The K/V a step keeps, gathered in a graph (WebGPU's cache stays on the GPU): the cache's positions, then the
    step's kept rows, in their order, as `LM.keep_in_cache` keeps them; nothing else."""
    import onnx
    import onnxruntime

    s = Shape(2, 8, 16, 4, 2, 3, 10, 1e-5, 1e4, True)
    onnx.save(build_keep_graph(s), str(tmp_path / "keep.onnx"))
    sess = onnxruntime.InferenceSession(str(tmp_path / "keep.onnx"), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    cache, step, rows = 5, 7, [0, 4, 2]
    present = {
        f"present_{n}_{i}": rng.standard_normal((1, s.kv_heads, cache + step, s.head_dim)).astype(np.float32)
        for i in range(s.layers)
        for n in ("key", "value")
    }
    kept = np.array([*range(cache), *(cache + r for r in rows)], dtype=np.int64)
    names = [f"past_{n}_{i}" for i in range(s.layers) for n in ("key", "value")]
    for name, got in zip(names, sess.run(names, {"kept": kept, **present}), strict=True):
        whole = present[name.replace("past", "present")]
        assert got.shape == (1, s.kv_heads, cache + len(rows), s.head_dim)
        assert np.array_equal(got[:, :, :cache], whole[:, :, :cache])
        assert np.array_equal(got[:, :, cache:], whole[:, :, [cache + r for r in rows]])


@pytest.fixture(scope="module")
def session(lm, tmp_path_factory):
    import onnx
    import onnxruntime

    folder = tmp_path_factory.mktemp("graph")
    s = Shape.of(lm.model.config)
    onnx.save(build_graph(s), str(folder / "forward.onnx"))
    from safetensors.numpy import load_file

    from lade_core.checkpoint import default_model_path

    state = load_file(f"{default_model_path()}/model.safetensors")  # the converted fp32 weights the model loaded
    write_weights(state, s, folder / WEIGHTS)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    return s, onnxruntime.InferenceSession(str(folder / "forward.onnx"), options, providers=["CPUExecutionProvider"])


def run(session, ids, positions, mask, rows, past):
    s, sess = session
    feeds = {
        "input_ids": np.array([ids], dtype=np.int64),
        "position_ids": np.array([positions], dtype=np.int64),
        "attention_mask": mask[None, None].astype(np.float32),
        "logit_rows": np.array(rows, dtype=np.int64),
    }
    for i in range(s.layers):
        feeds[f"past_key_{i}"], feeds[f"past_value_{i}"] = past[i]
    names = ["logits", "argmax", *(f"present_{n}_{i}" for i in range(s.layers) for n in ("key", "value"))]
    out = sess.run(names, feeds)
    return out[0], out[1], [(out[2 + 2 * i], out[3 + 2 * i]) for i in range(s.layers)]


def additive(visible: np.ndarray) -> np.ndarray:
    return np.where(visible, 0.0, np.finfo(np.float32).min).astype(np.float32)


def test_the_graph_computes_the_models_forward(lm, session, bench_prompts):
    s, _ = session
    ids = lm.encode_prompt(bench_prompts[0]["prompt"])
    n = len(ids)
    empty = [(np.zeros((1, s.kv_heads, 0, s.head_dim), np.float32),) * 2 for _ in range(s.layers)]
    logits, argmax, past = run(session, ids, list(range(n)), additive(np.tril(np.ones((n, n), bool))), [n - 1], empty)
    cache = lm.new_cache()
    want = lm.prefill(cache, ids).numpy()
    assert np.abs(logits[0] - want).max() < TOLERANCE and argmax[0] == want.argmax()

    # a lookahead step: x, a window of 3 levels x 5 columns, two candidates of 3 tokens (the engine's layout)
    rng = np.random.default_rng(0)
    layout = StepLayout.plain(3, 5, 2, 3)
    tokens = [int(argmax[0]), *(int(t) for t in rng.choice(ids, layout.size - 1))]
    want = lm.step_forward(cache, tokens, layout).numpy()
    visible = np.concatenate([np.ones((layout.size, n), bool), layout.mask()], axis=1)
    positions = (n + layout.positions()).tolist()
    logits, argmax, _ = run(session, tokens, positions, additive(visible), layout.logit_rows(), past)
    assert logits.shape == want.shape
    assert np.abs(logits - want).max() < TOLERANCE
    top2 = np.sort(want, axis=-1)[:, -2:]
    clear = top2[:, 1] - top2[:, 0] > 2 * TOLERANCE  # rows without a near-tie must agree exactly
    assert clear.sum() >= len(clear) - 1 and (argmax[clear] == want.argmax(-1)[clear]).all()
    assert np.abs(past[-1][1] - cache.layers[-1].values[:, :, :n].numpy()).max() < TOLERANCE  # the prompt K/V
