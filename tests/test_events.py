"""App event handlers as plain functions: the live-run defaults and Stop, without a browser or a server."""

import threading
from dataclasses import replace
from types import SimpleNamespace

import gradio as gr

from app import events, live, ui
from app.examples import load_recorded
from app.ui import DEFAULT_RUN
from lade_core.autoconfig import predict_shipped
from lade_core.loading import DEFAULT_MODEL


def test_live_defaults_are_autos_choice_or_the_opening_runs_settings(monkeypatch):
    run = load_recorded(DEFAULT_RUN)
    best = predict_shipped("cpu", DEFAULT_MODEL)
    W, N, G, seeded, note = ui._live_defaults(run)
    assert (W, N, G, seeded) == (best["window"], best["ngram"], best["guess"], best["pool_from_prompt"])
    assert "Auto: on this device" in note and f"{best['predicted_speedup']:.2f}x" in note
    # no saved cost curve for this device, model and kernels (a GPU, another model, LADE_PREPACK=0)
    monkeypatch.setattr("lade_core.autoconfig.predict_shipped", lambda *a, **k: None)
    cfg = run.config
    W, N, G, seeded, note = ui._live_defaults(run)
    assert (W, N, G, seeded) == (cfg.window, cfg.ngram, cfg.guess, cfg.pool_from_prompt)
    assert "Auto" not in note


def test_a_saved_curve_is_only_used_with_its_own_kernels(monkeypatch):
    assert predict_shipped("cpu", DEFAULT_MODEL) is not None
    assert predict_shipped("cpu", "another/model") is None
    monkeypatch.setenv("LADE_PREPACK", "0")  # stock kernels: the shipped (packed) curve does not describe them
    assert predict_shipped("cpu", DEFAULT_MODEL) is None


def test_a_stopped_run_is_settled_as_stopped_and_a_finished_one_left_alone():
    done = load_recorded(DEFAULT_RUN)
    running = replace(done, title="live", lookahead=replace(done.lookahead, stop_reason="running"),
                      greedy=replace(done.greedy, stop_reason="running"))
    run, status = events.settle_run(running)  # Stop cancelled the Run event before its last update reached the page
    assert status.startswith("Live run stopped")
    assert (run.lookahead.stop_reason, run.greedy.stop_reason) == ("cancelled", "cancelled")
    assert run.lookahead.tokens == done.lookahead.tokens  # what it recorded stays on the page
    for ended in (run, done):  # a run that ended by itself (or was settled already) keeps its own status
        assert events.settle_run(ended) == (gr.skip(), gr.skip())


def test_stop_stops_only_the_sessions_own_engine():
    mine, theirs = threading.Event(), threading.Event()
    live.register("test-stop-mine", SimpleNamespace(stop=mine.set))
    live.register("test-stop-theirs", SimpleNamespace(stop=theirs.set))
    events.stop_live(SimpleNamespace(session_hash="test-stop-mine"))
    assert mine.is_set() and not theirs.is_set()
    assert not live.stop_session("test-stop-mine")  # forgotten: a second Stop finds nothing
    assert live.stop_session("test-stop-theirs") and theirs.is_set()


def test_stop_cancels_first_and_every_end_of_a_run_is_settled_once():
    """How Stop and the end of a run are wired (Gradio 6 runs a click's listeners in order; it follows a finished run
    with `.success`, a failed or cancelled one with `.failure`, and skips `.then` on a failure)."""
    fns = list(ui.build_demo(preload=False).fns.values())
    run = next(f for f in fns if f.name == "run_live")
    stop_target = next(f for f in fns if f.name == "stop_live").targets
    on_stop = [f for f in fns if f.targets == stop_target]  # in the order the page runs them
    cancel = next(i for i, f in enumerate(on_stop) if f.cancels == [run._id])
    assert [f.name for f in on_stop[cancel:]].index("stop_live") > 0
    settles = [f for f in fns if f.name == "settle_run"]
    assert {f.trigger_after for f in settles} == {run._id}
    assert sorted((f.trigger_only_on_success, f.trigger_only_on_failure) for f in settles) == [(False, True),
                                                                                              (True, False)]
