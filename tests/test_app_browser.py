"""The running app in a real browser (Playwright + Debian Chromium): recorded run at once, playback, a live run.

The app runs as a subprocess (`python app.py` on a free port). What the views show is checked against traces: the
shipped recorded run, and for the live run the same `record_run` computed in this process (greedy decoding is
deterministic, so tokens, steps and candidates agree; only times differ). Screenshots go to out/screenshots/ and the
measured first-view time and replay speed to out/measurements.json.
"""

import json
import os
import re
import time
from pathlib import Path

import pytest

from conftest_app import CHROMIUM, serve_app
from conftest_app import CHROMIUM_ARGS as ARGS

from app import replay
from app.examples import load_recorded
from app.ui import DEFAULT_RUN

playwright = pytest.importorskip("playwright.sync_api")

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "out" / "screenshots"
LIVE_PROMPT = ("Implement binary search in Python: a function that takes a sorted list and a target and returns the "
               "index of the target or -1.")
LIVE = dict(window=5, ngram=3, guess=4, max_new_tokens=24)
MEASURED: dict = {}

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian Chromium at /usr/bin/chromium")


@pytest.fixture(scope="module")
def server():
    with serve_app(["app.py"], "app-test.log") as (url, _):
        yield url
    (ROOT / "out" / "measurements.json").write_text(json.dumps(MEASURED, indent=2))


@pytest.fixture(scope="module")
def page(server):
    SHOTS.mkdir(parents=True, exist_ok=True)
    with playwright.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(30_000)
        t0 = time.perf_counter()
        page.goto(server)
        page.wait_for_selector("#la-output .tok-text span")
        page.wait_for_selector("#mask-view .main-svg")
        MEASURED["first_view_s"] = round(time.perf_counter() - t0, 2)
        yield page
        browser.close()


def counter(page) -> dict:
    text = page.inner_text("#counter")
    la = re.search(r"Lookahead: steps=(\d+) tokens=(\d+)", text)
    ar = re.search(r"Greedy: steps=(\d+) tokens=(\d+)", text)
    return {"la": (int(la[1]), int(la[2])), "ar": (int(ar[1]), int(ar[2]))}


def expected_counter(run, k) -> dict:
    la = run.lookahead.steps[: min(k, len(run.lookahead.steps) - 1) + 1]
    ar = min(k, len(run.greedy.steps) - 1) + 1
    return {"la": (len(la), sum(len(s.accepted) for s in la)), "ar": (ar, ar)}


def slider_value(page, elem_id="step-slider") -> int:
    return int(float(page.locator(f"#{elem_id} input[type=number]").input_value()))


def set_number(page, elem_id: str, value) -> None:
    box = page.locator(f"#{elem_id} input[type=number]")
    box.fill(str(value))
    box.press("Enter")


def wait_counter(page, run, k) -> None:
    want = expected_counter(run, k)
    page.wait_for_function(
        "([a, b]) => { const t = document.querySelector('#counter').innerText;"
        " return t.includes(a) && t.includes(b); }",
        arg=[f"Lookahead: steps={want['la'][0]} tokens={want['la'][1]} ", f"Greedy: steps={want['ar'][0]} "])


def shoot_views(page, prefix: str) -> None:
    for elem in ("ar-output", "la-output", "counter", "progress-plot", "window-view", "trajectory-view", "pool-view",
                 "verify-view", "mask-view"):
        page.locator(f"#{elem}").screenshot(path=str(SHOTS / f"{prefix}-{elem}.png"))


def test_recorded_run_is_visible_at_once(page):
    run = load_recorded(DEFAULT_RUN)
    k = replay.interesting_step(run)
    assert MEASURED["first_view_s"] < 20
    assert slider_value(page) == k
    assert counter(page) == expected_counter(run, k)
    step = run.lookahead.steps[k]
    chips = page.locator("#verify-view .accepted .chip").all_inner_texts()
    assert len(chips) == len(step.accepted)
    assert page.locator("#window-view td.cell").count() == (len(step.levels_before) + 1) * step.window
    page.screenshot(path=str(SHOTS / "full-recorded.png"), full_page=True)
    shoot_views(page, "recorded")


def test_step_scrub_and_play(page):
    run = load_recorded(DEFAULT_RUN)
    k = slider_value(page)
    page.click("#step-next")
    wait_counter(page, run, k + 1)
    page.click("#step-prev")
    wait_counter(page, run, k)
    page.click("#step-prev")
    wait_counter(page, run, k - 1)
    set_number(page, "step-slider", 30)
    wait_counter(page, run, 30)
    step = run.lookahead.steps[30]
    page.wait_for_function("n => document.querySelectorAll('#verify-view .accepted .chip').length === n",
                           arg=len(step.accepted))
    # play at full speed, measure steps per second, pause
    set_number(page, "speed", replay.MAX_SPEED)
    set_number(page, "step-slider", 0)
    wait_counter(page, run, 0)
    page.click("#play")
    page.wait_for_function("() => +document.querySelector('#step-slider input[type=number]').value >= 3")
    k0, t0 = slider_value(page), time.perf_counter()
    page.wait_for_function("() => +document.querySelector('#step-slider input[type=number]').value >= 40",
                           timeout=60_000)
    k1, t1 = slider_value(page), time.perf_counter()
    page.click("#play")
    MEASURED["replay_steps_per_s"] = round((k1 - k0) / (t1 - t0), 2)
    assert MEASURED["replay_steps_per_s"] > 1.5
    page.wait_for_function("() => document.querySelector('#play').innerText.includes('Play')")
    k = slider_value(page)
    wait_counter(page, run, k)
    # the charts' step line follows the clock although playback does not re-send the charts
    page.wait_for_function(
        "k => { const d = document.querySelector('#progress-plot .js-plotly-plot');"
        " return d && d.layout.shapes[0].x0 === k; }", arg=k)


def test_empty_prompt_is_refused(page):
    page.fill("#prompt textarea", "")
    page.click("#run")
    page.wait_for_selector("text=The prompt is empty")


def test_live_settings_start_at_autos_choice_for_this_device(page):
    """Issue 8: the app's default for a live run is what `--auto` picks here, and the panel says why."""
    from lade_core.autoconfig import predict_shipped
    from lade_core.loading import DEFAULT_MODEL

    best = predict_shipped("cpu", DEFAULT_MODEL)
    assert [slider_value(page, e) for e in ("window-w", "ngram-n", "guess-g")] == [
        best["window"], best["ngram"], best["guess"]]
    assert page.locator("#pool-from-prompt input").is_checked() == best["pool_from_prompt"]
    note = page.inner_text("#tokens-per-forward")
    assert f"Auto: on this device W={best['window']}, N={best['ngram']}, G={best['guess']}" in note
    assert f"{best['predicted_speedup']:.2f}x" in note


def test_live_run_streams_and_agrees_with_the_engine(page):
    from lade_core import LookaheadConfig, greedy_generate, load_model, record_run

    page.locator("#pool-from-prompt input").set_checked(False)
    page.fill("#prompt textarea", LIVE_PROMPT)
    for elem, key in (("window-w", "window"), ("ngram-n", "ngram"), ("guess-g", "guess"),
                      ("max-new-tokens", "max_new_tokens")):
        set_number(page, elem, LIVE[key])
    page.wait_for_function("() => document.querySelector('#tokens-per-forward').innerText.includes('= 19')")
    page.evaluate("""() => { window.__statuses = []; const el = document.querySelector('#run-status');
        new MutationObserver(() => window.__statuses.push(el.innerText)).observe(el, {subtree: true, childList: true,
        characterData: true}); }""")
    page.click("#run")
    page.wait_for_function("() => document.querySelector('#run-status').innerText.includes('Live run finished')",
                           timeout=150_000)
    statuses = page.evaluate("window.__statuses")
    assert any("Live run, lookahead step" in s or "Live run, greedy step" in s for s in statuses), statuses

    lm = load_model()
    config = LookaheadConfig(window=LIVE["window"], ngram=LIVE["ngram"], guess=LIVE["guess"])
    run = record_run(lm, LIVE_PROMPT, config, LIVE["max_new_tokens"])
    last = replay.last_step(run)
    assert slider_value(page) == last
    assert counter(page) == expected_counter(run, last)
    # issue 2: the streamed greedy text is what greedy_generate produces
    greedy = greedy_generate(lm, lm.encode_prompt(LIVE_PROMPT), LIVE["max_new_tokens"])
    assert page.inner_text("#ar-output .tok-text") == lm.decode(greedy.tokens)
    assert run.greedy.tokens == greedy.tokens == run.lookahead.tokens

    # a step with candidates: accepted tokens and the mask size (W+g)(N-1)+1
    step = max((s for s in run.lookahead.steps if s.candidates), key=lambda s: (len(s.accepted), len(s.candidates)))
    set_number(page, "step-slider", step.index)
    wait_counter(page, run, step.index)
    page.wait_for_function("n => document.querySelectorAll('#verify-view .accepted .chip').length === n",
                           arg=len(step.accepted))
    size = (LIVE["window"] + len(step.candidates)) * (LIVE["ngram"] - 1) + 1
    page.wait_for_function("q => { const d = document.querySelector('#mask-view .js-plotly-plot');"
                           " return d && d.data[0].x.length === q && d.data[0].y.length === q; }", arg=size)
    winner = page.locator("#verify-view tr.winner th").first.inner_text()
    assert f"candidate {step.winner + 1}" in winner
    shoot_views(page, "live")
    page.screenshot(path=str(SHOTS / "full-live.png"), full_page=True)


SAMPLED_RUN = "code-fib-t0.7-W7N4G7"


def test_sampled_run_opens_with_its_draws_and_a_live_sampled_run_agrees(page):
    """Issue 5: the shipped sampled run sets the sampling controls and its verification view lists the draws; Run
    then samples with them, and the page shows what `record_run` with the same settings draws."""
    from lade_core import LookaheadConfig, Sampling, load_model, record_run

    run = load_recorded(SAMPLED_RUN)
    page.click("#recorded-run input")
    page.click(f"[role=option][aria-label='{SAMPLED_RUN}']")
    step = run.lookahead.steps[replay.interesting_step(run)]
    page.wait_for_function("n => document.querySelectorAll('#verify-view tr.draw').length === n", arg=len(step.draws))
    assert float(page.locator("#temperature input[type=number]").input_value()) == 0.7
    assert float(page.locator("#top-p input[type=number]").input_value()) == 1.0
    assert page.locator("#sample-seed input").input_value() == "0"
    assert "Autoregressive (sampling, T=0.7)" in page.inner_text("#ar-output")
    page.locator("#verify-view").screenshot(path=str(SHOTS / "sampled-verify-view.png"))

    page.fill("#prompt textarea", LIVE_PROMPT)
    for elem, value in (("window-w", 5), ("ngram-n", 3), ("guess-g", 4), ("max-new-tokens", 12)):
        set_number(page, elem, value)
    page.wait_for_function("() => document.querySelector('#tokens-per-forward').innerText.includes('= 19')")
    page.click("#run")
    page.wait_for_function("() => document.querySelector('#run-status').innerText.includes('Live run finished')",
                           timeout=150_000)
    assert "sampling at temperature 0.7, top-p 1, seed 0" in page.inner_text("#run-status")
    lm = load_model()
    want = record_run(lm, LIVE_PROMPT, LookaheadConfig(window=5, ngram=3, guess=4, pool_from_prompt=True), 12,
                      sampling=Sampling(temperature=0.7, seed=0))
    assert page.inner_text("#ar-output .tok-text") == lm.decode(want.greedy.tokens)
    assert page.inner_text("#la-output .tok-text") == lm.decode(want.lookahead.tokens)
