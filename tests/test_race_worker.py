"""The race in the visitor's browser keeps the page's thread for drawing (issue 50, the structure behind it): no
script the page runs (app/render/assets.py `SCRIPTS`) names the engine's loading, its session or its decoding (the
weights' rebuild, onnxruntime-web, the engine's rules, the tokenizer, Auto's measurement); they run in the race's
worker, a file beside the engine's (not a blob: a Content-Security-Policy's `worker-src 'self'` allows it), which the
engine's files carry and which loads them. tests/test_site_browser.py checks the same in a running page. On the
landed code the page's race script loaded and ran all of them on the page's thread."""

import re

from app.render import assets
from app.render.engine_files import ENGINE_SCRIPTS
from lade_core.paths import ROOT

STATIC = ROOT / "app" / "static"
WORKER = "lade-race-worker.js"
ENGINE_WORK = re.compile(
    r"Lade\.(forward|weights|engine|tokenizer|auto|derive)\b|InferenceSession|importScripts|\bort\.|"
    r"\.rebuild\(|measureCurve|new Worker\(\s*URL\.createObjectURL|blob:"
)


def test_no_script_of_the_page_loads_or_runs_the_engine():
    found = {
        name: m.group(0) for name in assets.SCRIPTS if (m := ENGINE_WORK.search((STATIC / name).read_text("utf-8")))
    }
    assert found == {}, found


def test_the_worker_is_a_file_of_the_engine_that_loads_the_engine_itself():
    assert WORKER in ENGINE_SCRIPTS and WORKER not in assets.SCRIPTS
    worker = (STATIC / WORKER).read_text("utf-8")
    loaded = re.search(r"importScripts\(([^)]*)\)", worker).group(1)
    # the worker's scripts are the engine's files (engine_files.ENGINE_SCRIPTS, served beside it), in that order
    assert re.findall(r'"([\w.-]+\.js)"', loaded) == [n for n in ENGINE_SCRIPTS if n != WORKER], loaded
    for work in ("Lade.forward.load", "Lade.auto.measureCurve", "E.race("):
        assert work in worker, work
    page = (STATIC / "lade-browser-race.js").read_text("utf-8")
    assert 'new Worker(new URL("lade-race-worker.js", this.base))' in page  # a same-origin file, never a blob
