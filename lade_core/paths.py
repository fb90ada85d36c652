"""Where the project's files are: the one place that knows the repository layout.

Everything shipped beside the code (recorded runs, measured curves, bench results, the benchmark prompts) lives
under `ASSETS`; nothing in the package or the tests reaches outside the repository.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "assets"
RUNS = ASSETS / "runs"  # recorded runs
GALLERY = ASSETS / "gallery.json"  # which recorded runs the app shows, and how it captions them
BENCH = ASSETS / "bench"  # bench, sweep and peer results, raw JSON
PROMPTS = ASSETS / "prompts.jsonl"  # the benchmark prompts (code, chat, and grounded: the answer copies the prompt)
OUT = ROOT / "out"  # what a measurement writes unless given a path (ignored by git): assets/ change only on purpose


def measurement(name: str) -> Path:
    """A saved measurement by name: 'costcurve-cpu', 'sweep', 'sweep-prompt', ..."""
    return ASSETS / f"{name}.json"


def fresh(name: str) -> Path:
    """Where a new measurement goes when no path is given: out/<name>.json (the folder made if missing). A file in
    assets/ is replaced only by naming it (`--out assets/...`)."""
    OUT.mkdir(exist_ok=True)
    return OUT / f"{name}.json"
