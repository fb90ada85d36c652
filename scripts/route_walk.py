"""Which of the server's routes the page and the public API use: the walk the guard's allow-list is derived from.

    python -m scripts.route_walk --out out/route-walk.json            # behind the guard's allow-list, as served
    python -m scripts.route_walk --open --out out/route-walk-open.json  # every route open: what the walk would ask

Starts the app in this process as `python app.py` serves it (`app.serve.launch`, the model loaded, the browser
engine's files served), with a recorder in front of the guard that notes every request as it arrived and the status
it was answered. Then walks what people do: in Chromium, the lesson (chapters, a question, a deep link), the
explorer, the speed lab, an embed, a chapter slide, Present, the whole-lesson handout, the theme, the sidebar (a
setting's arithmetic, the expected wait, a gallery run, Auto, a live race to its end and one stopped, a saved run
opened, its trace and replay downloaded, its link copied), "Race it in your browser" (the engine loaded and a short
race), Gradio's "Use via API" page and a mistyped address; then a script with `gradio_client` (the API listing,
`/generate` to its end, one streamed and cancelled, one refused) and one with `@gradio/client` (the README's example:
the same with the JavaScript client). Each request is matched to the route template
Gradio or the app mounts (`gradio_adapter.mounted`).

Written: the templates used (method and path) with their request counts and statuses, the templates the app mounts
that the walk never used, and the requests the guard refused as a route it does not answer. A walk behind the
allow-list that sees one such refusal on a template the open walk used is a route the list lacks.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

from starlette.middleware import Middleware

from app import gradio_adapter, serve
from app.guard import Routes
from app.process import CHROMIUM, CHROMIUM_ARGS, free_port
from lade_core.paths import ROOT

PROMPT = "Name two prime numbers."


class Recorder:
    """ASGI middleware: (method, path, status) of every HTTP request, in arrival order."""

    def __init__(self, app, seen: list):
        self.app, self.seen = app, seen

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        status = [None]

        async def noted(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, noted)
        finally:
            self.seen.append((scope["method"], scope["path"], status[0]))


def browser_walk(url: str) -> list[str]:
    """What a visitor, a lecturer and a student do in the page; the page errors and the steps that failed."""
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900}, accept_downloads=True)
        page.set_default_timeout(60_000)
        page.on("pageerror", lambda e: errors.append(str(e)))

        def stage(cond: str, timeout: float = 60_000) -> None:
            page.wait_for_function(
                f"() => {{ const s = window.ladeStage; return !!s && !!({cond}); }}", timeout=timeout
            )

        def opened(address: str, cond: str) -> None:
            page.goto(url + address)
            stage(cond)

        def lesson() -> None:
            opened("", "document.querySelector('#lesson-text .fact')")
            for _ in range(3):
                page.click("#lesson-next")
                page.wait_for_timeout(400)
            if page.locator("#lesson-predict button.option").count():
                page.locator("#lesson-predict button.option").first.click()
            opened("?lesson=3&step=28", "document.querySelector('#lesson-text')")
            page.select_option("#theme", "dark")

        def explorer() -> None:
            opened("?run=code-class", "s.state.mode === 'explorer'")
            for _ in range(3):
                page.keyboard.press("ArrowRight")
            opened("?run=code-class&mode=lab", "document.querySelector('#lab-prediction')")
            opened("?run=code-class&view=mask-view&embed=1", "s.run()")
            opened("?lesson=3&embed=1", "document.querySelector('#lesson-text')")
            opened("?lesson=4&present=1", "document.querySelector('#lesson-text')")

        def handout() -> None:
            page.evaluate("() => window.ladeStage.handout()")
            page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
            page.emulate_media(media="print")
            page.wait_for_timeout(1000)
            page.emulate_media(media="screen")
            page.evaluate("() => window.dispatchEvent(new Event('afterprint'))")

        def sidebar() -> None:
            opened("?run=code-class", "s.state.mode === 'explorer'")
            page.click("#run-yourself")
            page.fill("#window-w input[type=number]", "5")
            page.press("#window-w input[type=number]", "Enter")
            page.wait_for_function("() => /\\(5\\+/.test(document.querySelector('#tokens-per-forward').innerText)")
            page.locator("#gallery-run input").click()
            page.locator("ul[role=listbox] li").nth(1).click()
            page.wait_for_timeout(1500)
            with page.expect_file_chooser() as chooser:
                page.click("#open-run")
            chooser.value.set_files(str(ROOT / "assets" / "runs" / "code-fib-W7N4G7.json"))
            stage("String(s.state.current).startsWith('u-')")
            for link in ("#download-trace", "#export-html"):
                with page.expect_download():
                    page.click(link)
            page.click("#copy-link")
            page.wait_for_timeout(1000)

        def live() -> None:
            before = page.inner_text("#auto-reason")
            page.click("#auto")
            page.wait_for_function(
                "t => document.querySelector('#auto-reason').innerText !== t", arg=before, timeout=300_000
            )
            page.fill("#prompt textarea", PROMPT)
            box = page.locator("#max-new-tokens input[type=number]")
            box.fill("8")
            box.press("Enter")
            page.click("#run")
            stage(
                "s.state.live && /^Finished|^Stopped/.test((document.querySelector('.race-title') || {}).innerText)",
                300_000,
            )
            box.fill("64")
            box.press("Enter")
            page.click("#run")
            stage("s.state.live && document.querySelector('.race .lane')", 300_000)
            page.wait_for_timeout(1500)
            page.click("#stop")
            page.wait_for_timeout(3000)

        def browser_race() -> None:
            opened("?race=1", "document.querySelector('#browser-race')")
            page.fill("#browser-race-prompt", PROMPT)
            page.fill("#browser-race-tokens", "4")
            page.click("#browser-race-go")
            page.wait_for_function(
                "() => /^Done|could not|Stopped/.test(document.querySelector('#browser-race-status').textContent)",
                timeout=600_000,
            )

        def gradio_pages() -> None:
            page.goto(url + "?view=api")  # Gradio's own "Use via API" page
            page.wait_for_timeout(3000)
            page.goto(url + "no-such-page")

        for step in (lesson, explorer, handout, sidebar, live, browser_race, gradio_pages):
            try:
                step()
            except Exception as error:  # a walk goes on: the step that failed is reported, not fatal
                errors.append(f"{step.__name__}: {str(error).splitlines()[0]}")
        browser.close()
    return errors


def client_walk(url: str) -> dict:
    """A script's use of the public API with gradio_client: the listing, a run, a cancelled stream, a refusal."""
    from gradio_client import Client

    client = Client(url, verbose=False)
    listing = client.view_api(print_info=False, return_format="dict")
    summary = client.predict(prompt=PROMPT, window=4, ngram=3, guess=4, max_new_tokens=8, api_name="/generate")
    job = client.submit(prompt=PROMPT, max_new_tokens=128, api_name="/generate")
    time.sleep(3)
    job.cancel()
    try:
        client.predict(prompt=PROMPT, window=99, max_new_tokens=8, api_name="/generate")
        refused = None
    except Exception as error:  # gradio_client raises AppError with the server's sentence
        refused = str(error)
    return {"endpoints": sorted(listing["named_endpoints"]), "exact": summary.get("exact"), "refused": refused}


def js_walk(url: str) -> dict:
    """The same with @gradio/client (a dev dependency): the README's JavaScript example, run as written."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    code = re.search(r"```js\n(.*?)```", text[text.index("### The API: `/generate`") :], re.S).group(1)
    script = ROOT / "out" / "route-walk-client.mjs"  # under the repository: node finds its node_modules
    script.parent.mkdir(exist_ok=True)
    script.write_text(code.replace("http://127.0.0.1:7860/", url) + "\nconsole.log(JSON.stringify(summary));\n")
    ran = subprocess.run(["node", str(script)], capture_output=True, text=True, timeout=600, cwd=ROOT, check=False)
    lines = ran.stdout.strip().splitlines()
    exact = json.loads(lines[-1]).get("exact") if ran.returncode == 0 and lines else None
    return {"returncode": ran.returncode, "exact": exact, "refused": lines[-2] if len(lines) > 1 else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--open", action="store_true", help="every route open (no allow-list): what the walk asks")
    parser.add_argument("--no-browser", action="store_true", help="only the gradio_client walk")
    parser.add_argument("--out", default="out/route-walk.json")
    args = parser.parse_args()
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    port = free_port()
    os.environ["GRADIO_SERVER_PORT"] = str(port)
    url = f"http://127.0.0.1:{port}/"
    seen: list = []
    app_args = serve.parser().parse_args(["--per-client", "0"])
    demo = serve.launch(
        app_args, middleware=(Middleware(Recorder, seen=seen),), block=False, gate={"allow": None} if args.open else {}
    )
    errors = [] if args.no_browser else browser_walk(url)
    client = {**client_walk(url), "javascript": js_walk(url)}
    time.sleep(2)
    mounted = gradio_adapter.mounted(demo)
    by_template: dict = defaultdict(Counter)
    unmatched = Counter()
    routes = [Routes([(m, p)]) for m, p in mounted]
    for method, path, status in list(seen):
        scope = {"type": "http", "method": method, "path": path, "headers": []}
        template = next(((m, p) for (m, p), r in zip(mounted, routes, strict=True) if r.template(scope)), None)
        if template is None:
            unmatched[f"{method} {path[:80]} {status}"] += 1
        else:
            by_template[f"{template[0]} {template[1]}"][str(status)] += 1
    used = sorted(by_template)
    result = {
        "command": "python -m scripts.route_walk " + " ".join(sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d"),
        "gradio": gradio_adapter.version(),
        "open": args.open,
        "used": {t: dict(by_template[t]) for t in used},
        "unused": [f"{m} {p}" for m, p in mounted if f"{m} {p}" not in by_template],
        "unmatched": dict(unmatched),
        "page_errors": errors,
        "client": client,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("used", "unmatched", "page_errors", "client")}, indent=1))
    demo.close()
    threading.Timer(1.0, lambda: os._exit(0)).start()
    return 0


if __name__ == "__main__":
    sys.exit(main())
