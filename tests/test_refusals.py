"""What the app and the engine refuse or bound, checked without a model, a server or a browser: a model whose KV
cache cannot be re-laid, Auto's measurement repeated per click, temp files that pile up, and one upload limit stated
the same way everywhere."""

import os
import re
import time
import types

import torch

from app import files, limits
from app.model import SharedModel
from lade_core.model import LM
from lade_core.tracefile import MAX_TRACE_BYTES


def test_a_sliding_window_cache_is_refused_with_a_message():
    """The engines move accepted entries and crop the rest; a sliding-window layer cannot be re-laid, so
    such a model is refused at load time instead of decoding wrongly."""
    from transformers import Qwen2Config

    config = Qwen2Config(
        num_hidden_layers=2,
        hidden_size=64,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=64,
        vocab_size=100,
        sliding_window=16,
        use_sliding_window=True,
        max_window_layers=0,
    )
    lm = LM(types.SimpleNamespace(config=config), None, "tiny-sliding", torch.device("cpu"), torch.float32)
    problem = lm.cache_problem()
    assert problem and "DynamicSlidingWindowLayer" in problem and "cannot be cropped" in problem
    plain = Qwen2Config(
        num_hidden_layers=2,
        hidden_size=64,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=64,
        vocab_size=100,
    )
    assert (
        LM(types.SimpleNamespace(config=plain), None, "tiny", torch.device("cpu"), torch.float32).cache_problem()
        is None
    )


def test_auto_measures_the_cost_curve_once_per_process(monkeypatch):
    """Auto measures this machine's cost curve once per process, not on every click where no saved one matches."""
    from lade_core.measure import autoconfig

    calls = []
    monkeypatch.setattr(autoconfig, "curve_for", lambda lm: calls.append(lm) or {"greedy_s": 1.0, "points": []})
    model = SharedModel()
    model._lm = object()
    for _ in range(5):
        model.cost_curve()
    assert len(calls) == 1


def test_auto_runs_in_the_engine_slot():
    from app.ui import build_demo

    fns = {f.api_name: f for f in build_demo(preload=False).fns.values()}
    assert fns["auto_settings"].concurrency_id == fns["run_live"].concurrency_id == limits.ENGINE_GROUP


def test_the_stage_names_runs_and_the_page_pulls_them():
    """Gradio keeps each component's last value per session; the stage's value names what to show (a handle, a
    step, a mode: a few bytes) and the page pulls the run itself through the stage's server function, so nothing
    depends on the page acknowledging a run (no 'applied' round trip, no 'release_stage'). The one event the page
    sends Python is 'opened' (it opened a run by itself), which only moves the download to that run."""
    import json

    from app import events
    from app.stage import Held
    from app.ui import build_demo

    demo = build_demo(preload=False)
    fns = list(demo.fns.values())
    assert "release_stage" not in {f.api_name for f in fns}
    (stage_id,) = [i for i, b in demo.blocks.items() if getattr(b, "elem_id", None) == "stage"]
    listeners = [(f.api_name, trigger) for f in fns for block, trigger in f.targets if block == stage_id]
    assert listeners == [("stage_opened", "opened")]
    assert len(demo.blocks[stage_id].value.encode()) < 100 and "run" not in json.loads(demo.blocks[stage_id].value)
    opened = types.SimpleNamespace(run="code-fib-W7N4G7")  # the event's public attribute, as Gradio passes it
    held, download = events.stage_opened(Held("code-class-W7N4G7"), opened)
    assert held == Held("code-fib-W7N4G7") and download.value["path"].endswith("code-fib-W7N4G7.json")
    for bad in (types.SimpleNamespace(run=None), types.SimpleNamespace(run="u-" + "0" * 20), types.SimpleNamespace()):
        assert not isinstance(events.stage_opened(Held("code-class-W7N4G7"), bad)[0], Held)  # skipped, no error


def test_temp_files_are_pruned_by_age_and_by_size(tmp_path, monkeypatch):
    """Downloads and exports do not stay forever: old and surplus temp files are pruned on every write."""
    monkeypatch.setattr(files, "FOLDER", tmp_path / "files")
    monkeypatch.setattr(files, "MAX_TOTAL_BYTES", 2500)
    old = files.write("x" * 1000, "old.json")
    os.utime(old, (time.time() - files.MAX_AGE_S - 5,) * 2)
    kept = [files.write(str(i) * 1000, f"f{i}.json") for i in range(3)]  # each write prunes first
    assert not os.path.exists(old)
    assert sum(os.path.getsize(p) for p in kept if os.path.exists(p)) <= 3000
    assert not os.path.exists(kept[0]) and os.path.exists(kept[-1])


def test_one_upload_limit_everywhere():
    """The upload limit is one number, stated in the same unit by the CLI, the page and the server."""
    from app.ui import LAUNCH_OPTIONS

    assert limits.UPLOAD_BYTES == MAX_TRACE_BYTES == LAUNCH_OPTIONS["max_file_size"] == 8 * 2**20
    assert "trace files up to 8 MiB" in limits.limits_text()


def test_every_token_is_bidi_isolated():
    """A right-to-left override inside one token must not reverse the rest of its line: every token is isolated."""
    from app.render.assets import source

    assert re.search(r"(^|\n)\.tk \{[^}]*unicode-bidi: isolate;", source("lade.css"))
