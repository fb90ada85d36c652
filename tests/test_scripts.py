"""Every script under scripts/ still starts and still does its work (issue 52). `python -m scripts.<name> --help`
exits 0 with its usage (a script that imports a name the project no longer has, or calls a removed function at
import, fails there), and a tiny real run of each (`TINY`: one prompt, a few new tokens, one round, one thread, a
short flood) goes through its real path end to end into a file under tmp_path, whose contents are checked: the
keys and rows it should hold, its numbers positive, its tokens identical to greedy where the script compares them.
Scripts are run as commands (tests never import them). Two cannot run tiny on this machine, and their tiniest path
is checked instead: gpu_bench needs a CUDA device (here its refusal, exit 2 and nothing written; with a GPU, one dtype
on one prompt), and the official side of peers needs its own venv built from PyPI (transformers 4.34, lade 0.0.2):
peers runs its `--relatives` path here, and peers_official, that venv's worker, is checked for its refusal outside it.
The browser scripts drive /usr/bin/chromium; the app's scripts start it on a free port. Soak tier: each start
imports torch or Gradio, most load the model, start the app or drive Chromium."""

import json
import os
import subprocess
import sys

import pytest

from lade_core.paths import ROOT

# the scripts a person runs (a module another script imports, such as peers_relatives, has no command of its own)
SCRIPTS = sorted(
    p.stem for p in (ROOT / "scripts").glob("*.py") if '__name__ == "__main__"' in p.read_text(encoding="utf-8")
)
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False", "OMP_NUM_THREADS": "1"}
PROMPT = {"id": "tiny-add", "kind": "code", "prompt": "Write a Python function add(a, b) that returns a + b."}
SMALL_TRACE = "tests/hostile/base-greedy.json"  # a 31 KB saved run
WIDTHS = "assets/bench/kernels-widths-3.json"  # another machine's kernels_bench --widths


@pytest.mark.soak
@pytest.mark.parametrize("name", SCRIPTS)
def test_the_script_starts(name):
    done = subprocess.run(
        [sys.executable, "-m", f"scripts.{name}", "--help"],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout.lower(), done.stdout[:500]


# --- the tiny runs: each script's arguments ({out}: its JSON file, {prompts}: a one-prompt file, {junit}: a JUnit
# file) and the check of what it wrote (`doc`: the JSON at {out}, None where nothing was written; `done`: the process)


def check_adaptive_vs_auto(doc, done):
    [row] = doc["prompts"]
    assert row["id"] == PROMPT["id"] and row["exact"] is True and doc["summary"]["all_exact"] is True
    assert row["adaptive"]["speedup"] > 0 and row["auto"]["speedup"] > 0 and row["greedy_noise"] >= 1
    assert doc["max_new_tokens"] == 8


def check_body_flood(doc, done):
    assert doc["connections"] == 2 and sum(doc["answered_while_held"].values()) == 2
    assert doc["rss_mb"]["before"] > 0 and doc["rss_mb"]["held"] > 0 and doc["rss_mb"]["after_close"] > 0


def check_browser_engine(doc, done):
    assert "WebAssembly" in doc["backend"], doc["backend"]
    assert [(r["method"], r["identical"]) for r in doc["rows"]] == [("greedy", True), ("lookahead", True)]
    assert all(r["tokens"] == 4 and r["browser_ms_per_token"] > 0 for r in doc["rows"])
    assert doc["warm"]["stored_bytes"] > 0  # the returning visitor read the model from the browser's storage


def check_browser_race(doc, done):
    one = doc["threads"]["1"]
    assert one["all_identical"] is True and len(one["rows"]) == 2
    assert all(r["browser_ms_per_token"] > 0 and r["python_ms_per_token"] > 0 for r in one["rows"])
    assert one["speedup"]["browser"] > 0 and one["speedup"]["python"] > 0


def check_embed_type(doc, done):
    rows = doc["rows"]
    assert [r["frame"] for r in rows] == ["720x405", "960x540", "1280x720"]
    assert len({r["embed"] for r in rows}) == 1 and all(r["texts"] > 0 and r["median"] > 0 for r in rows)


def check_gpu_bench(doc, done):
    if doc is None:  # no CUDA device here: the refusal, and nothing written
        assert done.returncode == 2 and "no CUDA device" in done.stderr, done.stderr[-500:]
        return
    assert done.returncode == 0, done.stderr[-3000:]
    [run] = doc["runs"]
    assert run["dtype"] == "float32" and all(c["summary"]["exact_count"] == 1 for c in run["configs"])


def check_kernels_bench(doc, done):
    [row] = doc["prompts"]
    assert row["same_tokens"] is True and doc["same_tokens"] == 1
    assert set(doc["cost_curves"]) == {"stock", *row["speedup"]} and len(row["speedup"]) == 2
    assert all(p["seconds"] > 0 for c in doc["cost_curves"].values() for p in c["points"])


def check_layouts_memory(doc, done):
    assert [r["choice"] for r in doc["rows"]] == ["stock", "packed", "transposed", "auto"]
    assert all(0 < r["rss_mb"] <= r["peak_mb"] for r in doc["rows"])


def check_load_test(doc, done):
    readers = doc["readers"]
    assert (
        readers["errors"] == {}
        and readers["page_s"]["n"] == 2
        and readers["runs_s"]["n"] == 2 * len(readers["lesson_runs"])
    )
    [a_class] = doc["classes"]
    assert a_class["finished"] == a_class["exact"] == 2 and a_class["refused"] == a_class["hung"] == 0
    assert a_class["same_tokens_per_prompt"] is True and doc["rss_mb_end"] > 0


def check_auto_duel(doc, done):
    for d in (doc["here"], doc[f"{WIDTHS} 1t"], doc[f"{WIDTHS} 2t"]):
        x = d["4"]
        assert (x["fixed"]["window"], x["adaptive"]["window"]) == (d["swept_choice"]["window"], 7)
        for c in ("fixed", "adaptive"):  # one prompt: its prediction is its compression over its mean step cost
            assert 1 <= x[c]["compression"] <= x[c]["ngram"] and x[c]["step_cost"] > 0
            assert x[c]["predicted_speedup_median"] == pytest.approx(x[c]["compression"] / x[c]["step_cost"])
    assert doc[f"{WIDTHS} 1t"]["kernels"] == "transposed 1, 59+; packed 4-58"  # that machine's plan, read back


def check_peers(doc, done):
    [row] = doc["rows"]
    assert set(row["runs"]) == {"tf-greedy", "tf-pld", "lade-greedy", "lade-747", "two-greedy", "sweep-auto"}
    assert all(r["identical_to_greedy"] is True and r["ms_per_token"] > 0 for r in row["runs"].values())


def check_peers_official(doc, done):
    assert done.returncode != 0 and "peers venv" in done.stderr, done.stderr[-500:]


def check_post_flood(doc, done):
    assert doc["visitor_s_and_status"] and all(status == 201 for _, status in doc["visitor_s_and_status"])
    assert doc["flooders_statuses"].get("201", 0) >= 1 and doc["visitor_slowest_s"] > 0


def check_prompt_cost(doc, done):
    [run] = doc["runs"]
    assert 48 <= run["prompt_tokens"] <= 64 and run["new_tokens"] == 2 and run["lanes"] == 2 and run["admitted"]
    assert run["seconds"] > 0 and run["peak_rss_mb"] >= run["rss_after_load_mb"] > 0


def check_refusal_log(doc, done):
    targets = doc["targets"]
    assert list(targets) == [
        "component",
        "arithmetic",
        "gallery",
        "wait",
        "run",
        "trace",
        "replay",
        "upload",
        "forwarded",
    ]
    assert all(t["requests"] > 0 and t["visitor_failed"] == 0 and t["visitor_load_s"] for t in targets.values())
    assert set(targets["component"]["statuses"]) == {"404"}  # a server function that does not exist
    for name in ("arithmetic", "gallery", "wait"):  # the light events answer, however often asked
        assert set(targets[name]["statuses"]) == {"200"}, (name, targets[name]["statuses"])
    for name in ("run", "trace", "replay", "upload"):  # the run routes answer, or refuse past the per-client rate
        assert set(targets[name]["statuses"]) <= {"200", "201", "429"}, (name, targets[name]["statuses"])
    assert set(targets["forwarded"]["statuses"]) == {"400"}  # a forwarded host that is no host


def check_route_walk(doc, done):
    assert doc["page_errors"] == [] and doc["client"]["endpoints"] == ["/generate"] and doc["client"]["exact"] is True
    assert "must be a whole number from 1 to 32" in doc["client"]["refused"]
    assert any("/gradio_api/queue/join" in t for t in doc["used"]), doc["used"]


def check_session_memory(doc, done):
    assert doc["visitors"] == 3 and doc["distinct_runs"] is True and doc["largest_answer_bytes"] > 0
    assert doc["rss_mb"]["after_3_visitors"] > 0


def check_slowest(doc, done):
    assert done.stdout.startswith("2 tests,"), done.stdout
    assert "t::slow" in done.stdout and "t::quick" not in done.stdout  # the slowest one of --top 1


def check_step_cost(doc, done):
    [a_round] = doc["rounds"]
    assert a_round["greedy_s"] > 0 and [p["candidates"] for p in a_round["points"]] == [0, 2]
    sizes = [p["tokens"] for p in a_round["points"]]
    assert sizes[0] < sizes[1] and all(p["seconds"] > 0 for p in a_round["points"])


def check_upload_copies(doc, done):
    assert doc["trace_bytes"] > 0 and doc["total_x"] == 0, doc  # an opened run, its download and export: no files


def check_wait_check(doc, done):
    assert len(doc["races"]) == 1 and all(r["bound_s"] > 0 and r["took_s"] > 0 for r in doc["races"])
    assert doc["held"] == sum(r["held"] for r in doc["races"]) and doc["at_rest"]["bound_s"] > 0
    assert doc["under_load"]["busy_processes"] >= 1 and doc["under_load"]["bound_s"] > 0


def check_wide_runs(doc, done):
    assert len(doc["seconds"]) == 1 and doc["rss_mb"]["after_1"] > 0 and doc["max_new_tokens"] == 4


OUT = ["--out", "{out}"]
TINY = {
    "adaptive_vs_auto": (["--max-new-tokens", "8", "--prompts", "{prompts}", *OUT], check_adaptive_vs_auto),
    "auto_duel": (["--widths", WIDTHS, "--tokens", "4", "--limit", "1", *OUT], check_auto_duel),
    "body_flood": (["--connections", "2", "--hold", "0.5", *OUT], check_body_flood),
    "browser_engine": (["--tokens", "4", "--prompts", "1", *OUT], check_browser_engine),
    "browser_race": (["--tokens", "4", "--prompts", "1", "--threads", "1", *OUT], check_browser_race),
    "embed_type": (["--limit", "1", *OUT], check_embed_type),
    # no GPU here: the refusal; with one, one dtype on one prompt
    "gpu_bench": (
        ["--prompts", "{prompts}", "--max-new-tokens", "4", "--repeat", "1", "--dtypes", "float32", *OUT],
        check_gpu_bench,
    ),
    "kernels_bench": (["--prompts", "{prompts}", "--max-new-tokens", "4", *OUT], check_kernels_bench),
    "layouts_memory": (OUT, check_layouts_memory),  # already small: three processes of 48 tokens each
    "load_test": (
        ["--readers", "2", "--over", "1", "--classes", "1", "--students", "2", "--hang", "300", *OUT],
        check_load_test,
    ),
    # the official side needs its venv built from PyPI (transformers 4.34, lade 0.0.2): its relatives here
    "peers": (
        ["--relatives", "--methods", "tf-greedy,tf-pld,lade-greedy,lade-747,two-greedy,sweep-auto"]
        + ["--prompts", "{prompts}"]
        + ["--max-new-tokens", "8", *OUT],
        check_peers,
    ),
    # the official worker runs only in that venv: here, its refusal naming it
    "peers_official": (["--model", "{out}"], check_peers_official),
    "post_flood": (["--flooders", "1", "--connections", "1", "--seconds", "6", *OUT], check_post_flood),
    "prompt_cost": (["--tokens", "64", "--max-new-tokens", "2", *OUT], check_prompt_cost),
    "refusal_log": (["--target", "all", "--seconds", "1", *OUT], check_refusal_log),
    "route_walk": (["--no-browser", *OUT], check_route_walk),  # the full walk: tests/test_route_walk.py
    "session_memory": (["--trace", SMALL_TRACE, "--visitors", "3", "--distinct", *OUT], check_session_memory),
    "slowest": (["{junit}", "--top", "1"], check_slowest),
    "step_cost": (
        ["-W", "3", "-N", "2", "--guesses", "0,2", "--prefix", "16", "--repeats", "3", "--rounds", "1", *OUT],
        check_step_cost,
    ),
    "upload_copies": (["--trace", SMALL_TRACE, *OUT], check_upload_copies),
    "wait_check": (["--races", "1", "--load-s", "3", *OUT], check_wait_check),
    "wide_runs": (["--runs", "1", "--max-new-tokens", "4", *OUT], check_wide_runs),  # 20 runs: test_wide_runs.py
}
REFUSES = {"gpu_bench", "peers_official"}  # their checks read the return code: a refusal here is their tiny path
JUNIT = """<testsuites><testsuite time="3.5">
<testcase classname="t" name="quick" time="0.5"/><testcase classname="t" name="slow" time="3.0"><failure/></testcase>
</testsuite></testsuites>"""


@pytest.mark.soak
@pytest.mark.parametrize("name", sorted(TINY))
def test_a_tiny_run_of_the_script_does_its_work(name, tmp_path):
    args, check = TINY[name]
    out, prompts, junit = tmp_path / "out.json", tmp_path / "prompts.jsonl", tmp_path / "junit.xml"
    prompts.write_text(json.dumps(PROMPT) + "\n", encoding="utf-8")
    junit.write_text(JUNIT, encoding="utf-8")
    command = [a.format(out=out, prompts=prompts, junit=junit) for a in args]
    done = subprocess.run(
        [sys.executable, "-m", f"scripts.{name}", *command],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0 or name in REFUSES, done.stderr[-3000:]
    check(json.loads(out.read_text(encoding="utf-8")) if out.exists() else None, done)


def test_every_script_is_listed():
    """A script added under scripts/ without a tiny run fails here (and one listed but gone)."""
    assert len(SCRIPTS) >= 20 and "peers" in SCRIPTS and "layouts_memory" in SCRIPTS
    assert set(TINY) == set(SCRIPTS), set(SCRIPTS) ^ set(TINY)
