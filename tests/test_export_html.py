"""The standalone HTML replay, opened from disk in headless Chromium: no request leaves file:, and the page shows
what the trace says at a step (counter, both texts, window grid, verification branch); plus bad input handling."""

import dataclasses
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lade_core.export_html import export_html, render_html
from lade_core.trace import RunTrace, TraceError, parse_run

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "assets" / "runs" / "code-fib-W7N4G7.json"
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
playwright = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def trace_file(request, tmp_path_factory) -> Path:
    """A real recorded run: the shipped one if present, else one recorded now."""
    if SHIPPED.exists():
        return SHIPPED
    from lade_core import LookaheadConfig, record_run

    lm = request.getfixturevalue("lm")
    run = record_run(lm, "Write a Python function fib(n) using iteration.", LookaheadConfig(5, 3, 5), 40)
    path = tmp_path_factory.mktemp("trace") / "run.json"
    path.write_text(run.to_json(), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def run(trace_file) -> RunTrace:
    return parse_run(trace_file.read_bytes())


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        yield b
        b.close()


def wait_until(condition, timeout_s: float = 10.0) -> None:
    """Poll from Python: the page's CSP forbids the eval that Playwright's wait_for_function uses."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the page"
        time.sleep(0.05)


def open_page(browser, html_path: Path):
    """Open `html_path` from disk; returns the page and the lists of requests and errors it makes."""
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    requests, errors = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(html_path.resolve().as_uri())
    wait_until(lambda: "steps=" in page.text_content("#count-greedy"))
    return page, requests, errors


@pytest.fixture(scope="module")
def page(browser, trace_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("html") / "replay.html"
    export_html(trace_file, out)
    page, requests, errors = open_page(browser, out)
    yield page, requests, errors
    page.close()


def goto_step(page, k: int) -> None:
    page.eval_on_selector("#slider", "(e, k) => { e.value = k; e.dispatchEvent(new Event('input')); }", k)


def counts(page) -> dict:
    out = {}
    for name in ("lookahead", "greedy"):
        text = page.text_content(f"#count-{name}")
        out[name] = tuple(int(re.search(rf"\b{key}=(\d+)", text)[1]) for key in ("steps", "tokens"))
    return out


def tokens_at(method, k: int) -> tuple[int, list[int]]:
    upto = max(0, min(k, len(method.steps) - 1))
    return upto, [t for s in method.steps[: upto + 1] for t in s.accepted]


def verified_step(run: RunTrace) -> int:
    """The first step whose winner accepted tokens from a candidate (several tokens in one step)."""
    return next(s.index for s in run.lookahead.steps if s.winner >= 0 and s.match_lengths[s.winner] > 0)


def test_opens_offline_and_starts_at_the_prefill(page):
    pg, requests, errors = page
    assert requests and all(url.startswith(LOCAL_SCHEMES) for url in requests), requests
    assert errors == []
    assert counts(pg) == {"lookahead": (1, 1), "greedy": (1, 1)}  # the prefill is a step and yields a token
    assert pg.locator("script[src], link[href], img[src]").count() == 0


def test_slider_step_shows_the_trace(page, run):
    pg, _, _ = page
    k = verified_step(run) + 1
    goto_step(pg, k)
    for name, method in (("lookahead", run.lookahead), ("greedy", run.greedy)):
        upto, ids = tokens_at(method, k)
        assert counts(pg)[name] == (upto + 1, len(ids))
        assert pg.text_content(f"#text-{name}") == run.text(ids)
    assert counts(pg)["lookahead"][1] > counts(pg)["greedy"][1]
    assert pg.locator("#text-lookahead .tok.multi").count() > 0


def test_window_and_verification_show_the_step(page, run):
    pg, _, _ = page
    k = verified_step(run)
    step = run.lookahead.steps[k]
    goto_step(pg, k)
    ids = lambda sel: [int(v) for v in pg.eval_on_selector_all(sel, "els => els.map(e => e.dataset.id)")]
    assert ids("#window td[data-id]") == [t for row in step.levels_before + (step.new_level,) for t in row]
    assert ids("#window tr.new td[data-id]") == list(step.new_level)
    assert ids("#verify td.guess") == [t for row in step.candidates for t in row]
    assert ids("#verify td.pred") == [t for row in step.predictions for t in row]
    assert ids("#verify td.guess.match") == [t for c, m in zip(step.candidates, step.match_lengths) for t in c[:m]]
    assert ids("#verify td.bonus") == [step.predictions[step.winner][step.match_lengths[step.winner]]]
    assert ids("#verify .emit span[data-id]") == list(step.accepted)
    assert f"★ candidate {step.winner + 1}" in pg.text_content("#verify tr.winner th")
    (ROOT / "out").mkdir(exist_ok=True)
    pg.screenshot(path=str(ROOT / "out" / "export_html_replay.png"), full_page=True)


def test_next_and_play_advance(page, run):
    pg, _, _ = page
    goto_step(pg, 0)
    pg.click("#next")
    assert counts(pg)["greedy"] == (2, 2)  # step 1: two forward passes (prefill + one step), two tokens
    pg.click("#play")
    wait_until(lambda: int(pg.input_value("#slider")) >= 3)
    pg.click("#play")
    assert "Play" in pg.text_content("#play")


def test_token_text_cannot_inject_markup(browser, run, tmp_path):
    nasty = "</script><img src=x onerror=alert(1)><!--"
    first = run.lookahead.tokens[0]
    evil = dataclasses.replace(run, prompt=nasty, title=nasty, token_text={**run.token_text, first: nasty})
    out = tmp_path / "evil.html"
    out.write_text(render_html(evil), encoding="utf-8")
    pg, requests, errors = open_page(browser, out)
    assert errors == [] and all(url.startswith(LOCAL_SCHEMES) for url in requests)
    assert pg.locator("img").count() == 0
    assert pg.text_content("#text-lookahead").startswith(nasty)
    assert nasty in pg.text_content("#prompt") and pg.title() == nasty
    pg.close()


def test_bad_trace_raises_and_the_cli_says_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema": "lade-explorer/run", "version": 1, "run": {"prompt": "x"}}))
    with pytest.raises(TraceError):
        export_html(bad, tmp_path / "out.html")
    with pytest.raises(FileNotFoundError):
        export_html(tmp_path / "missing.json", tmp_path / "out.html")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "lade_core", "export-html", str(bad), str(tmp_path / "o.html")],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "error:" in out.stderr
    assert not (tmp_path / "o.html").exists()
