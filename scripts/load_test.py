"""A class at the server: many visitors open the lesson while one live race runs. Local, bounded, at the HTTP level.

    python -m scripts.load_test --visitors 50,100,300 --out assets/bench/load.json

Starts the app with its model (`python app.py`, one torch thread, the public defaults: queue 24, 2 jobs per client),
then for each number of visitors N: runs one live race alone (`/generate`, W=7 N=4 G=7), then the same race again
while N simulated visitors arrive over `--ramp` seconds. A visitor does what the page does, with plain HTTP and no
browser: it loads the page's HTML, opens Gradio's heartbeat stream, runs the page's load events through the
queue (`/queue/join`, read on `/queue/data`) or, for those that run outside it, as one request
(`/run/predict`), and pulls the lesson's runs by handle the way the stage does
(`server.load_run(handle, since)`, i.e. POST /gradio_api/component_server, fn_name "load_run"); then it steps
through the lesson for `--hold` seconds, which asks the server nothing (only its heartbeat stays open), and leaves.

Reported per N: p50 and p95 time from a visitor's first request to the lesson's first payload (chapter 1's run) and
to all of the lesson's runs; the race's steps per second with the visitors against alone (the same race: greedy
decoding makes the same steps); the server's RSS before and after; errors by kind. The visitors run in this process
(one asyncio loop) on the same machine as the server, so their own CPU is part of the load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import secrets
import sys
import time
from pathlib import Path

from app.process import rss_mb, start_server
from lade_core.paths import ROOT

RACE = (
    "Write a Python function that checks whether a string is a palindrome, with a docstring and two examples.",
    7,
    4,
    7,
    96,
    "prompt",
)


def lesson_handles() -> list[str]:
    """The gallery runs the lesson's chapters show, in chapter order (chapter 1's first)."""
    from app import gallery

    roles = re.findall(r'\{ title: "[^"]*", role: "([a-z-]+)"', (ROOT / "app/static/lade-lesson.js").read_text())
    return list(dict.fromkeys(h for h in (gallery.by_role(r) for r in roles) if h))


def load_events(config: dict) -> list[tuple[int, bool, list]]:
    """(fn_index, queued, data) of the page's load events, with the values the page sends (its components' values).
    The page joins the queue with a queued event and posts one outside it to `/run/predict`, which answers at once."""
    comps = {c["id"]: c for c in config["components"]}
    out = []
    for dep in config["dependencies"]:
        if any(t[1] == "load" for t in dep["targets"]):
            data = [
                comps[i].get("props", {}).get("value") if comps[i]["type"] != "state" else None for i in dep["inputs"]
            ]
            out.append((dep["id"], dep.get("queue", True) is not False, data))
    return out


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return round(values[min(len(values) - 1, int(round(q * (len(values) - 1))))], 3)


async def visitor(
    client, base: str, stage_id: int, events: list, handles: list[str], hold: float, errors: dict, times: dict
) -> None:
    session = secrets.token_hex(6)
    t0 = time.perf_counter()

    def error(kind: str) -> None:
        errors[kind] = errors.get(kind, 0) + 1

    try:
        page = await client.get(base)
        if page.status_code != 200:
            return error(f"page {page.status_code}")
        times["page"].append(time.perf_counter() - t0)
    except Exception as exc:
        return error(f"page {type(exc).__name__}")

    async def heartbeat():
        try:
            async with client.stream("GET", f"{base}gradio_api/heartbeat/{session}", timeout=None) as r:
                async for _ in r.aiter_bytes():
                    pass
        except (asyncio.CancelledError, Exception):
            pass

    async def page_load_events():
        try:
            queued = 0
            for fn_index, in_queue, data in events:
                body = {
                    "data": data,
                    "fn_index": fn_index,
                    "session_hash": session,
                    "event_data": None,
                    "trigger_id": None,
                }
                r = await client.post(f"{base}gradio_api/{'queue/join' if in_queue else 'run/predict'}", json=body)
                if r.status_code != 200:
                    error(f"load event {r.status_code}: {r.text[:60]}")
                    return
                queued += in_queue
            done = 0
            if queued:
                async with client.stream(
                    "GET", f"{base}gradio_api/queue/data", params={"session_hash": session}, timeout=120
                ) as r:
                    async for line in r.aiter_lines():
                        if '"msg":"process_completed"' in line or '"msg": "process_completed"' in line:
                            if '"success":false' in line:
                                error("load event failed")
                            done += 1
                            if done == queued:
                                break
            times["load_events"].append(time.perf_counter() - t0)
        except Exception as exc:
            error(f"load events {type(exc).__name__}")

    async def pull_lesson():
        for i, handle in enumerate(handles):
            try:
                r = await client.post(
                    f"{base}gradio_api/component_server",
                    json={
                        "data": [handle, None],
                        "component_id": stage_id,
                        "fn_name": "load_run",
                        "session_hash": session,
                    },
                    timeout=120,
                )
                answer = r.json() if r.status_code == 200 else {}
                ok = isinstance(answer, dict) and ("payload_text" in answer or "payload" in answer)  # a finished run
            except Exception as exc:
                error(f"load_run {type(exc).__name__}")
                return
            if not ok:
                error(f"load_run {r.status_code}")
                return
            if i == 0:
                times["first_payload"].append(time.perf_counter() - t0)
        times["all_payloads"].append(time.perf_counter() - t0)

    beat = asyncio.create_task(heartbeat())
    await asyncio.gather(page_load_events(), pull_lesson())
    await asyncio.sleep(hold)  # stepping through the lesson: the browser asks nothing
    beat.cancel()


async def burst(base: str, visitors: int, ramp: float, hold: float, stage_id: int, events, handles) -> dict:
    import httpx

    errors: dict = {}
    times = {"page": [], "load_events": [], "first_payload": [], "all_payloads": []}
    limits = httpx.Limits(max_connections=3 * visitors + 10, max_keepalive_connections=3 * visitors + 10)
    async with httpx.AsyncClient(limits=limits, timeout=120) as client:
        tasks = []
        for _ in range(visitors):
            tasks.append(asyncio.create_task(visitor(client, base, stage_id, events, handles, hold, errors, times)))
            await asyncio.sleep(ramp / max(visitors, 1))
        await asyncio.gather(*tasks)
    return {
        "errors": errors,
        **{f"{k}_s": {"p50": pct(v, 0.5), "p95": pct(v, 0.95), "n": len(v)} for k, v in times.items()},
    }


def race(url: str) -> dict:
    """One live race through /generate: its wall seconds and steps (both methods)."""
    from gradio_client import Client

    t0 = time.perf_counter()
    out = Client(url, verbose=False).predict(*RACE, api_name="/generate")
    wall = time.perf_counter() - t0
    steps = out["lookahead"]["steps"] + out["greedy"]["steps"]
    return {"wall_s": round(wall, 2), "steps": steps, "steps_per_s": round(steps / wall, 2)}


def measure(url: str, pid: int, visitors: int, ramp: float, hold: float) -> dict:
    import threading

    import httpx

    config = httpx.get(url + "config").json()
    stage_id = next(c["id"] for c in config["components"] if c.get("props", {}).get("elem_id") == "stage")
    events, handles = load_events(config), lesson_handles()
    alone = race(url)
    rss_before = rss_mb(pid)
    loaded: dict = {}
    racer = threading.Thread(target=lambda: loaded.update(race(url)))
    racer.start()
    time.sleep(1.0)  # the race holds the engine
    t0 = time.perf_counter()
    result = asyncio.run(burst(url, visitors, ramp, hold, stage_id, events, handles))
    result["burst_s"] = round(time.perf_counter() - t0, 1)
    racer.join()
    return {
        "visitors": visitors,
        "ramp_s": ramp,
        "hold_s": hold,
        "lesson_runs": handles,
        **result,
        "race_alone": alone,
        "race_with_visitors": loaded,
        "race_speed_with_visitors": round(loaded["steps_per_s"] / alone["steps_per_s"], 3) if loaded else None,
        "rss_mb": {"before": round(rss_before, 1), "after": round(rss_mb(pid), 1)},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--visitors", default="50,100,300")
    parser.add_argument("--ramp", type=float, default=10.0, help="seconds over which the visitors arrive")
    parser.add_argument("--hold", type=float, default=20.0, help="seconds each visitor steps (no requests)")
    parser.add_argument("--queue-size", type=int, default=None)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    extra = ("--queue-size", str(args.queue_size)) if args.queue_size else ()
    server, url = start_server(None, extra)
    rows = []
    try:
        race(url)  # the model loaded and warm
        rss_start = round(rss_mb(server.pid), 1)
        for n in (int(v) for v in args.visitors.split(",")):
            rows.append(measure(url, server.pid, n, args.ramp, args.hold))
            print(json.dumps(rows[-1]), flush=True)
        result = {
            "command": "python -m scripts.load_test " + " ".join(sys.argv[1:]),
            "date": time.strftime("%Y-%m-%d"),
            "load_average_at_start": round(os.getloadavg()[0], 2),
            "cpus": os.cpu_count(),
            "server": "python app.py (one torch thread), defaults" + (f", {' '.join(extra)}" if extra else ""),
            "race": {"prompt": RACE[0], "W": RACE[1], "N": RACE[2], "G": RACE[3], "max_new_tokens": RACE[4]},
            "server_rss_after_start_mb": rss_start,
            "runs": rows,
        }
    finally:
        server.terminate()
        server.wait(timeout=30)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
