"""The README's `/generate` examples run as written (issue 57), from Python (`gradio_client`) and JavaScript
(`@gradio/client`, a pinned dev dependency), against the app with its model: a plain run whose summary has every
field `api.Summary` declares and is exact, a streamed run read as it comes and cancelled, and a refusal caught with
its sentence. The listing both clients print: tests/test_api.py."""

import contextlib
import io
import json
import re
import subprocess

import pytest
from conftest_app import OUT, serve_app

from app import api
from lade_core.paths import ROOT

pytestmark = [pytest.mark.server, pytest.mark.model]
README_URL = "http://127.0.0.1:7860/"
REFUSED = "window (W) must be a whole number from 1 to 32, got 99"


def example(language: str) -> str:
    """The README's example in `language` under "The API: `/generate`"."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### The API: `/generate`") :]
    return re.search(rf"```{language}\n(.*?)```", section, re.S).group(1)


@pytest.fixture(scope="module")
def server():
    with serve_app(["app.py", "--no-browser-engine"], "api-examples.log", OMP_NUM_THREADS="1") as (url, _):
        yield url


def check(summary: dict, partial: dict, seen: int) -> None:
    keys = set(api.Summary.__annotations__) - {"note"}
    assert set(summary) == keys, set(summary) ^ keys
    assert summary["done"] is True and summary["exact"] is True
    lookahead, baseline = summary["lookahead"], summary["baseline"]
    assert lookahead["tokens"] == baseline["tokens"] and len(lookahead["tokens"]) == 32
    assert set(lookahead) == set(api.MethodSummary.__annotations__) and lookahead["text"]
    assert baseline["steps"] == 32 and lookahead["steps"] <= 32
    assert lookahead["compression"] == pytest.approx(32 / lookahead["steps"], abs=1e-3)
    assert summary["config"] == {"window": 7, "ngram": 4, "guess": 7, "pool": "prompt", "pool_from_prompt": True}
    assert seen == 2 and partial["done"] is False and partial["exact"] is None  # cancelled while it ran


def test_the_python_example_runs(server):
    from gradio_client import Client

    code, seen = example("python").replace(README_URL, server), {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "README.md (python)", "exec"), seen)
    check(seen["summary"], seen["partial"], seen["seen"])
    assert printed.getvalue().splitlines()[-1] == REFUSED
    after = Client(server, verbose=False).predict(prompt="Hi", max_new_tokens=4, api_name="/generate")
    assert after["done"] and after["exact"]  # the cancelled run freed the engine


def test_the_javascript_example_runs(server):
    script = OUT / "readme-example.mjs"  # under the repository: node finds @gradio/client in its node_modules
    shown = "\nconsole.log(JSON.stringify({ summary, partial, seen }));\n"
    script.write_text(example("js").replace(README_URL, server) + shown, encoding="utf-8")
    ran = subprocess.run(["node", str(script)], capture_output=True, text=True, timeout=300, cwd=ROOT, check=False)
    assert ran.returncode == 0, ran.stderr[-2000:]
    lines = ran.stdout.strip().splitlines()
    assert lines[-2] == REFUSED, lines
    got = json.loads(lines[-1])
    check(got["summary"], got["partial"], got["seen"])
