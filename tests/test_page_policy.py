"""The policy of every page this project writes (a run's HTML export, the static site's page): a Content-Security-Policy
that fetches nothing from elsewhere and refuses a <base>, a form's post and plugins, and a referrer policy that sends
no address to another site (round five, item 8; the landed pages set no base-uri, form-action or referrer policy)."""

import re

from app import gallery
from app.render.export import render_html
from app.render.site import index_html


def policy(page: str) -> dict[str, str]:
    meta = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page)
    assert meta, "no Content-Security-Policy"
    return {d.split()[0]: " ".join(d.split()[1:]) for d in meta.group(1).split(";") if d.strip()}


def test_an_export_and_the_site_refuse_a_base_a_form_and_plugins():
    pages = {
        "export": render_html(gallery.load(gallery.names()[0])),
        "site": index_html(None, None),
        "site with the engine": index_html(None, None, engine={"files": []}),
    }
    for name, page in pages.items():
        p = policy(page)
        assert p["default-src"] == "'none'", name
        assert (p["base-uri"], p["object-src"], p["form-action"]) == ("'none'",) * 3, (name, p)
        assert "frame-ancestors" not in p, name  # embeds stay frameable (and a meta policy cannot set it)
        assert '<meta name="referrer" content="no-referrer">' in page, name
    assert policy(pages["export"])["connect-src"] == "'none'"  # an export fetches nothing at all
    assert policy(pages["site"])["connect-src"] == "'self'"  # the site only the files beside it


# -- the app's page (app/page_policy.py) ---------------------------------------------------------------------------
def _answer(path: str, body: bytes, kind: bytes = b"text/html; charset=utf-8", scripts=("one();",)):
    """What `PagePolicy` sends for an app that answers `body` at `path`: (status, headers, body)."""
    import asyncio
    import concurrent.futures

    from app.page_policy import PagePolicy

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", kind)]})
        half = len(body) // 2
        await send({"type": "http.response.body", "body": body[:half], "more_body": True})
        await send({"type": "http.response.body", "body": body[half:], "more_body": False})

    sent = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    scope = {"type": "http", "method": "GET", "path": path, "headers": []}
    # in a thread of its own: a browser test's Playwright may hold this thread's event loop
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, PagePolicy(app, scripts=scripts)(scope, receive, send)).result()
    start, parts = sent[0], [m.get("body", b"") for m in sent[1:]]
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, b"".join(parts)


def test_the_apps_page_runs_only_its_own_scripts_and_every_answer_is_hardened():
    """Round five, item 8: Gradio's page had no Content-Security-Policy. Its scripts (inline, built per request) get
    one fresh nonce each answer; the renderer's scripts Gradio re-creates are allowed by their hash; a worker, the
    engine's WebAssembly and Gradio's `js_on_load` still run; no base, plugin or foreign form; embeds stay frameable.
    Every answer, the page or not, says nosniff and sends no referrer."""
    from app.page_policy import script_hash

    page = b'<html><head><script>window.a = 1;</script><SCRIPT type="module" src="./x.js"></SCRIPT></head></html>'
    status, headers, body = _answer("/", page)
    csp = {d.split()[0]: d.split()[1:] for d in headers["content-security-policy"].split(";") if d.strip()}
    nonce = re.search(r"'nonce-([^']+)'", headers["content-security-policy"]).group(1)
    assert body.count(f'nonce="{nonce}"'.encode()) == 2 and int(headers["content-length"]) == len(body)
    assert script_hash("one();") in csp["script-src"] and "'strict-dynamic'" in csp["script-src"]
    assert {"'unsafe-eval'", "'wasm-unsafe-eval'"} <= set(csp["script-src"])
    assert "'unsafe-inline'" not in csp["script-src"] and csp["worker-src"] == ["'self'", "blob:"]
    assert csp["object-src"] == ["'none'"] and csp["base-uri"] == ["'self'"]
    assert "frame-ancestors" not in csp and "default-src" not in csp
    assert _answer("/", page)[1]["content-security-policy"] != headers["content-security-policy"]  # a nonce each time
    for path, kind in (("/runs/x.json", b"application/json"), ("/no/such", b"text/html"), ("/", b"application/json")):
        _, other, body = _answer(path, page, kind)
        assert "content-security-policy" not in other and b"nonce" not in body, path  # only Gradio's page
        assert (other["x-content-type-options"], other["referrer-policy"]) == ("nosniff", "no-referrer"), path
    # `echo -n x | sha256sum`, as base64
    assert script_hash("x") == "'sha256-LXEWQrcmsEQBYnyp+6wy9chTD7GQPMTbAiWHF5IaSIE='"
