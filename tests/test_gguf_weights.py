"""The browser's weights (lade_core/gguf_weights.py, app/static/lade-weights.js): rebuilt from the shipped GGUF they
are, tensor for tensor and bit for bit, the fp32 weights the Python converter made and the engine loads."""

import json
import shutil
import subprocess

import numpy as np
import pytest

from lade_core.gguf_weights import gguf_name, manifest, unpermute
from lade_core.onnx_graph import Shape
from lade_core.paths import ROOT


def test_llamacpp_names_and_the_row_permutation():
    assert gguf_name("model.layers.3.mlp.up_proj.weight") == "blk.3.ffn_up.weight"
    assert gguf_name("model.embed_tokens.weight") == "token_embd.weight"
    rows = np.arange(8 * 3).reshape(8, 3)  # 2 heads of 4 rows: stored (h, d, t) is the model's (h, t, d)
    stored = rows.reshape(2, 2, 2, 3).swapaxes(1, 2).reshape(8, 3)  # llama.cpp's permutation
    assert (unpermute(stored, 2) == rows).all()


@pytest.fixture(scope="module")
def converted():
    from safetensors.numpy import load_file

    from lade_core.checkpoint import bundled_gguf, default_model_path

    gguf = bundled_gguf()
    if gguf is None:
        pytest.fail("the embedded model's GGUF is not installed (make install)")
    folder = default_model_path()
    from transformers import AutoConfig

    return gguf, load_file(f"{folder}/model.safetensors"), Shape.of(AutoConfig.from_pretrained(folder))


def test_gguf_py_and_the_unpermutation_give_the_converters_weights(converted):
    """The manifest's recipe, followed in Python with gguf-py, gives every weight the converter wrote exactly."""
    from gguf import GGUFReader, dequantize

    gguf, state, s = converted
    tensors = {t.name: t for t in GGUFReader(gguf).tensors}
    for entry in manifest(gguf, state, s)["tensors"]:
        t = tensors[entry["gguf"]]
        values = dequantize(t.data, t.tensor_type).reshape(entry["shape"])
        if entry["heads"]:
            values = unpermute(values, entry["heads"])
        assert np.array_equal(values.astype(np.float32), state[entry["name"]]), entry["name"]


def test_the_browser_rebuilds_the_converters_weights_bit_for_bit(converted, tmp_path):
    """lade-weights.js in Node: every tensor's SHA-256 equals the converter's (it refuses the first that does not)."""
    node = shutil.which("node")
    assert node, "node is needed (make install brings the npm dev tools)"
    gguf, state, s = converted
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest(gguf, state, s)))
    runner = ROOT / "tests" / "js" / "weights_rebuild.cjs"
    done = subprocess.run([node, str(runner), str(gguf), str(path)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["tensors"] == len(manifest(gguf, state, s)["tensors"]) == 272
    doc = json.loads(path.read_text())
    doc["tensors"][5]["sha256"] = "0" * 64  # one wrong hash is refused, by name
    path.write_text(json.dumps(doc))
    done = subprocess.run([node, str(runner), str(gguf), str(path)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 1 and doc["tensors"][5]["name"] in done.stderr
