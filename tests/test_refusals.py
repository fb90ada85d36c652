"""What the app and the engine refuse or bound, checked without a model, a server or a browser: a model whose KV
cache cannot be re-laid, Auto's measurement repeated per click, a stage that keeps no run per session, and one upload
limit stated the same way everywhere."""

import re
import types

import pytest
import torch

from app import limits
from app.model import SharedModel
from lade_core.model import LM
from lade_core.tracefile import TraceError, parse_run


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
    from lade_core.measure import calibrate

    calls = []
    monkeypatch.setattr(calibrate, "process_curve", lambda lm: calls.append(lm) or {"greedy_s": 1.0, "points": []})
    model = SharedModel()
    model._lm = object()
    for _ in range(5):
        model.cost_curve()
    assert len(calls) == 1


def test_auto_runs_in_the_engine_slot_and_says_what_it_chose_and_why():
    """Auto waited about 100 s behind live runs with no word, then set W=4 N=2 G=4 without saying why: its reason
    went to the tokens-per-forward line, which the sliders' change at once overwrote. Its reason now has a place of
    its own that says beforehand what Auto optimises and that it queues, and shows the queue while it waits."""
    from app import events
    from app.ui import build_demo

    fns = {f.api_name: f for f in build_demo(preload=False).fns.values()}
    auto = fns["auto_settings"]
    assert auto.concurrency_id == fns["run_live"].concurrency_id == limits.ENGINE_GROUP
    ids = [o.elem_id for o in auto.outputs]
    assert "auto-reason" in ids and "tokens-per-forward" not in ids
    assert auto.show_progress == "minimal" and [o.elem_id for o in auto.show_progress_on] == ["auto-reason"]
    assert "best predicted speed-up" in events.AUTO_WHAT and "waits its turn" in events.AUTO_WHAT
    best = {
        "window": 4, "ngram": 2, "guess": 4, "pool": "prompt", "mean_tokens_fed": 6.4, "step_cost": 1.1,
        "predicted_speedup_median": 1.2, "predicted_speedup_range": [1.1, 1.3], "cost_curve": {},
    }  # fmt: skip
    assert events.auto_reason(best, 78).startswith("Auto chose the best predicted speed-up of 78 swept settings")


def test_the_stage_names_runs_and_the_page_pulls_them():
    """Gradio keeps each component's last value per session; the stage's value names what to show (a handle, a
    step, a mode: a few bytes) and the page reads the run itself at its address (`runs/<handle>.json`), so nothing
    depends on the page acknowledging a run (no 'applied' or 'opened' round trip, no 'release_stage'): Python
    listens to no event of the stage, and no session state holds a run."""
    import json

    import gradio as gr

    from app.ui import build_demo

    demo = build_demo(preload=False)
    fns = list(demo.fns.values())
    (stage_id,) = [i for i, b in demo.blocks.items() if getattr(b, "elem_id", None) == "stage"]
    assert [(f.api_name, t) for f in fns for block, t in f.targets if block == stage_id] == []
    assert not [b for b in demo.blocks.values() if isinstance(b, gr.State)]
    assert len(demo.blocks[stage_id].value.encode()) < 100 and "run" not in json.loads(demo.blocks[stage_id].value)


def test_one_upload_limit_everywhere():
    """The upload limit is one number, stated in the same unit by the CLI, the page and the server: a file one byte
    over it is refused by the parser the CLI and the server's `runs` route call, naming the limit the page states; a
    file at it is read (refused for what it holds, not its size); Gradio is launched with the same cap."""
    from app.ui import LAUNCH_OPTIONS

    stated = re.search(r"trace files up to (\d+) MiB", limits.limits_text())
    assert stated, limits.limits_text()
    mib = int(stated.group(1))
    with pytest.raises(TraceError, match=rf"at most {mib} MiB"):
        parse_run(b" " * (mib * 2**20 + 1), limits.UPLOAD_BYTES)
    with pytest.raises(TraceError, match="not a JSON trace"):
        parse_run(b" " * (mib * 2**20), limits.UPLOAD_BYTES)
    with pytest.raises(TraceError, match=rf"at most {mib} MiB"):
        parse_run(b" " * (mib * 2**20 + 1))  # the CLI's default
    assert LAUNCH_OPTIONS["max_file_size"] == mib * 2**20


def test_every_token_is_bidi_isolated():
    """A right-to-left override inside one token must not reverse the rest of its line: every token is isolated."""
    from app.render.assets import source

    assert re.search(r"(^|\n)\.tk \{[^}]*unicode-bidi: isolate;", source("lade.css"))
