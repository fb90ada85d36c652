"""A 404 a person can read: a mistyped path in a browser gets a page with a title, a language and a way back; a
program (no text/html in Accept) gets JSON. Gradio's own 404s reach it as an exception handler (`routes.
EXCEPTION_HANDLERS`); a path outside the routes the server answers is answered with it by the guard, before Gradio
sees the request."""

from __future__ import annotations

import json
from html import escape

from fastapi.exception_handlers import http_exception_handler
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

NOT_FOUND = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Not found · Lookahead Decoding Explorer</title>
<style>:root{{color-scheme:light dark}}
body{{font:18px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;
color:light-dark(#1f2937,#e5e7eb);background:light-dark(#fff,#111827)}}
a{{color:light-dark(#3730a3,#a5b4fc)}}
a:focus-visible{{outline:3px solid currentColor;outline-offset:2px}}</style></head>
<body><main><h1>There is nothing at this address</h1>
<p>The Lookahead Decoding Explorer has no page at <code>{path}</code>.</p>
<p><a href="{home}">Open the lesson</a>, or the explorer's gallery from there.</p></main></body></html>
"""


def page(scope) -> tuple[bytes, bytes] | None:
    """(body, content type) of the 404 page for a request that asks for HTML, else None."""
    request = Request(scope)
    if "text/html" not in request.headers.get("accept", ""):
        return None
    home = str(scope.get("root_path", "")) + "/"
    text = NOT_FOUND.format(path=escape(request.url.path[:200]), home=escape(home))
    return text.encode(), b"text/html; charset=utf-8"


def answer(scope) -> tuple[bytes, bytes]:
    """(body, content type) of a 404 for `scope`: the page, or FastAPI's JSON."""
    return page(scope) or (json.dumps({"detail": "Not Found"}).encode(), b"application/json")


async def not_found(request: Request, exc: Exception) -> Response:
    """Gradio's HTTP errors: a 404 asked for as HTML gets the page; every other case is FastAPI's own handler."""
    shown = page(request.scope) if getattr(exc, "status_code", None) == 404 else None
    if shown:
        return HTMLResponse(shown[0], 404)
    return await http_exception_handler(request, exc)
