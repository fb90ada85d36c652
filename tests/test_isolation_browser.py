"""All of the visitor's cores where the page can have them (issue 50): the app's own answers carry the
cross-origin-isolation headers (app/isolation.py), so its page is cross-origin isolated in Chromium, the race's
worker may run onnxruntime-web on several threads, and Gradio's page still works under them. On the landed code the
app sent no such header and every race ran on one thread. (The static site's service worker, and a page framed by a
host that is not isolated: tests/test_site_browser.py.)"""

import urllib.request

import pytest
from conftest_app import new_page, open_app

pytestmark = [pytest.mark.server, pytest.mark.browser]
WANTED = {"cross-origin-opener-policy": "same-origin", "cross-origin-embedder-policy": "credentialless"}


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
