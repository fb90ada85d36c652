"""The race in the visitor's browser, through the page a visitor uses, at 1 and 2 threads, beside the Python engine in
one run (BENCHMARKS.md, "The race in the visitor's browser").

    python -m scripts.browser_race --tokens 48 --prompts 3 --out out/browser-race.json

Exports the static site with the engine's files (as `lade export-site` does) into a temporary folder and serves it on
127.0.0.1 with the cross-origin-isolation headers a host may send (so the worker may use more than one thread). For
each thread count, a fresh Chromium profile opens the page, races the first `--prompts` benchmark prompts through
the panel with Auto on (the worker loads the engine, measures this device's curve once and races the setting Auto
proposes from it), and records per race: the setting, each lane's ms per token (its steps' seconds over its tokens,
the race's own clock), and the longest task the page's thread ran (a long-task observer, from the click to the end:
loading and measuring included). Then the Python engine decodes the same prompts at the same setting with torch on
the same number of threads. Reported: per thread count, Auto's setting and its proposal, the median ms per token of
each method in the browser and in Python, lookahead's speed against greedy's in each (the median over the prompts of
greedy's ms per token over lookahead's, each prompt's lanes on one clock), whether every text is identical, and the
longest task on the page; and the machine's load average before and after (the figures are only as quiet as it).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import platform
import statistics
import tempfile
import threading
import time
from pathlib import Path

ENDED = (
    "() => /^(Done|Stopped)|could not|This browser/.test(document.querySelector('#browser-race-status').textContent)"
)
WATCH = """() => { window.__long = [];
  new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(e.duration); })
    .observe({ type: 'longtask' }); }"""


class _Isolated(http.server.SimpleHTTPRequestHandler):
    """A static host that sends the cross-origin-isolation headers."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".mjs": "text/javascript"}

    def end_headers(self):
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        super().end_headers()

    def log_message(self, *args):
        pass


def browser_races(browser, url: str, prompts: list[str], tokens: int, threads: int) -> dict:
    """Race each prompt through the panel on `threads` threads, in one fresh profile; the races and the page."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
    page = context.new_page()
    page.set_default_timeout(900_000)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url + "index.html?race=1")
    page.wait_for_function("() => !!document.querySelector('#browser-race') && self.crossOriginIsolated")
    page.evaluate("n => window.Lade.browserRace.setThreads(n)", threads)
    races = []
    for prompt in prompts:
        page.evaluate(WATCH)
        page.fill("#browser-race-prompt", prompt)
        page.fill("#browser-race-tokens", str(tokens))
        t0 = time.perf_counter()
        page.click("#browser-race-go")
        page.wait_for_function(ENDED)
        wall = time.perf_counter() - t0
        status = page.inner_text("#browser-race-status")
        if not status.startswith("Done"):
            raise RuntimeError(status)
        trace = page.evaluate("() => JSON.parse(JSON.stringify(window.ladeStage.run().t))")
        races.append(
            {
                "trace": trace,
                "page_wall_s": wall,
                "longest_task_ms": max(page.evaluate("() => window.__long") or [0]),
                "proposal": page.inner_text("#browser-race-proposal"),
                "sentences": page.eval_on_selector_all(
                    "#browser-race-sentences li", "els => els.map(e => e.textContent)"
                ),
            }
        )
    context.close()
    if errors:
        raise RuntimeError(f"the page failed: {errors}")
    return {"races": races}


def speedups(rows: list[dict], engine: str) -> list[float]:
    """Per prompt, lookahead's speed against greedy's on `engine` (greedy's ms per token over lookahead's)."""
    ms = {(r["prompt"], r["method"]): r[f"{engine}_ms_per_token"] for r in rows}
    return [ms[q, "greedy"] / ms[q, "lookahead"] for q in dict.fromkeys(r["prompt"] for r in rows)]


def main() -> None:
    import torch
    from playwright.sync_api import sync_playwright

    from app.process import CHROMIUM, CHROMIUM_ARGS
    from app.render.site import export_site
    from lade_core import load_model
    from lade_core.autoregressive import autoregressive_generate
    from lade_core.config import LookaheadConfig
    from lade_core.lookahead import lookahead_generate
    from lade_core.measure.prompts import load_prompts

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tokens", type=int, default=48)
    p.add_argument("--prompts", type=int, default=3, help="the first benchmark prompts")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--out", default="out/browser-race.json")
    args = p.parse_args()
    prompts = load_prompts()[: args.prompts]
    counts = [int(n) for n in args.threads.split(",")]
    by_threads = {}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        export_site(Path(tmp), engine=True)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Isolated, directory=tmp))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for n in counts:
                by_threads[n] = browser_races(browser, url, [q["prompt"] for q in prompts], args.tokens, n)
        finally:
            browser.close()
            server.shutdown()
    lm = load_model()
    autoregressive_generate(lm, lm.tokenizer("Warm up.")["input_ids"], 4)  # the first forward's one-off costs
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "command": "python -m scripts.browser_race " + " ".join(f"--{k} {v}" for k, v in vars(args).items()),
        "tokens": args.tokens,
        "prompts": [q["id"] for q in prompts],
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count()},
        "threads": {},
    }
    for n, got in by_threads.items():
        torch.set_num_threads(n)
        rows = []
        for q, race in zip(prompts, got["races"]):
            t = race["trace"]
            config = LookaheadConfig.from_dict(t["config"])
            ids = t["prompt_ids"]
            for name, lane, python in (
                ("greedy", t["baseline"], autoregressive_generate(lm, ids, args.tokens)),
                ("lookahead", t["parallel"], lookahead_generate(lm, ids, config, args.tokens)),
            ):
                seconds = sum(s["forward_s"] + s["overhead_s"] + s.get("draft_s", 0) for s in lane["steps"])
                rows.append(
                    {
                        "prompt": q["id"],
                        "method": name,
                        "setting": [config.window, config.ngram, config.guess],
                        "identical": lane["tokens"] == list(python.tokens),
                        "browser_ms_per_token": 1000 * seconds / len(lane["tokens"]),
                        "python_ms_per_token": 1000 * python.wall_s / len(python.tokens),
                        "tokens": len(lane["tokens"]),
                        "steps": len(lane["steps"]),
                    }
                )
        first = got["races"][0]
        result["threads"][str(n)] = {
            "device": first["trace"]["machine"]["description"],
            "cores": first["trace"]["machine"]["cores"],
            "noise": first["trace"]["machine"]["noise"],
            "curve": first["trace"]["machine"]["curve"],
            "proposal": first["proposal"],
            "setting": rows[0]["setting"],
            "torch_threads": torch.get_num_threads(),
            "python_kernels": lm.kernels,
            "all_identical": all(r["identical"] for r in rows),
            "longest_task_ms": max(r["longest_task_ms"] for r in got["races"]),
            "longest_task_ms_per_race": [r["longest_task_ms"] for r in got["races"]],
            "page_wall_s": [r["page_wall_s"] for r in got["races"]],
            "summary": {
                m: {
                    k: statistics.median(r[k] for r in rows if r["method"] == m)
                    for k in ("browser_ms_per_token", "python_ms_per_token")
                }
                for m in ("greedy", "lookahead")
            },
            "speedup": {e: statistics.median(speedups(rows, e)) for e in ("browser", "python")},
            "rows": rows,
            "sentences": [r["sentences"] for r in got["races"]],
        }
    result["load_average"] = {"before": load_before, "after": os.getloadavg()}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    for n, r in result["threads"].items():
        print(
            f"{n} thread(s): {r['device']}, Auto W,N,G = {r['setting']}, identical {r['all_identical']}, "
            f"longest page task {r['longest_task_ms']:.0f} ms"
        )
        print("   ", json.dumps(r["summary"]), "lookahead/greedy speed:", json.dumps(r["speedup"]))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
