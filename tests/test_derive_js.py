"""The derived data of a run made in the browser (app/static/lade-derive.js) against app/render/payload.py's, on the
gallery's recorded greedy and lookahead runs: every layout row (labels, positions, kinds, parents, mask bits) and every
step's layout index, kept tokens, their source and the pool around it, field for field."""

import json
import shutil
import subprocess

from app import gallery
from app.render.payload import derive
from lade_core.paths import ROOT
from lade_core.schema import to_data

RUNNER = ROOT / "tests" / "js" / "derive.cjs"


def browser_kinds(run) -> bool:
    """Runs whose every lane the browser engine makes: lookahead without copied candidates, and greedy."""
    return run.sampling.temperature == 0 and all(
        lane.method == "lookahead" and not lane.config.lookup for lane in run.all_lanes
    )


def test_the_browser_derives_what_the_server_derives():
    runs = [r for r in (gallery.load(n) for n in gallery.names()) if browser_kinds(r)]
    assert len(runs) >= 4, [r.title for r in runs]
    node = shutil.which("node")
    assert node, "node is needed (make install brings the npm dev tools)"
    done = subprocess.run(
        [node, str(RUNNER)], input=json.dumps([to_data(r) for r in runs]), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for run, got in zip(runs, json.loads(done.stdout), strict=True):
        want = json.loads(json.dumps(derive(run)))
        assert got["layouts"] == want["layouts"], run.title
        for i, (a, b) in enumerate(zip(got["steps"], want["steps"], strict=True)):
            assert a == b, (run.title, i, {k: (a.get(k), b[k]) for k in b if a.get(k) != b[k]})
        assert got["lanes"] == want["lanes"], run.title
