"""The derived data of a run made in the browser (app/static/lade-derive.js) against app/render/payload.py's, on the
gallery's recorded greedy and lookahead runs: every layout row (labels, positions, kinds, parents, mask bits) and every
step's layout index, kept tokens, their source and the pool around it, field for field; and the noise rule's verdicts
(app/speed.py) on every gallery run, the race a browser judges by its own drift alone."""

import json
import math
import shutil
import subprocess

from app import gallery
from app import speed as rule
from app.render.payload import derive, lane_methods
from lade_core.paths import ROOT
from lade_core.schema import to_data

RUNNER = ROOT / "tests" / "js" / "derive.cjs"


def browser_kinds(run) -> bool:
    """Runs whose every lane the browser engine makes: lookahead without copied candidates, and greedy."""
    return run.sampling.temperature == 0 and all(
        lane.method == "lookahead" and not lane.config.lookup for lane in run.all_lanes
    )


def derived_in_js(traces: list[dict], parts: list[dict]) -> list[dict]:
    """tests/js/derive.cjs on `traces` (each derived where it says "derive"), judged by the spreads `parts`."""
    node = shutil.which("node")
    assert node, "node is needed (make install brings the npm dev tools)"
    doc = json.dumps({"traces": traces, "parts": parts})
    done = subprocess.run([node, str(RUNNER)], input=doc, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def same_speed(got: dict | None, want: dict) -> bool:
    """Speeds equal but for the last bits of a float (Python's fmean sums exactly, JS does not)."""
    close = lambda a, b: math.isclose(a, b, rel_tol=1e-12)  # noqa: E731
    return (
        got is not None
        and close(got["band"]["ratio"], want["band"]["ratio"])
        and [p["source"] for p in got["band"]["parts"]] == [p["source"] for p in want["band"]["parts"]]
        and got["fastest"] == want["fastest"]
        and got["lanes"].keys() == want["lanes"].keys()
        and all(
            close(g["speedup"], w["speedup"]) and g["verdict"] == w["verdict"] and g["bench"] == w["bench"]
            for g, w in zip(got["lanes"].values(), want["lanes"].values(), strict=True)
        )
    )


def test_the_browser_derives_what_the_server_derives():
    runs = [r for r in (gallery.load(n) for n in gallery.names()) if browser_kinds(r)]
    assert len(runs) >= 4, [r.title for r in runs]
    got_all = derived_in_js([{**to_data(r), "derive": True} for r in runs], [])
    for run, got in zip(runs, got_all, strict=True):
        want = json.loads(json.dumps(derive(run)))
        assert got["layouts"] == want["layouts"], run.title
        for i, (a, b) in enumerate(zip(got["steps"], want["steps"], strict=True)):
            assert a == b, (run.title, i, {k: (a.get(k), b[k]) for k in b if a.get(k) != b[k]})
        assert got["lanes"] == want["lanes"], run.title


def test_the_browser_judges_speed_by_the_one_noise_rule():
    """Every gallery run, every lane: the same speed-ups, verdicts, fastest lanes and band as app/speed.py's, given
    the same spreads (here the ones on file; a browser race has none for its device and passes none). With no spread
    at all (a race too short to halve), the browser gives no verdict rather than a band of zero."""
    runs = [gallery.load(n) for n in gallery.names()]
    on_file = rule.band()["parts"]
    assert on_file, "the spreads on file (assets/bench, assets/runs)"
    got_all = derived_in_js([to_data(r) for r in runs], on_file)
    verdicts = set()
    for run, got in zip(runs, got_all, strict=True):
        lanes = {k: m for k, m in lane_methods(run).items() if k != "baseline"}
        want = json.loads(json.dumps(rule.speed(run, lanes, [])))
        assert same_speed(got["speed"], want), (run.title, got["speed"], want)
        verdicts |= {v["verdict"] for v in want["lanes"].values()}
    assert len(verdicts) >= 2, verdicts  # the gallery exercises more than one verdict
    # judged by its own drift alone, as in a browser: the band is the run's own spread
    alone = derived_in_js([to_data(r) for r in runs], [])
    for run, got in zip(runs, alone, strict=True):
        own = rule.own_spread(run)
        if own is None:
            assert got["speed"] is None, run.title
        else:
            assert math.isclose(got["speed"]["band"]["ratio"], own["ratio"], rel_tol=1e-12), run.title
            assert [p["source"] for p in got["speed"]["band"]["parts"]] == ["this run"]
    short = to_data(runs[0])
    short["baseline"]["steps"] = short["baseline"]["steps"][:4]  # three decoding steps: nothing to halve
    assert derived_in_js([short], [])[0]["speed"] is None
