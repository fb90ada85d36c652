"""Every script under scripts/ still starts: `python -m scripts.<name> --help` exits 0 with its usage (a script that
imports a name the project no longer has, or calls a removed function at import, fails here). Soak tier: each start
imports torch or Gradio."""

import os
import subprocess
import sys

import pytest

from lade_core.paths import ROOT

# the scripts a person runs (a module another script imports, such as peers_relatives, has no command of its own)
SCRIPTS = sorted(
    p.stem for p in (ROOT / "scripts").glob("*.py") if '__name__ == "__main__"' in p.read_text(encoding="utf-8")
)


@pytest.mark.soak
@pytest.mark.parametrize("name", SCRIPTS)
def test_the_script_starts(name):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False"}
    done = subprocess.run(
        [sys.executable, "-m", f"scripts.{name}", "--help"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout.lower(), done.stdout[:500]


def test_every_script_is_listed():
    assert len(SCRIPTS) >= 20 and "peers" in SCRIPTS and "layouts_memory" in SCRIPTS
