"""App event handlers as plain functions: the live-run defaults and Stop, without a browser or a server."""

from dataclasses import replace
from types import SimpleNamespace

from app import events, ui
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
    monkeypatch.setenv("LADE_PREPACK", "0")  # stock kernels: the shipped (prepacked) curve does not describe them
    assert predict_shipped("cpu", DEFAULT_MODEL) is None


def test_stop_marks_a_page_run_that_was_still_running():
    done = load_recorded(DEFAULT_RUN)
    running = replace(done, title="live", lookahead=replace(done.lookahead, stop_reason="running"),
                      greedy=replace(done.greedy, stop_reason="running"))
    request = SimpleNamespace(session_hash="test-stop-session")  # no live run registered: its generator is gone
    run, status = events.stop_live(running, request)
    assert status.startswith("Live run stopped")
    assert (run.lookahead.stop_reason, run.greedy.stop_reason) == ("cancelled", "cancelled")
    again, status = events.stop_live(run, request)  # a second Stop finds nothing running
    assert status.startswith("Nothing was running") and again == run
    _, status = events.stop_live(done, request)
    assert status.startswith("Nothing was running")
