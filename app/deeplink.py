"""Deep links to the shipped runs (`/?run=code-fib&step=12[&embed=1]`) and the embed snippets built from them.

`resolve(query, runs)` turns the page's query parameters into (run name, step, notice): a bad run name or step falls
back (to the default run, or the run's opening step) with a one-line notice, never an error. `page_origin(headers,
url)` is the public origin of the page (behind a proxy such as a Hugging Face Space it trusts x-forwarded-host and
x-forwarded-proto), so the links work where the app is served. `embed_html` is the Embed panel: the link, an
<iframe> and a <gradio-app> snippet for the run and step. All pure functions of strings.
"""

from __future__ import annotations

import html
import re
from urllib.parse import urlencode, urlsplit

from gradio import __version__ as GRADIO_VERSION

_STEP = re.compile(r"\d{1,6}")


def short_id(name: str) -> str:
    """The id of a shipped run before its settings: 'code-fib-W7N4G7' -> 'code-fib'."""
    return re.sub(r"-W\d+N\d+G\d+$", "", name)


def find_run(wanted: str, names) -> str | None:
    """The shipped run named `wanted`, by full stem or short id (case-insensitive); None if there is none."""
    wanted = (wanted or "").strip().lower()
    for name in names:
        if wanted in (name.lower(), short_id(name).lower()):
            return name
    return None


def resolve(query: dict, names, default: str) -> tuple[str | None, str | None, str]:
    """(run name or None if the query names none, step text or None, notice) for the query parameters.

    The step is checked against the run later (`check_step`); here it only has to be a plain number.
    """
    wanted, step = query.get("run"), query.get("step")
    if wanted is None and step is None:
        return None, None, ""
    name = find_run(wanted, names) if wanted is not None else default
    notice = ""
    if name is None:
        shown = html.escape(str(wanted)[:40])
        notice = f"No shipped run is called “{shown}”; showing {default} (runs: {', '.join(map(short_id, names))})."
        name, step = default, None
    return name, step, notice


def check_step(step: str | None, last: int, fallback: int) -> tuple[int, str]:
    """(step to show, notice): the requested step if it is a whole number in 0..last, else `fallback`."""
    if step is None:
        return fallback, ""
    text = str(step).strip()
    if _STEP.fullmatch(text) and int(text) <= last:
        return int(text), ""
    shown = html.escape(text[:20])
    return fallback, f"Step “{shown}” is not a step of this run (0 to {last}); showing step {fallback}."


def wants_embed(query: dict) -> bool:
    return str(query.get("embed", "")).lower() in ("1", "true", "yes")


def _first(value: str | None) -> str:
    return (value or "").split(",")[0].strip()


def page_origin(headers: dict, url: str) -> str:
    """'https://host' of the page: x-forwarded-host/-proto behind a proxy, else the Host header, else the URL."""
    headers = {k.lower(): v for k, v in (headers or {}).items()}
    parts = urlsplit(url or "")
    host = _first(headers.get("x-forwarded-host")) or _first(headers.get("host")) or parts.netloc or "localhost"
    scheme = _first(headers.get("x-forwarded-proto")) or parts.scheme or "http"
    if scheme not in ("http", "https") or not re.fullmatch(r"[A-Za-z0-9.\-\[\]:]+", host):
        return "http://localhost"
    return f"{scheme}://{host}"


def link(origin: str, name: str, step: int, embed: bool = False) -> str:
    query = {"run": short_id(name), "step": int(step)}
    if embed:
        query["embed"] = 1
    return f"{origin}/?{urlencode(query)}"


def embed_html(origin: str, name: str | None, step: int) -> str:
    """The Embed panel for the shipped run `name` at `step`; a short explanation for runs that are not shipped."""
    if name is None:
        return ('<div class="embed-box"><p class="muted">Deep links open the shipped runs only. To share this run, '
                'download its trace (others open it with “Open a saved run”) or export it as one HTML file.'
                '</p></div>')
    page, compact = link(origin, name, step), link(origin, name, step, embed=True)
    iframe = f'<iframe src="{compact}" width="100%" height="900" style="border:0" loading="lazy"></iframe>'
    web = (f'<script type="module" src="https://gradio.s3-us-west-2.amazonaws.com/{GRADIO_VERSION}/gradio.js">'
           f'</script>\n<gradio-app src="{compact}"></gradio-app>')
    rows = (("Link to this run at this step", page), ("Embed in a page or slide (iframe, compact view)", iframe),
            ("Gradio web component", web))
    body = "".join(f'<div class="embed-row"><div class="muted">{title}</div><pre class="snippet">{html.escape(code)}'
                   f'</pre></div>' for title, code in rows)
    return f'<div class="embed-box" data-run="{html.escape(name)}">{body}</div>'
