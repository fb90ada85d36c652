"""What the app's page may run, and what every answer tells the browser besides (round five, item 8).

Gradio's page is one HTML document whose inline scripts carry the page's configuration, so they differ from request
to request: a list of their hashes would hold for no two pages. The page gets a fresh nonce instead: every
`<script` tag of Gradio's template is given it on the way out, and the policy allows scripts that carry it and what
they load (`'strict-dynamic'`: Gradio's module and its chunks, the iframe resizer). The renderer's own scripts are
the head Gradio re-creates in the page (`gradio_adapter.head_scripts`): those are the same on every page, so they are
allowed by their SHA-256. Markup written into the page runs no script: a `<script>` tag the server did not send,
an inline handler (`onerror=`), a `javascript:` address and a framed document's script carry no nonce and are
refused. What the policy does not stop: a script that already runs making more (`'strict-dynamic'`, `Function`).

    Content-Security-Policy: script-src 'nonce-…' 'strict-dynamic' 'sha256-…' … 'unsafe-eval' 'wasm-unsafe-eval' 'self';
                             worker-src 'self' blob:; object-src 'none'; base-uri 'self'; form-action 'self'

- `'unsafe-eval'`: Gradio runs an HTML component's `js_on_load` (how the stage is mounted) through `Function`; a
  policy without it leaves the page blank. It lets a script that already runs make more script, not let a stranger's
  script in.
- `'wasm-unsafe-eval'` and `worker-src`: the race in the visitor's browser compiles onnxruntime's WebAssembly in its
  worker, a file of this app.
- `'self'` is for a browser that knows no `'strict-dynamic'` (one that does ignores it).
- `base-uri 'self'`: Gradio's template sets a `<base>` of its own root; one pointing elsewhere is refused.
- No `frame-ancestors`: embeds stay frameable by any lecture host. Styles, images and connections are left as they
  are: Gradio sets inline styles everywhere, and none of them runs code.

Only Gradio's page is given the nonce (`PAGE_PATHS`): the app's own HTML answers (a 404 page, a replay) write their
own policy, and a nonce added to a page that carries anyone's text could bless a tag smuggled into it. Gradio's
template escapes what it inserts (its JSON has no `<`, its attributes are escaped), so every `<script` in its page
is the template's own.

Every answer, whatever its path, also carries `X-Content-Type-Options: nosniff` (a file is run only as the type it
was served as) and `Referrer-Policy: no-referrer` (a link followed from a page sends no address of a run).
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets

from starlette.middleware import Middleware

EVERY_ANSWER = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
)
PAGE_PATHS = frozenset({"/", ""})  # Gradio's page (the app, an embed, a print: the same document and its query)
_SCRIPT_TAG = re.compile(rb"<script(?=[\s>])", re.IGNORECASE)


def script_hash(text: str) -> str:
    """The CSP source that allows the inline script whose text is `text`."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def policy(nonce: str, scripts: tuple[str, ...]) -> str:
    """The page's Content-Security-Policy for one answer: its nonce and the hashes of the renderer's `scripts`."""
    allowed = " ".join([f"'nonce-{nonce}'", "'strict-dynamic'", *map(script_hash, scripts)])
    return (
        f"script-src {allowed} 'unsafe-eval' 'wasm-unsafe-eval' 'self'; worker-src 'self' blob:; "
        "object-src 'none'; base-uri 'self'; form-action 'self'"
    )


def with_nonce(page: bytes, nonce: str) -> bytes:
    """`page` with every script tag given `nonce`."""
    return _SCRIPT_TAG.sub(b'<script nonce="' + nonce.encode() + b'"', page)


class PagePolicy:
    def __init__(self, app, scripts: tuple[str, ...] = ()):
        self.app, self.scripts = app, tuple(scripts)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        page = scope["method"] == "GET" and scope["path"] in PAGE_PATHS
        start: dict | None = None
        chunks: list[bytes] = []

        async def answer(message):
            nonlocal start
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {k.lower() for k, _ in headers}
                headers += [(k, v) for k, v in EVERY_ANSWER if k not in names]
                message = {**message, "headers": headers}
                html = any(k.lower() == b"content-type" and v.startswith(b"text/html") for k, v in headers)
                encoded = any(k.lower() == b"content-encoding" for k, _ in headers)
                if page and html and not encoded:
                    start = message  # held until the whole page has come: its length changes
                    return
            elif start is not None and message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if message.get("more_body"):
                    return
                return await self._send_page(send, start, b"".join(chunks))
            await send(message)

        return await self.app(scope, receive, answer)

    async def _send_page(self, send, start: dict, body: bytes) -> None:
        nonce = secrets.token_urlsafe(18)
        body = with_nonce(body, nonce)
        replaced = (b"content-length", b"content-security-policy")
        headers = [(k, v) for k, v in start["headers"] if k.lower() not in replaced]
        headers += [
            (b"content-length", str(len(body)).encode()),
            (b"content-security-policy", policy(nonce, self.scripts).encode()),
        ]
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": body, "more_body": False})


def middleware(scripts: tuple[str, ...] = ()) -> Middleware:
    """The policy as `launch(app_kwargs={"middleware": [...]})` takes it; `scripts`: the renderer's inline scripts
    that Gradio re-creates in the page (`gradio_adapter.head_scripts`)."""
    return Middleware(PagePolicy, scripts=scripts)
