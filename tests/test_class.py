"""A class presses Run at once (issue 56), against the app with its model: identical requests follow one run, on the
page and through `/generate`; one asker's Stop leaves the run to the others and the last one's ends it; a visitor
the engine's queue has no room for is told when to try again and offered the same race in the browser.

The app runs as `python app.py --trust-proxy 1 --engine-queue 2`: each API client here is its own address (its own
X-Forwarded-For), each page too, and the engine's queue holds two waiting runs so that a test can hold it
full with three. On the landed code each identical request made its own run (a class of 30 on five prompts made 30
runs in a row; 5 were told Gradio's "Queue is full! Please try again.").
"""

import time

import httpx
import pytest
from conftest_app import SHOTS, new_page, open_app, serve_app, state
from gradio_client import Client

pytestmark = [pytest.mark.server, pytest.mark.model, pytest.mark.browser]
RACE = {"window": 5, "ngram": 4, "guess": 5}
LONG = "Write a long story about a lighthouse keeper who counts the ships that pass."
# the page's race: its running, and its stopped lanes (every one ended, "cancelled")
RACING = (
    "() => { const s = window.ladeStage, h = s && s.state.live, r = h && s.runs.get(h); "
    "return !!r && r.t.parallel.stop_reason === 'running' && r.t.parallel.steps.length > 2; }"
)
STOPPED = (
    "() => { const s = window.ladeStage, h = s.state.live, r = h && s.runs.get(h); return !!r && "
    "r.lanes().every(l => !r.running(l.id)) && r.t.parallel.stop_reason === 'cancelled'; }"
)


@pytest.fixture(scope="module")
def app_url():
    command = ["app.py", "--trust-proxy", "1", "--engine-queue", "2"]
    with serve_app(command, "class-server.log", OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1") as (url, _):
        client(url, "10.1.0.1").predict(prompt="Warm up.", max_new_tokens=2, api_name="/generate")  # model loaded
        yield url


def client(url: str, address: str) -> Client:
    return Client(url, headers={"X-Forwarded-For": address}, verbose=False)


def runs_held(url: str) -> int:
    """How many runs the server's store holds (every live run is added once, under its handle)."""
    return httpx.get(url + "runs/none/held.json").json()["runs"]


def sidebar_race(page, prompt: str, tokens: int, window: int = 5, ngram: int = 4, guess: int = 5) -> None:
    """Set the sidebar's race: the prompt, W, N, G and new tokens (the rest at their defaults)."""
    page.fill("#prompt textarea", prompt)
    for elem, value in (("window-w", window), ("ngram-n", ngram), ("guess-g", guess), ("max-new-tokens", tokens)):
        box = page.locator(f"#{elem} input[type=number]")
        box.fill(str(value))
        box.press("Enter")


_pages = iter(range(1, 250))


def open_page(chromium, url: str):
    """A page at an address of its own (as each student is; two pages at one address would share its per-client
    limits: at most 2 request bodies arriving at once, 2 runs)."""
    page = new_page(chromium, 1400, 1000)
    page.set_extra_http_headers({"X-Forwarded-For": f"10.2.0.{next(_pages)}"})
    open_app(page, url + "?run=code-class", "s.state.mode === 'explorer'")
    page.click("#run-yourself")
    return page


def test_a_class_on_one_prompt_through_generate_is_one_run_with_one_summary(app_url):
    """Three students at three addresses call /generate with the same request at once, a fourth another: two runs
    are made, not four, and the three get the same summary, token for token, exact (on the landed code four runs,
    one after another)."""
    before = runs_held(app_url)
    asks = ["Name three fruits."] * 3 + ["Name three colours."]
    jobs = [
        client(app_url, f"10.1.1.{i}").submit(prompt=p, max_new_tokens=24, **RACE, api_name="/generate")
        for i, p in enumerate(asks)
    ]
    got = [job.result(timeout=300) for job in jobs]
    assert got[0] == got[1] == got[2] and got[0]["exact"] and got[3]["exact"]
    assert got[0]["lookahead"]["tokens"] != got[3]["lookahead"]["tokens"]
    assert runs_held(app_url) - before == 2


def test_the_page_and_generate_asking_the_same_race_watch_one_run_and_get_the_same_tokens(chromium, app_url):
    """A page presses Run, and a script asks /generate for the same race while it runs: the script joins the page's
    run (one run more in the store, not two), the page says the run is shared, and the summary's tokens are the
    run's on the page, token for token."""
    prompt = "List three uses of a hash map, one line each."
    page = open_page(chromium, app_url)
    sidebar_race(page, prompt, 48)
    before = runs_held(app_url)
    page.click("#run")
    page.wait_for_function("() => window.ladeStage.state.live")
    job = client(app_url, "10.1.2.1").submit(
        prompt=prompt, max_new_tokens=48, pool_from_prompt=None, methods=["lookahead"], **RACE, api_name="/generate"
    )
    page.wait_for_function("() => /You and 1 other are watching this run/.test(document.body.innerText)")
    page.screenshot(path=str(SHOTS / "class-shared-run.png"))
    summary = job.result(timeout=300)
    page.wait_for_function("() => /^Finished\\./.test(document.querySelector('.race-title').innerText)")
    run = page.evaluate("h => window.ladeStage.runs.get(h).t", state(page, "live"))
    assert summary["lookahead"]["tokens"] == run["parallel"]["tokens"] and summary["exact"]
    assert summary["baseline"]["tokens"] == run["baseline"]["tokens"]
    assert summary["lookahead"]["steps"] == len(run["parallel"]["steps"])
    assert runs_held(app_url) - before == 1
    assert page.errors == []
    page.close()


def test_one_joiners_stop_leaves_the_run_to_the_other_and_the_last_ones_stop_ends_it(chromium, app_url):
    """Two pages press Run on the same long race and follow one run. The first one's Stop leaves it: that page says
    the run goes on for the other, and the other's lanes keep writing. The second one's Stop ends it at its next step:
    its lanes end "cancelled", and the engine is free for the next run at once."""
    first, second = open_page(chromium, app_url), open_page(chromium, app_url)
    for page in (first, second):
        sidebar_race(page, LONG, 512, window=2, ngram=2, guess=2)
        page.click("#run")
    for page in (first, second):
        page.wait_for_function(RACING, timeout=120_000)
    assert state(first, "live") == state(second, "live")
    first.click("#stop")
    first.wait_for_function(
        "() => /1 other is still watching it, so it goes on/.test(window.ladeStage.state.notice || '')"
    )
    steps = lambda: second.evaluate(  # noqa: E731
        "() => { const s = window.ladeStage; return s.runs.get(s.state.live).t.parallel.steps.length; }"
    )
    at = steps()
    second.wait_for_timeout(3000)
    assert steps() > at + 2, "the other page's run stopped with the first one's Stop"
    second.click("#stop")
    second.wait_for_function(STOPPED, timeout=45_000)
    second.wait_for_function("() => (window.ladeStage.state.notice || '').includes('Live run stopped')")
    t0 = time.perf_counter()
    client(app_url, "10.1.3.1").predict(prompt="Name three fruits.", max_new_tokens=4, **RACE, api_name="/generate")
    assert time.perf_counter() - t0 < 30, "the engine was still busy with the stopped run"
    assert first.errors == second.errors == []
    first.close()
    second.close()


def test_a_visitor_the_queue_has_no_room_for_is_told_when_and_offered_the_race_in_the_browser(chromium, app_url):
    """The engine's queue held full (one long run on the engine, two waiting): the page's Run is refused with one
    sentence naming the seconds after which to try again, and the sidebar offers the same race in this browser; the
    offer opens "Race it in your browser" with the same prompt, W, N, G and new tokens and starts it. A script is told
    the same sentence; Gradio's "Queue is full" is never said. axe finds nothing in the new state."""
    from test_a11y_browser import run_axe

    holders = [
        client(app_url, f"10.1.4.{i}").submit(
            prompt=f"{LONG} Part {i}.", max_new_tokens=512, **RACE, api_name="/generate"
        )
        for i in range(3)
    ]
    try:
        deadline = time.monotonic() + 120
        while not any(job.outputs() and job.outputs()[-1].get("lookahead", {}).get("steps") for job in holders):
            assert time.monotonic() < deadline, "the long runs never started"
            time.sleep(0.5)
        with pytest.raises(Exception) as refused:
            client(app_url, "10.1.4.9").predict(prompt="Name three birds.", max_new_tokens=8, api_name="/generate")
        said = str(refused.value)
        assert "try again in" in said and "Queue is full" not in said, said

        page = open_page(chromium, app_url)
        page.route("**/engine/**", lambda route: route.abort())  # the offer starts the race: keep its download off
        prompt = "Explain in two sentences why the sky is blue."
        sidebar_race(page, prompt, 40, window=6, ngram=3, guess=4)
        page.click("#run")
        page.wait_for_selector("#race-offer")
        text = page.inner_text("#run-offer")
        assert "The engine's queue is full: 2 runs are waiting" in text and "try again in" in text, text
        assert "Queue is full" not in page.inner_text("body")
        for width in (1280, 390):  # the sidebar's offer on a laptop and on a phone
            page.set_viewport_size({"width": width, "height": 900})
            page.locator("#run-offer").scroll_into_view_if_needed()
            page.screenshot(path=str(SHOTS / f"class-queue-full-offer-{width}.png"))
            assert run_axe(page, f"queue-full-offer-{width}") == []
        page.click("#race-offer")
        page.wait_for_function("() => !document.querySelector('#browser-race').hidden")
        fields = page.evaluate(
            "() => ['prompt', 'w', 'n', 'g', 'tokens'].map(k => document.querySelector('#browser-race-' + k).value)"
        )
        assert fields == [prompt, "6", "3", "4", "40"], fields
        page.wait_for_function(
            "() => document.querySelector('#browser-race-status').textContent !== ''"
        )  # it started (and, its files kept off here, said why it could not run)
        assert page.errors == []
        page.close()
    finally:
        for job in holders:
            job.cancel()


def test_a_long_wait_is_shown_with_its_place_and_the_offer(chromium, app_url):
    """A page whose race waits behind a long one sees its place and the predicted wait in the race's status, and,
    the wait being long, the offer to race in the browser beside it; the offer goes once the race starts."""
    holder = client(app_url, "10.1.5.1").submit(prompt=LONG, max_new_tokens=512, **RACE, api_name="/generate")
    try:
        deadline = time.monotonic() + 120
        while not (holder.outputs() and holder.outputs()[-1].get("lookahead", {}).get("steps")):
            assert time.monotonic() < deadline, "the long run never started"
            time.sleep(0.5)
        page = open_page(chromium, app_url)
        sidebar_race(page, "Name three birds.", 8)
        page.click("#run")
        page.wait_for_function("() => /Waiting for the engine: 1 run ahead of this one/.test(document.body.innerText)")
        page.wait_for_selector("#race-offer")
        assert "Waiting for the engine: 1 run ahead" in page.inner_text("#run-offer")
        holder.cancel()
        page.wait_for_function("() => /^Finished\\./.test(document.querySelector('.race-title').innerText)")
        assert page.locator("#race-offer").count() == 0
        assert page.errors == []
        page.close()
    finally:
        holder.cancel()


def test_the_per_client_limit_counts_a_joined_run(app_url):
    """Two tabs at one address ask the same long race: they follow one run (one run more in the store), and each
    counts as one of that visitor's runs, so a third request from that address is refused by the per-client limit
    (2), while the run goes on for its two askers."""
    before = runs_held(app_url)
    ask = dict(prompt=f"{LONG} Twice.", max_new_tokens=512, **RACE, api_name="/generate")
    tabs = [client(app_url, "10.1.6.1").submit(**ask) for _ in range(2)]
    try:
        deadline = time.monotonic() + 120
        while not all(job.outputs() for job in tabs):
            assert time.monotonic() < deadline, "the run never answered"
            time.sleep(0.5)
        assert runs_held(app_url) - before == 1
        with pytest.raises(httpx.HTTPStatusError) as refused:  # the guard's, before the queue (app/guard.py)
            client(app_url, "10.1.6.1").predict(prompt="Name three birds.", max_new_tokens=4, api_name="/generate")
        assert refused.value.response.status_code == 429
    finally:
        for job in tabs:
            job.cancel()
