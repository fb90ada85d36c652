"""All of the visitor's cores where the page can have them (issue 50): the app's own answers carry the
cross-origin-isolation headers (app/isolation.py), so its page is cross-origin isolated in Chromium, the race's
worker may run onnxruntime-web on several threads, and Gradio's page still works under them. On the landed code the
app sent no such header and every race ran on one thread. (The static site's service worker, and a page framed by a
host that is not isolated: tests/test_site_browser.py.)"""

import urllib.request

import pytest
from conftest_app import new_page, open_app

pytestmark = [pytest.mark.server, pytest.mark.browser]
WANTED = {
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-embedder-policy": "credentialless",
    "x-content-type-options": "nosniff",  # app/page_policy.py, on every answer too
    "referrer-policy": "no-referrer",
}


def headers_of(url: str) -> dict:
    try:
        with urllib.request.urlopen(url, timeout=60) as res:
            return {k.lower(): v for k, v in res.headers.items()}
    except urllib.error.HTTPError as err:
        return {k.lower(): v for k, v in err.headers.items()}


def test_the_apps_pages_are_cross_origin_isolated(chromium, page_server):
    url = page_server[0]
    for path in ("", "?lesson=3", "runs/code-class-W7N4G7.json", "no/such/page"):  # a page, a run, the guard's 404
        got = headers_of(url + path)
        assert all(got.get(k) == v for k, v in WANTED.items()), (path, got)
    page = new_page(chromium)
    open_app(page, url + "?run=code-class", "s.state.mode === 'explorer'")
    assert page.evaluate("() => self.crossOriginIsolated && typeof SharedArrayBuffer === 'function'")
    before = page.evaluate("() => window.ladeStage.state.k")
    page.click("#step-next")  # the page still steps under the headers
    page.wait_for_function("k => window.ladeStage.state.k === k + 1", arg=before)
    assert page.errors == []
    page.close()


def test_the_page_runs_under_its_policy_and_markup_written_into_it_runs_no_script(chromium, page_server):
    """Round five, item 8: Gradio's page had no Content-Security-Policy, so a script written into it (an injected tag,
    an inline handler) would run. Under the policy (app/page_policy.py) the lesson, a gallery run and the speed lab
    work with nothing refused, and markup written into the page runs no script. (The race's worker under it: every
    browser test of the app with its model counts a refusal as a page error.)"""
    url = page_server[0]
    got = headers_of(url + "?lesson=3")
    assert "'strict-dynamic'" in got.get("content-security-policy", ""), got  # on the landed code: no policy
    page = new_page(chromium)
    open_app(page, url + "?lesson=3", "s.state.mode === 'lesson'")
    open_app(page, url + "?run=code-class", "s.state.mode === 'explorer'")
    before = page.evaluate("() => window.ladeStage.state.k")
    page.click("#step-next")
    page.wait_for_function("k => window.ladeStage.state.k === k + 1", arg=before)
    open_app(page, url + "?run=code-class&mode=lab", "s.state.mode === 'lab'")
    assert page.errors == [], page.errors
    # markup written into the page (as a prompt or a trace would be, were one ever drawn as markup): a handler, a
    # javascript: address and a framed document's script carry no nonce, so none runs
    ran = page.evaluate(
        """() => new Promise((done) => {
            const box = document.createElement("div");
            box.innerHTML = '<img src="data:," onerror="window.__handler = true">' +
                '<a id="__js" href="javascript:window.__link = true">x</a>' +
                '<iframe srcdoc="<script>parent.__framed = true</script>"></iframe>';
            document.body.appendChild(box);
            document.getElementById("__js").click();
            setTimeout(() => done([!!window.__handler, !!window.__link, !!window.__framed]), 500);
        })"""
    )
    assert ran == [False, False, False]
    assert any("Content Security Policy" in e for e in page.errors)  # refused, and said so
    page.close()
