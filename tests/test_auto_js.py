"""Auto in the visitor's browser (app/static/lade-auto.js) against Python's on shared inputs: the same swept settings
ranked the same under the same cost curve, with the same predictions (lade_core/measure/autoconfig.py `best`, the
server's Auto), on the shipped sweeps (every pool, and the browser race's own: app/render/engine_files.py
`race_sweeps`) under curves of every shape (the shipped CPU curve, a flat one as a GPU's, a steep one, one with a
dip); the widths' order each round as Python's seeded shuffle gives it, and each width's median and quartiles as
costcurve.py's `summarise` computes them. The landed code had no browser Auto: every case here failed there."""

import json
import math
import random
import shutil
import statistics
import subprocess

from app.render.engine_files import race_sweeps
from lade_core.measure import autoconfig
from lade_core.measure.costcurve import curve_path, load_curve_file, summarise
from lade_core.paths import ROOT

RUNNER = ROOT / "tests" / "js" / "auto.cjs"


def in_js(doc: dict) -> dict:
    node = shutil.which("node")
    assert node, "node is needed (make install brings the npm dev tools)"
    done = subprocess.run([node, str(RUNNER)], input=json.dumps(doc), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def curves() -> dict[str, dict]:
    """Cost curves of every shape Auto may meet: measured, flat (a GPU decoding a large model), steep (a CPU's cost
    growing with every token), and one that dips below a one-token forward (a layout change at a width)."""
    widths = (1, 2, 3, 4, 6, 8, 12, 16, 32)
    shipped = load_curve_file(curve_path("cpu"))
    assert shipped, "assets/costcurve-cpu.json is shipped"
    made = lambda f: {"greedy_s": f(1), "points": [{"tokens": n, "seconds": f(n)} for n in widths]}  # noqa: E731
    return {
        "shipped": shipped,
        "flat": made(lambda n: 0.02 * (1 + 0.002 * n)),
        "steep": made(lambda n: 0.05 * (0.4 + 0.6 * n)),
        "dip": made(lambda n: 0.06 * (1.0 if n == 1 else 0.9 + 0.05 * n)),
    }


def test_the_browsers_auto_proposes_what_pythons_auto_proposes():
    every, race = autoconfig.load_sweeps(), race_sweeps("prompt")
    assert race and all(p["pool"] == "prompt" and p["window"] <= 32 for p in race)
    cases = [
        {"name": f"{name}/{which}/{pool}", "points": points, "curve": curve, "pool": pool}
        for name, curve in curves().items()
        for which, points, pools in (("all", every, (None, "paper", "prompt")), ("race", race, (None,)))
        for pool in pools
    ]
    got = in_js({"cases": cases, "shuffles": [], "samples": []})
    chosen = set()
    for case, ranked, best in zip(cases, got["ranked"], got["best"], strict=True):
        want = autoconfig.rank_configs(case["points"], autoconfig.step_cost(case["curve"]), case["pool"])
        assert len(ranked) == len(want), case["name"]
        for a, b in zip(ranked, want, strict=True):
            assert (a["window"], a["ngram"], a["guess"], a["pool"]) == (b["window"], b["ngram"], b["guess"], b["pool"])
            for key in ("step_cost", "predicted_speedup", "predicted_speedup_median"):
                assert math.isclose(a[key], b[key], rel_tol=1e-12), (case["name"], key, a[key], b[key])
            low_high = zip(a["predicted_speedup_range"], b["predicted_speedup_range"], strict=True)
            assert all(math.isclose(x, y, rel_tol=1e-12) for x, y in low_high)
        python = autoconfig.best(case["points"], case["curve"], case["pool"])
        assert (best["window"], best["ngram"], best["guess"]) == (python["window"], python["ngram"], python["guess"])
        chosen.add((case["name"].split("/")[0], python["window"], python["ngram"], python["guess"]))
    # the inputs move the choice: a flat curve takes a wider window than a steep one
    by = {name: window for name, window, _, _ in chosen}
    assert by["flat"] > by["steep"], chosen


def test_the_browser_curve_is_timed_and_summarised_as_pythons():
    """The widths' order in each round is Python's `random.Random(seed).shuffle`, and each width's median and
    quartiles are `summarise`'s (statistics.median, quantiles(n=4, method="inclusive"))."""
    rng = random.Random(7)
    shuffles = [{"seed": seed, "n": n} for seed in (0, 1, 12345, 2**40 + 3) for n in (1, 2, 8, 9, 31)]
    samples = [[rng.uniform(0.01, 0.2) for _ in range(n)] for n in (1, 2, 3, 4, 5, 9, 36)]
    got = in_js({"cases": [], "shuffles": shuffles, "samples": samples})
    for s, order in zip(shuffles, got["orders"], strict=True):
        want = list(range(s["n"]))
        random.Random(s["seed"]).shuffle(want)
        assert order == want, s
    for xs, mine in zip(samples, got["summaries"], strict=True):
        want = summarise(xs)
        assert all(math.isclose(mine[k], want[k], rel_tol=1e-12) for k in ("seconds", "q1", "q3", "min")), (xs, mine)
    assert statistics.median(samples[-1]) == got["summaries"][-1]["seconds"]
