"""Cross-origin isolation for the app's own pages, so that the race in the visitor's browser may use several threads.

onnxruntime-web runs on more than one WebAssembly thread only where the page is cross-origin isolated (its threads
share memory through SharedArrayBuffer, which a browser gives only to such a page). Every answer of the app carries

    Cross-Origin-Opener-Policy: same-origin        the page shares no browsing context group with other origins
    Cross-Origin-Embedder-Policy: credentialless   what it loads from other origins comes without their cookies

`credentialless` rather than `require-corp`: Gradio's page may load a file from another origin (a font, a Space's
own script) that sends no Cross-Origin-Resource-Policy, which `require-corp` would refuse; Chromium and Firefox
isolate the page under either, a browser that knows neither (Safari, at the time of writing) leaves the page as it
was and the race on one thread, and the panel says why. The engine's worker and its files are the app's own, so
nothing they load is refused. A page framed by a host that is not isolated (huggingface.co's Space page, a slide)
is not isolated whatever its own headers say; the panel says that too (lade-browser-race.js `threading`).

A plain ASGI middleware, outside the guard, so that the guard's own answers (a 404 page) carry the headers too.
"""

from __future__ import annotations

from starlette.middleware import Middleware

HEADERS = (
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-embedder-policy", b"credentialless"),
)


class Isolation:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def with_headers(message):
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k, v) for k, v in HEADERS if k not in names]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        return await self.app(scope, receive, with_headers)


def middleware() -> Middleware:
    """The isolation headers as `launch(app_kwargs={"middleware": [...]})` takes them."""
    return Middleware(Isolation)
