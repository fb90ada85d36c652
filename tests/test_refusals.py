"""What the app and the engine refuse or bound, checked without a model, a server or a browser: a model whose KV
cache cannot be re-laid, Auto's measurement repeated per click, temp files that pile up, and one upload limit stated
the same way everywhere (issues 16 and 17)."""

import os
import time
import types

import pytest
import torch

from app import files, limits
from app.model import SharedModel
from lade_core.load import MAX_TRACE_BYTES
from lade_core.model import LM


def test_a_sliding_window_cache_is_refused_with_a_message():
    """Issue 16: the engines move accepted entries and crop the rest; a sliding-window layer cannot be re-laid, so
    such a model is refused at load time instead of decoding wrongly."""
    from transformers import Qwen2Config

    config = Qwen2Config(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                         intermediate_size=64, vocab_size=100, sliding_window=16, use_sliding_window=True,
                         max_window_layers=0)
    lm = LM(types.SimpleNamespace(config=config), None, "tiny-sliding", torch.device("cpu"), torch.float32)
    problem = lm.cache_problem()
    assert problem and "DynamicSlidingWindowLayer" in problem and "cannot be cropped" in problem
    plain = Qwen2Config(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                        intermediate_size=64, vocab_size=100)
    assert LM(types.SimpleNamespace(config=plain), None, "tiny", torch.device("cpu"), torch.float32).cache_problem() is None


def test_auto_measures_the_cost_curve_once_per_process(monkeypatch):
    """Issue 17, finding 7: Auto measured a cost curve on every click where no saved one matched."""
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


def test_the_stage_drops_an_opened_run_once_the_page_has_drawn_it():
    """Issue 17, finding 3: Gradio keeps each component's last value per session; for the stage that was the whole
    payload of the run on screen (3.8 MB for the largest recorded run, per session). The page's 'applied' event
    swaps it for a few bytes (the browser test checks the page sends it and ignores the answer)."""
    import json

    from app import events
    from app.ui import build_demo

    demo = build_demo(preload=False)
    fn = next(f for f in demo.fns.values() if f.api_name == "release_stage")
    (trigger,) = fn.targets
    assert demo.blocks[trigger[0]].elem_id == "stage" and trigger[1] == "applied"
    assert [o.elem_id for o in fn.outputs] == ["stage"]
    event = lambda data: type("Event", (), {"_data": data})()  # noqa: E731
    ack = json.loads(events.release_stage(event({"seq": 12})))
    assert ack["op"] == "ack" and ack["of"] == 12 and len(json.dumps(ack)) < 64
    for bad in ({"seq": "<b>12</b>"}, {"seq": 10**30}, {"seq": True}, None):  # whatever a client sends
        assert json.loads(events.release_stage(event(bad)))["of"] is None


def test_temp_files_are_pruned_by_age_and_by_size(tmp_path, monkeypatch):
    """Issue 17, finding 4: downloads and exports used to stay forever."""
    monkeypatch.setattr(files, "FOLDER", tmp_path / "files")
    monkeypatch.setattr(files, "MAX_TOTAL_BYTES", 2500)
    old = files.write("x" * 1000, "old.json")
    os.utime(old, (time.time() - files.MAX_AGE_S - 5,) * 2)
    kept = [files.write(str(i) * 1000, f"f{i}.json") for i in range(3)]  # each write prunes first
    assert not os.path.exists(old)
    assert sum(os.path.getsize(p) for p in kept if os.path.exists(p)) <= 3000
    assert not os.path.exists(kept[0]) and os.path.exists(kept[-1])


def test_one_upload_limit_everywhere():
    """Issue 17, finding 8: the CLI said 21 MB where the app said 20 MiB."""
    from app.ui import LAUNCH_OPTIONS

    assert limits.UPLOAD_BYTES == MAX_TRACE_BYTES == LAUNCH_OPTIONS["max_file_size"] == 8 * 2**20
    assert "trace files up to 8 MiB" in limits.limits_text()


@pytest.mark.parametrize("css_rule", [".tk { unicode-bidi: isolate;"])
def test_every_token_is_bidi_isolated(css_rule):
    """Issue 17, finding 8: a right-to-left override inside one token reversed the rest of its line."""
    from app.render.assets import source

    assert css_rule in source("lade.css")
