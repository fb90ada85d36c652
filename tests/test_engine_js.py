"""The engine's rules in the browser (app/static/lade-engine.js) against the Python engine, on the same model outputs.

The Python engine decodes on the real model; each of its forwards is written down as the step fed it (tokens,
positions, the boolean mask, the rows read, the rows kept in the cache) and the model's argmax at the rows read,
recovered from the step's own record (the token after x, the new level, each candidate's predictions). Node then runs
the JS engine with a forward that checks every input against that record before answering with the same argmax, and
the JS engine's step records must equal Python's: levels, new level, candidates, predictions, match lengths, winner,
accepted tokens, pool added, evicted and size. Only the forward's numbers are shared; every rule is the JS engine's.
"""

import json
import shutil
import subprocess

import pytest
from test_browser_engine import TIMES

from lade_core import schema
from lade_core.autoregressive import autoregressive_generate
from lade_core.config import LookaheadConfig
from lade_core.lookahead import lookahead_generate
from lade_core.paths import ROOT

RUNNER = ROOT / "tests" / "js" / "engine_parity.cjs"
ENGINE = ROOT / "app" / "static" / "lade-engine.js"
MAX_NEW = 24
SETTINGS = (  # the default, the paper's plain layout and pool, the text's pool with N = 3 and more guesses than W
    LookaheadConfig(),
    LookaheadConfig(window=5, ngram=4, guess=5, pool="paper", tree=False, window_seed=3),
    LookaheadConfig(window=4, ngram=3, guess=6, pool="output", window_seed=1),
)


def kept_argmax(step) -> list[int]:
    """The model's argmax at the rows a lookahead step read, in `logit_rows` order, from the step's record: the
    token after x, the new level, then each verification node's token (a candidate's prediction after it)."""
    layout = step.layout
    first = step.predictions[0][0] if step.candidates else step.accepted[0]
    nodes = [0] * layout.nodes
    for path, prediction in zip(layout.paths, step.predictions):
        for node, token in zip(path, prediction[1:]):
            nodes[node] = token
    return [first, *step.new_level, *nodes]


def forwards(run, prompt_ids) -> list[dict]:
    out = [{"prompt_length": len(prompt_ids), "out": [run.steps[0].accepted[0]]}]
    for step in run.steps[1:]:
        if step.kind == "autoregressive":
            tokens, mask, offsets, layout_rows, out_rows, keep = (
                [step.input_token],
                ["1"],
                [0],
                [0],
                step.accepted[:1],
                [0],
            )
        else:
            layout = step.layout
            tokens = [step.input_token, *(t for level in step.levels_before for t in level)]
            tokens += layout.node_tokens(step.candidates)
            mask = ["".join("1" if v else "0" for v in row) for row in layout.mask()]
            offsets, layout_rows, out_rows = layout.positions().tolist(), layout.logit_rows(), kept_argmax(step)
            keep = layout.cache_rows(max(step.winner, 0), step.match_lengths[step.winner] if step.winner >= 0 else 0)
        out.append(
            {
                "tokens": tokens,
                "positions": [step.position + o for o in offsets],
                "mask": mask,
                "rows": layout_rows,
                "out": out_rows,
                "keep": keep,
            }
        )
    return out


def step_record(step) -> dict:
    return {k: v for k, v in schema.to_data(step).items() if k not in TIMES}


@pytest.fixture(scope="module")
def node():
    found = shutil.which("node")
    if found is None:
        pytest.fail("node is needed (make install brings the npm dev tools)")
    return found


@pytest.fixture(scope="module")
def cases(lm, bench_prompts):
    kinds = ("code", "grounded")  # the kinds whose answers repeat text, where candidates are accepted
    chosen = [next(p for p in bench_prompts if p["kind"] == kind) for kind in kinds]
    out = []
    for p in chosen:
        ids = lm.encode_prompt(p["prompt"])
        common = {"prompt_ids": ids, "context": lm.max_positions, "eos_ids": sorted(lm.eos_ids)}
        runs = [(None, autoregressive_generate(lm, ids, MAX_NEW))]
        runs += [(c, lookahead_generate(lm, ids, c, MAX_NEW)) for c in SETTINGS]
        for config, run in runs:
            name = f"{p['id']} " + (
                f"W{config.window}N{config.ngram}G{config.guess}-{config.pool}" if config else "greedy"
            )
            out.append(
                {
                    **common,
                    "name": name,
                    "config": config
                    and {k: getattr(config, k) for k in ("window", "ngram", "guess", "pool", "tree", "window_seed")},
                    "max_new_tokens": MAX_NEW,
                    "forwards": forwards(run, ids),
                    "python": run,
                }
            )
    return out


def test_the_js_engine_makes_the_python_engines_steps(cases, node, tmp_path):
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([{k: v for k, v in c.items() if k != "python"} for c in cases]))
    done = subprocess.run([node, str(RUNNER), str(path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    runs = json.loads(done.stdout)
    accepted_drafts = 0
    for case, js in zip(cases, runs, strict=True):
        python = case["python"]
        assert js["tokens"] == list(python.tokens), case["name"]
        assert js["stop_reason"] == python.stop_reason, case["name"]
        assert len(js["steps"]) == len(python.steps), case["name"]
        for i, (a, b) in enumerate(zip(js["steps"], python.steps)):
            want = {k: v for k, v in step_record(b).items() if k not in TIMES}
            got = {k: v for k, v in a.items() if k not in TIMES}
            assert got == want, (case["name"], i, {k: (got.get(k), want[k]) for k in want if got.get(k) != want[k]})
            accepted_drafts += max(len(b.accepted) - 1, 0)
    assert accepted_drafts > 10  # the cases exercise acceptance, not only single-token steps


def test_the_window_draws_its_guesses_as_pythons_random_does(node, tmp_path):
    """The initial window and a widened one come from the prompt's tokens through Python's `random.Random(seed)`;
    the JS port of its Mersenne Twister and `choice` draws the same tokens for seeds small and large."""
    import random

    script = tmp_path / "draws.cjs"
    script.write_text(
        "globalThis.window = globalThis;\n"
        f"const source = require('node:fs').readFileSync({json.dumps(str(ENGINE))}, 'utf8');\n"
        "require('node:vm').runInThisContext(source);\n"
        "const seeds = [0, 1, 3, 12345, 2 ** 32 + 7, 2 ** 40];\n"
        "const seq = Array.from({length: 37}, (_, i) => 100 + i);\n"
        "process.stdout.write(JSON.stringify(seeds.map((s) => { const r = new Lade.engine.PyRandom(s); "
        "return Array.from({length: 50}, () => r.choice(seq)); })));\n"
    )
    done = subprocess.run([node, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    seq = list(range(100, 137))
    want = []
    for seed in (0, 1, 3, 12345, 2**32 + 7, 2**40):
        r = random.Random(seed)
        want.append([r.choice(seq) for _ in range(50)])
    assert json.loads(done.stdout) == want


def test_the_runner_refuses_a_step_fed_otherwise(cases, node, tmp_path):
    """The oracle is not a rubber stamp: one mask bit changed in the recorded forward fails the run, naming it."""
    case = dict(next(c for c in cases if c["config"] is not None))
    case.pop("python")
    forwards = [dict(f) for f in case["forwards"]]
    k = next(i for i, f in enumerate(forwards) if "mask" in f and len(f["mask"]) > 2)
    row = forwards[k]["mask"][1]
    forwards[k]["mask"] = [forwards[k]["mask"][0], ("0" if row[0] == "1" else "1") + row[1:], *forwards[k]["mask"][2:]]
    case["forwards"] = forwards
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([case]))
    done = subprocess.run([node, str(RUNNER), str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and f"forward {k}: mask" in done.stderr
