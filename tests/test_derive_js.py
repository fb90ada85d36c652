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
from app.render.payload import derive, lane_methods, metrics
from lade_core.paths import ROOT
from lade_core.schema import to_data

RUNNER = ROOT / "tests" / "js" / "derive.cjs"


def browser_kinds(run) -> bool:
    """Runs whose every lane the browser engine makes: lookahead without copied candidates, and greedy."""
    return run.sampling.temperature == 0 and all(
        lane.method == "lookahead" and not lane.config.lookup for lane in run.all_lanes
    )


def derived_in_js(traces: list[dict]) -> list[dict]:
    """tests/js/derive.cjs on `traces` (each derived where it says "derive"), each judged by the noise rule."""
    node = shutil.which("node")
    assert node, "node is needed (make install brings the npm dev tools)"
    doc = json.dumps({"traces": traces})
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
    got_all = derived_in_js([{**to_data(r), "derive": True} for r in runs])
    for run, got in zip(runs, got_all, strict=True):
        want = json.loads(json.dumps(derive(run)))
        assert got["layouts"] == want["layouts"], run.title
        for i, (a, b) in enumerate(zip(got["steps"], want["steps"], strict=True)):
            assert a == b, (run.title, i, {k: (a.get(k), b[k]) for k in b if a.get(k) != b[k]})
        assert got["lanes"] == want["lanes"], run.title
        assert got["metrics"] == json.loads(json.dumps(metrics(run))), run.title


def test_the_browser_race_counts_drafts_as_the_server_does():
    """The browser race's methods table said "(nothing drafted)" for a lookahead lane that kept 19 drafted tokens:
    its payload had no metrics. The worker's payload now carries each lane's metrics by lade-derive.js `metrics`,
    the server's derivation (lade_core/metrics.py): on a run of the kinds the browser makes (lookahead against
    greedy), cut where a Stop would cut it, the same counts, and drafts where the lookahead lane drafted."""
    from dataclasses import replace

    run = gallery.load("code-class-W7N4G7")
    k = len(run.parallel.steps) // 2
    cut = replace(
        run.parallel,
        steps=run.parallel.steps[:k],
        tokens=tuple(t for s in run.parallel.steps[:k] for t in s.accepted),
        stop_reason="cancelled",
    )
    raced = replace(run, parallel=cut, lanes=())
    got = derived_in_js([{**to_data(raced), "derive": True}])[0]["metrics"]
    want = json.loads(json.dumps(metrics(raced)))
    assert got == want
    assert want["parallel"]["drafted_tokens"] > 0 and want["parallel"]["accepted_drafts"] > 0, want["parallel"]
    assert want["baseline"]["drafted_tokens"] == 0
    worker = (ROOT / "app" / "static" / "lade-race-worker.js").read_text("utf-8")
    assert "metrics: scope.Lade.derive.metrics(trace)" in worker  # the race's payload carries them


def test_the_browser_judges_speed_by_the_one_noise_rule():
    """Every gallery run, every lane, each with its device's floor below, at and above its own drift, and none: the
    same speed-ups, verdicts, fastest lanes and band as app/speed.py's on the same inputs. With neither a floor nor
    enough steps to halve, both give no verdict rather than a band of zero."""
    from dataclasses import replace

    runs = []
    for run in (gallery.load(n) for n in gallery.names()):
        own = (rule.own_spread(run) or {"ratio": 1.0})["ratio"]
        runs += [replace(run, machine=replace(run.machine, noise=x)) for x in (0.0, 1.0, own, 1.5 * own)]
    got_all = derived_in_js([to_data(r) for r in runs])
    verdicts, sources = set(), set()
    for run, got in zip(runs, got_all, strict=True):
        lanes = {k: m for k, m in lane_methods(run).items() if k != "baseline"}
        want = json.loads(json.dumps(rule.speed(run, lanes, [])))
        assert (got["speed"] is None and want is None) or same_speed(got["speed"], want), (run.title, got, want)
        if want:
            verdicts |= {v["verdict"] for v in want["lanes"].values()}
            sources.add(max(want["band"]["parts"], key=lambda p: p["ratio"])["source"])
    assert len(verdicts) >= 2, verdicts  # the gallery exercises more than one verdict
    assert sources == {"this run", "this run's device"}, sources  # each part sets the band somewhere
    short = replace(runs[0], baseline=replace(runs[0].baseline, steps=runs[0].baseline.steps[:4]))
    short = replace(short, machine=replace(short.machine, noise=0.0))  # three decoding steps and no floor
    assert rule.speed(short, {"parallel": short.parallel}, []) is None
    assert derived_in_js([to_data(short)])[0]["speed"] is None
