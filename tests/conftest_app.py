"""Shared set-up of the app and browser tests: the one way they start the app (`serve_app`: a subprocess on a free
port, waited for until it answers) and Chromium (Debian's, driven by Playwright; no browser download).

Imported by those tests (not a pytest conftest). A missing Chromium fails these tests with the command that installs
it, rather than skipping them: a green run must mean the browser tests ran.
"""

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from app.process import (  # noqa: F401 (the app without its model; a process's RSS; the tests' Chromium)
    CHROMIUM,
    CHROMIUM_ARGS,
    NO_MODEL,
    answers,
    free_port,
    rss_mb,
)
from lade_core.paths import ROOT

OUT = ROOT / "out"
SHOTS = OUT / "screenshots"
CHAPTERS = 9  # the lesson's chapters (app/static/lade-lesson.js), as the tests expect them


@contextmanager
def serve_app(command: list[str], log_name: str, **env):
    """Run `python <command>` from the repo root on a free port; yield (url, process) once the page answers."""
    port = free_port()
    env = dict(os.environ, GRADIO_SERVER_PORT=str(port), GRADIO_SERVER_NAME="127.0.0.1", **env)
    OUT.mkdir(exist_ok=True)
    with open(OUT / log_name, "w") as log:
        proc = subprocess.Popen([sys.executable, *command], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}/"
        if not answers(url, proc, seconds=180):
            proc.kill()
            pytest.fail(f"the app did not start (see out/{log_name})")
        try:
            yield url, proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


def launch_chromium(pw):
    """Debian's Chromium under Playwright; fails with the install command when it is missing."""
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"{CHROMIUM} is missing: install Debian's Chromium with `apt-get install -y chromium` "
            f"(.ci/run does this) to run the browser tests"
        )
    return pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


@contextmanager
def chromium_browser():
    """A Chromium for a test module (screenshots go to SHOTS)."""
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            yield browser
        finally:
            browser.close()


def upload(page, path: Path) -> None:
    """Open a trace file through the page's "Open a saved run" button."""
    with page.expect_file_chooser() as chooser:
        page.click("#open-run")
    chooser.value.set_files(str(path))


def no_model_app(log_name: str, **env):
    """The app as `python app.py` starts it, without its model (the lesson, gallery, traces, embeds need none).
    Every page here is one client (127.0.0.1): the per-client limits are off unless `env` sets LADE_PER_CLIENT (they
    are tested in tests/test_guard.py and tests/test_routes.py)."""
    return serve_app(["-c", NO_MODEL], log_name, **{"HF_HUB_OFFLINE": "1", "LADE_PER_CLIENT": "0", **env})


def new_page(browser, width=1280, height=900, **options):
    """A tab that records its page errors (a refusal by the page's policy among them) and the requests it makes to
    the app's server (`page.server_requests`: its events and the runs it reads at their addresses; heartbeats left
    out: Gradio keeps one open per page)."""
    page = browser.new_page(viewport={"width": width, "height": height}, **options)
    page.set_default_timeout(60_000)
    page.errors, page.server_requests = [], []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    # a script, worker or WebAssembly the page's Content-Security-Policy refused (app/page_policy.py) is an error too
    page.on("console", lambda m: page.errors.append(m.text) if "Content Security Policy" in m.text else None)
    page.wait_for_function = _saying_why(page, page.wait_for_function)
    page.on(
        "request",
        lambda r: page.server_requests.append(r.url)
        if ("/gradio_api/" in r.url or "/runs/" in r.url) and "heartbeat" not in r.url
        else None,
    )
    return page


# What a page shows when a wait for it ran out: the stage's state, its status lines and its notices, so that a test
# that times out says where the page was (a bare TimeoutError says nothing of it).
PAGE_STATE = """() => {
    const s = window.ladeStage, text = (q) => [...document.querySelectorAll(q)].map((e) => e.innerText.trim());
    const plain = s && s.state ? Object.entries(s.state).filter(([, v]) => typeof v !== "object") : null;
    const state = plain && Object.fromEntries(plain);
    const status = text("[role=status], .race-title"), alerts = text("[role=alert]");
    return JSON.stringify({ url: location.href, state, status, alerts }).slice(0, 3000);
}"""


def _saying_why(page, wait):
    """`page.wait_for_function` that, when it times out, raises with the page's state and errors in its message."""

    def waited(*args, **kwargs):
        try:
            return wait(*args, **kwargs)
        except PlaywrightTimeout as timeout:
            try:
                where = page.evaluate(PAGE_STATE)
            except Exception as err:  # the page itself may be gone
                where = f"(the page could not be read: {err})"
            raise PlaywrightTimeout(f"{timeout.message}\nthe page: {where}\nits errors: {page.errors[-5:]}") from None

    return waited


def open_app(page, url: str, condition: str = "s.run()"):
    """Load the app at `url` and wait until `condition` holds of the stage `s` (window.ladeStage)."""
    page.goto(url)
    page.wait_for_function(f"() => {{ const s = window.ladeStage; return !!s && !!({condition}); }}")
    return page


RUN_OFF = """() => {
    const edge = document.documentElement.clientWidth, out = [];
    const scrolled = (el) => {
        for (let p = el.parentElement; p && !p.classList.contains('lade-stage'); p = p.parentElement) {
            const s = getComputedStyle(p);
            if (/auto|scroll/.test(s.overflowX) && p.scrollWidth > p.clientWidth + 1) return true;
        }
        return false;
    };
    for (const el of document.querySelectorAll('.lade-stage *')) {
        const r = el.getBoundingClientRect();
        if (r.width && r.right > edge + 1 && !scrolled(el))
            out.push(`${el.tagName.toLowerCase()}#${el.id}.${el.className} ends at ${Math.round(r.right)} px`);
    }
    return out.slice(0, 5);
}"""


def run_off(page) -> list[str]:
    """What in the stage ends past the window's right edge outside a scroll box of its own (a box that scrolls shows
    its cue): Gradio's frame clips sideways, so the page does not scroll and the cut goes unseen."""
    return page.evaluate(RUN_OFF)


def state(page, key: str):
    """One field of the stage's state (`ladeStage.state[key]`)."""
    return page.evaluate("k => window.ladeStage.state[k]", key)


LAB_SETTLED = """() => { const s = window.ladeStage, r = s && s.run();
    if (!r || !s.readsLab() || r.d.lab || s.source.kind === 'inline') return true;
    const why = s.labStatus(r); return why !== undefined && why !== 'asking'; }"""


def lab_settled(page) -> None:
    """Wait until the run on screen has its lab figures, where what is shown reads them (the lab, chapter 8): they
    are asked of the run's address when it is shown (Stage.askLab) and drawn when they come."""
    page.wait_for_function(LAB_SETTLED)


def settled(page, quiet_ms: int = 1000, most_ms: int = 30_000) -> None:
    """Wait until the page has made no server request for `quiet_ms` (Gradio keeps a connection open, so
    Playwright's "networkidle" never comes)."""
    waited, seen = 0, -1
    while waited < most_ms and seen != len(page.server_requests):
        seen = len(page.server_requests)
        page.wait_for_timeout(quiet_ms)
        waited += quiet_ms
