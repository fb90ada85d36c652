"""A class at the server, measured from outside the way a lecture reaches it: readers of the lesson, then a class that
presses Run at once. Local, bounded, real clients (plain HTTP for the page, `gradio_client` for `/generate`).

    python -m scripts.load_test --readers 100 --over 10 --classes 1,5,30 --students 30 --out out/class.json

Starts the app with its model as `python app.py --trust-proxy 1` (one torch thread, the public defaults), so that each
simulated visitor is its own address (an `X-Forwarded-For` of its own, as behind one proxy), and waits until it is
warm (one short race through `/generate`: the model loaded and the engine's start-up measurement done). Then:

- **readers**: `--readers` visitors arriving evenly over `--over` seconds, each loading the page's HTML, `config` and
  the lesson's two runs at their address (`runs/<name>.json`: the runs the lesson's chapters read, by their roles in
  the gallery), as the page does; each request's time, p50 and p95 per kind, and the errors.
- **a class**, for each number of distinct prompts in `--classes`: `--students` clients, each at its own address and
  each its own `gradio_client.Client` (made beforehand), call `/generate` within one second (W=5 N=4 G=5, 32 new
  tokens; student i asks prompt i mod P). For each: the wait from its call to its result, and whether it finished
  (exact: `exact` true and the same tokens as every other student on its prompt), was refused (and whether the
  refusal names the seconds after which to try again) or hung (no answer in `--hang` seconds). Median and p95 of the
  waits of those that finished, the last one, and the server's resident memory before and after.

The clients run in this process on the same machine as the server, so their own CPU is part of the load. Each figure
carries the load average at its start (`os.getloadavg`). `--app-dir` starts another checkout's app.py (the landed
code, for a before-and-after); its figures are made the same way.
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from app.process import answers, free_port, rss_mb
from lade_core.measure.prompts import load_prompts
from lade_core.paths import ROOT

SETTINGS = {"window": 5, "ngram": 4, "guess": 5, "max_new_tokens": 32}
TOPICS = (
    "a hash map", "a linked list", "recursion", "a compiler", "an operating system", "a database index", "a mutex",
    "garbage collection", "a neural network", "gradient descent", "a binary tree", "a web server", "TCP", "DNS",
    "public-key cryptography", "a CPU cache", "virtual memory", "a regular expression",
)  # fmt: skip
TRY_AGAIN = re.compile(r"try again in \d+ s", re.IGNORECASE)


def prompts(count: int) -> list[str]:
    """`count` distinct prompts (at most 30): the benchmark's, then short questions."""
    bench = [p["prompt"] for p in load_prompts()]
    extra = [f"Explain in two sentences what {topic} is." for topic in TOPICS]
    out = (bench + extra)[:count]
    if len(out) < count:
        raise ValueError(f"at most {len(bench) + len(extra)} distinct prompts")
    return out


def lesson_runs() -> list[str]:
    """The gallery runs the lesson's chapters read (their roles, app/static/lade-lesson.js), in chapter order."""
    from app import gallery

    roles = re.findall(r'role: "([a-z-]+)"', (ROOT / "app/static/lade-lesson.js").read_text(encoding="utf-8"))
    return list(dict.fromkeys(name for name in (gallery.by_role(r) for r in roles) if name))


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return round(values[min(len(values) - 1, round(q * (len(values) - 1)))], 3)


def address(i: int, block: int) -> str:
    return f"10.{block}.{i // 250}.{i % 250 + 1}"


def start(app_dir: Path) -> tuple[subprocess.Popen, str]:
    """`python app.py --trust-proxy 1` in `app_dir` on a free port, its model offline, one torch thread."""
    port = free_port()
    env = dict(
        os.environ,
        GRADIO_SERVER_PORT=str(port),
        GRADIO_SERVER_NAME="127.0.0.1",
        HF_HUB_OFFLINE="1",
        GRADIO_ANALYTICS_ENABLED="False",
        OMP_NUM_THREADS="1",
    )
    (ROOT / "out").mkdir(exist_ok=True)
    log = open(ROOT / "out" / "load-test-server.log", "w")  # noqa: SIM115 (open for the server's life)
    server = subprocess.Popen(
        [sys.executable, "app.py", "--trust-proxy", "1"], cwd=app_dir, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}/"
    if not answers(url, server, seconds=300):
        server.kill()
        raise RuntimeError("the app did not start (out/load-test-server.log)")
    return server, url


def client(url: str, who: str):
    from gradio_client import Client

    return Client(url, headers={"X-Forwarded-For": who}, verbose=False)


def readers(url: str, count: int, over: float, runs: list[str]) -> dict:
    """`count` readers over `over` seconds, each its own address: the page, `config`, the lesson's runs."""
    import httpx

    times: dict[str, list[float]] = {"page": [], "config": [], "runs": []}
    errors: dict[str, int] = {}
    lock = threading.Lock()

    def one(i: int) -> None:
        headers = {"X-Forwarded-For": address(i, 1), "Accept-Encoding": "gzip, deflate"}
        with httpx.Client(timeout=60, headers=headers) as http:
            for kind, path in [("page", ""), ("config", "config"), *(("runs", f"runs/{r}.json") for r in runs)]:
                t0 = time.perf_counter()
                try:
                    answer = http.get(url + path)
                    answer.read()
                    ok = answer.status_code == 200 and (kind != "runs" or "trace" in answer.json())
                except Exception as exc:  # counted, never raised: a reader that failed is a figure
                    ok, answer = False, type(exc).__name__
                seconds = time.perf_counter() - t0
                with lock:
                    if ok:
                        times[kind].append(seconds)
                    else:
                        what = f"{kind} {getattr(answer, 'status_code', answer)}"
                        errors[what] = errors.get(what, 0) + 1

    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=count) as pool:
        for i in range(count):
            pool.submit(one, i)
            time.sleep(over / count)
    return {
        "readers": count,
        "over_s": over,
        "load_average_at_start": round(load, 2),
        "lesson_runs": runs,
        "wall_s": round(time.perf_counter() - t0, 1),
        "errors": errors,
        **{f"{k}_s": {"p50": pct(v, 0.5), "p95": pct(v, 0.95), "n": len(v)} for k, v in times.items()},
    }


def a_class(url: str, pid: int, students: int, distinct: int, hang: float, block: int) -> dict:
    """`students` clients at their own addresses calling /generate within one second on `distinct` prompts."""
    asked = prompts(distinct)
    clients = [client(url, address(i, block)) for i in range(students)]
    results: list[dict] = [{} for _ in range(students)]
    load, rss_before = os.getloadavg()[0], rss_mb(pid)

    def one(i: int, at: float) -> None:
        time.sleep(max(0.0, at - time.perf_counter()))
        t0 = time.perf_counter()
        job = clients[i].submit(prompt=asked[i % distinct], **SETTINGS, api_name="/generate")
        try:
            out = job.result(timeout=hang)
            results[i] = {"outcome": "finished", "exact": out.get("exact"), "tokens": out["lookahead"]["tokens"]}
        except TimeoutError:
            results[i] = {"outcome": "hung"}
            job.cancel()
        except Exception as exc:  # a refusal, as the client raises it
            results[i] = {"outcome": "refused", "message": str(exc)[:300]}
        results[i]["wait_s"] = round(time.perf_counter() - t0, 2)
        results[i]["prompt"] = i % distinct

    begin = time.perf_counter() + 0.5
    threads = [threading.Thread(target=one, args=(i, begin + i / students)) for i in range(students)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done = [r for r in results if r["outcome"] == "finished"]
    waits = [r["wait_s"] for r in done]
    same = all(r["tokens"] == next(d["tokens"] for d in done if d["prompt"] == r["prompt"]) for r in done)
    refused = [r for r in results if r["outcome"] == "refused"]
    return {
        "students": students,
        "distinct_prompts": distinct,
        "settings": SETTINGS,
        "load_average_at_start": round(load, 2),
        "finished": len(done),
        "refused": len(refused),
        "refused_saying_when": sum(bool(TRY_AGAIN.search(r["message"])) for r in refused),
        "hung": sum(r["outcome"] == "hung" for r in results),
        "exact": sum(r["exact"] is True for r in done),
        "same_tokens_per_prompt": same,
        "wait_s": {"p50": pct(waits, 0.5), "p95": pct(waits, 0.95), "last": max(waits, default=None)},
        "refusals": sorted({r["message"] for r in refused})[:3],
        "rss_mb": {"before": round(rss_before, 1), "after": round(rss_mb(pid), 1)},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readers", type=int, default=100)
    parser.add_argument("--over", type=float, default=10.0, help="seconds over which the readers arrive")
    parser.add_argument("--classes", default="1,5,30", help="distinct prompts of each class, in turn")
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--hang", type=float, default=600.0, help="seconds after which a student counts as hung")
    parser.add_argument("--app-dir", default=str(ROOT), help="the checkout whose app.py to start")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    (ROOT / "out").mkdir(exist_ok=True)
    result = {
        "command": "python -m scripts.load_test " + " ".join(sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "load_average_at_start": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count(),
        "server": "python app.py --trust-proxy 1 (one torch thread, the public defaults)",
    }
    server, url = start(Path(args.app_dir))
    try:
        t0 = time.perf_counter()
        client(url, "10.255.0.1").predict(prompt="Warm up.", **{**SETTINGS, "max_new_tokens": 4}, api_name="/generate")
        result["warm_s"] = round(time.perf_counter() - t0, 1)
        result["rss_mb_warm"] = round(rss_mb(server.pid), 1)
        if args.readers:
            result["readers"] = readers(url, args.readers, args.over, lesson_runs())
            print(json.dumps(result["readers"]), flush=True)
        result["classes"] = []
        for block, distinct in enumerate((int(v) for v in args.classes.split(",") if v), start=2):
            time.sleep(5)  # the engine idle again
            result["classes"].append(a_class(url, server.pid, args.students, distinct, args.hang, block))
            print(json.dumps(result["classes"][-1]), flush=True)
        result["rss_mb_end"] = round(rss_mb(server.pid), 1)
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
    text = json.dumps(result, indent=1)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
