"""Memory of the server over wide live runs in a row (scripts/wide_runs.py, run as a command; about eight minutes on
a 2-core host, in the soak tier).

The app runs with its model (one torch thread) and makes 20 live races at the public maximum, W=32 N=8 G=32, with
32 new tokens each, through `/generate`, one after another, on the 12 benchmark prompts in turn. The first pass over
the prompts meets each prompt's tensor shapes once, and glibc keeps freed pages of each new shape (a new longest prompt
adds tens of MB); after that pass nothing may pile up: the server's resident memory after the twentieth run must be
within 5% of where the twelfth left it.
"""

import json
import subprocess
import sys

import pytest
from conftest_app import OUT

from lade_core.paths import ROOT

pytestmark = [pytest.mark.server, pytest.mark.model, pytest.mark.soak]
RUNS, MAX_NEW, BOUND = 20, 32, 1.05


def test_wide_runs_after_a_pass_over_every_prompt_leave_memory_within_five_percent():
    """Each W=32 N=8 G=32 live run added memory that was never returned (+843 MB over nine runs, no plateau): a
    new thread per run, each with its own allocator arena, and freed heap never given back. Runs now share one
    engine thread; once every prompt has been seen the heap must stop growing (that leak adds over 5% in one run).
    Measured from the fifth run instead, a bound of 10% was met by 1.099x in one full test run and missed by 1.11x in
    another: runs 6 to 12 still meet new prompts' shapes. From run 12 to run 20 the failing run grew 2.1%."""
    OUT.mkdir(exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "scripts.wide_runs",
            "--runs",
            str(RUNS),
            "--max-new-tokens",
            str(MAX_NEW),
            "--out",
            str(OUT / "wide-runs.json"),
        ],
        cwd=ROOT,
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=1500,
    )
    result = json.loads((OUT / "wide-runs.json").read_text(encoding="utf-8"))
    marks = result["rss_mb"]
    cycle = result["prompts"]
    assert cycle < RUNS, "the runs must pass over every prompt and go on"
    print(
        f"\nRSS after wide run {cycle} (every prompt seen) {marks[f'after_{cycle}']} MB, after the {RUNS}th "
        f"{marks[f'after_{RUNS}']} MB ({result['last_over_cycle']:.3f}x, bound {BOUND}x)"
    )
    assert result["last_over_cycle"] <= BOUND, marks
