"""The guard's allow-list against a walk of the page and the public API (`scripts/route_walk.py`): everything the
page (the lesson, explorer, lab, embeds, Present, the handout, the sidebar's live races, Auto, a saved run, the race in
the browser) and gradio_client ask for passes it, and the list names nothing the walk does not use but the curl
routes Gradio's API page shows. The refusals themselves: tests/test_guard.py."""

import json
import subprocess
import sys

import pytest

from app import gradio_adapter, routes
from lade_core.paths import ROOT

pytestmark = [pytest.mark.soak, pytest.mark.model, pytest.mark.server, pytest.mark.browser]
CURL = {("POST", "/gradio_api/call/{api_name}"), ("GET", "/gradio_api/call/{api_name}/{event_id}")}


def test_the_page_and_gradio_client_use_only_the_allowed_routes(tmp_path):
    out = tmp_path / "walk.json"
    subprocess.run([sys.executable, "-m", "scripts.route_walk", "--out", str(out)], cwd=ROOT, check=True, timeout=1500)
    walk = json.loads(out.read_text(encoding="utf-8"))
    assert walk["page_errors"] == [], walk["page_errors"]
    used = {tuple(t.split(" ", 1)) for t in walk["used"]}
    own = {r.path for r in routes.routes()}
    allowed = set(gradio_adapter.ROUTES)
    assert {(m, p) for m, p in used if p not in own} <= allowed, used - allowed  # nothing the walk asked was refused
    assert allowed - used <= CURL, allowed - used  # and the list is no longer than the walk needs
    assert walk["client"]["exact"] is True and "must be a whole number from 1 to 32" in walk["client"]["refused"]
    assert walk["client"]["endpoints"] == ["/generate"]
    js = walk["client"]["javascript"]
    assert js["returncode"] == 0 and js["exact"] is True and "must be a whole number from 1 to 32" in js["refused"]
