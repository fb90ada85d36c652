"""Lookahead Parallelism (`lade_core/parallel.py`, `shares.py`): the deal, a device's layout against the one-device
mask, the speed lab's simulation against the deal, and a real two-process gloo run: exact, and each rank having fed
what its share holds."""

import itertools
import json
import random

import pytest

from lade_core.config import ConfigError, LookaheadConfig
from lade_core.layout import StepLayout
from lade_core.measure.stepcost import tokens_per_device
from lade_core.shares import busiest, deal, fed, layout, payload

MAX_NEW = 24
SETTINGS = (  # the paper's layout at the setting, and a token tree with fewer candidates and N = 3
    LookaheadConfig(window=8, ngram=4, guess=8, tree=False),
    LookaheadConfig(window=5, ngram=3, guess=4, tree=True),
)


def test_the_docstring_example():
    """W = 8, N = 4, G = 8 over two devices: columns 0-3 and 4-7, window tokens 12 and 16, the candidates to the
    lighter device (5 and 3): 28 and 26 tokens, against 49 on one device."""
    shares = deal(8, 3, [3] * 8, 2)
    assert [(s.first, s.columns) for s in shares] == [(0, 4), (4, 4)]
    assert [s.window_tokens(3) for s in shares] == [12, 16]
    assert [len(s.candidates) for s in shares] == [5, 3]
    assert [fed(s, 3, [3] * 8) for s in shares] == [28, 26]
    assert busiest(8, 3, [3] * 8, 1) == StepLayout.plain(3, 8, 8, 3).size == 49


@pytest.mark.parametrize("width,levels,guess,devices", [(8, 3, 8, 2), (7, 3, 7, 3), (3, 2, 5, 4), (5, 1, 0, 2)])
def test_every_column_and_candidate_is_dealt_once(width, levels, guess, devices):
    shares = deal(width, levels, [levels] * guess, devices)
    columns = [c for s in shares for c in range(s.first, s.first + s.columns)]
    assert columns == list(range(width))
    assert sorted(c for s in shares for c in s.candidates) == list(range(guess))


def _rows_of(share, levels, width, cand_len, candidates):
    """The rows of a one-device plain layout a share's layout holds, in its input order."""
    a, b = share.first, share.first + share.columns
    rows = [0]
    if share.columns and levels:
        rows += [1 + j for j in range(b)]
        rows += [1 + lv * width + j for lv in range(1, levels) for j in range(a, b)]
    start = 1 + levels * width
    rows += [start + c * cand_len + k for c in share.candidates for k in range(cand_len)]
    return rows


def test_a_devices_layout_is_the_one_device_mask_restricted_to_its_tokens():
    """Every device's mask, positions and labels are the one-device step's, on the rows it holds (plain candidates):
    the deal changes which tokens a device feeds, never what a token sees."""
    rng = random.Random(0)
    for width, levels, guess, devices in itertools.product((1, 3, 8), (1, 2, 3), (0, 2, 5), (2, 3)):
        cand_len = max(levels, 1)
        candidates = [tuple(rng.randrange(50) for _ in range(cand_len)) for _ in range(guess)]
        whole = StepLayout.plain(levels, width, guess, cand_len)
        for share in deal(width, levels, [cand_len] * guess, devices):
            mine = layout(share, levels, candidates, cand_len, tree=False)
            rows = _rows_of(share, levels, width, cand_len, candidates)
            assert mine.size == len(rows) == fed(share, levels, [cand_len] * guess)
            assert (mine.mask() == whole.mask()[rows][:, rows]).all()
            assert (mine.positions() == whole.positions()[rows]).all()
            start = mine.verify_start  # x and the window keep their names (a candidate is named by its index)
            assert mine.labels()[:start] == [whole.labels()[r] for r in rows[:start]]


def test_the_speed_labs_simulation_is_the_engines_deal():
    """stepcost's busiest device, at a full step's width, is what the deal gives (the level-0 columns included);
    an average step's width is read the same way."""
    for width, ngram, guess, devices in [(8, 4, 8, 2), (7, 4, 7, 3), (15, 5, 15, 4), (8, 2, 8, 2)]:
        rows = ngram - 1
        full = 1 + (width + guess) * rows
        assert tokens_per_device(full, width, guess, devices) == busiest(width, rows, [rows] * guess, devices)
    assert tokens_per_device(49, 8, 8, 1) == 49
    assert payload(deal(8, 3, [3] * 8, 2), [3] * 8) == 3 + 4 + 5 * 4  # the first device's new level, 5 predictions


def test_parallel_refuses_what_it_cannot_run():
    from lade_core.parallel import check_devices

    with pytest.raises(ConfigError, match="2 to 8"):
        check_devices(1, "cpu")
    with pytest.raises(ConfigError, match="GPUs, one each"):
        check_devices(2, "cuda")


@pytest.fixture(scope="module")
def two_ranks(lm, bench_prompts):
    """A chat prompt at both settings (one whose window fills: full steps to count), decoded by two gloo processes
    (each loads the model), and the same on one device in this process (a code prompt and a grounded one, whose
    answer repeats its text, too: soak)."""
    from lade_core.lookahead import lookahead_generate
    from lade_core.parallel import Job, run_job

    chosen = [next(p for p in bench_prompts if p["kind"] == "chat")]
    ids = tuple(tuple(lm.encode_prompt(p["prompt"])) for p in chosen)
    runs = run_job(Job(None, "cpu", None, "stock", ids, SETTINGS, MAX_NEW), 2)
    cases = []
    for (p, prompt_ids), runs_here in zip(zip(chosen, ids), zip(*[iter(runs)] * len(SETTINGS))):
        for config, run in zip(SETTINGS, runs_here):
            one = lookahead_generate(lm, list(prompt_ids), config, MAX_NEW)
            cases.append((p, prompt_ids, config, run, one))
    return cases


def test_two_processes_decode_exactly(two_ranks, greedy):
    for prompt, _, config, run, one in two_ranks:
        assert run.tokens == greedy(prompt["id"], MAX_NEW), (prompt["id"], config)
        assert run.tokens == one.tokens and len(run.steps) == len(one.steps), (prompt["id"], config)
        assert [s.accepted for s in run.steps] == [s.accepted for s in one.steps]


@pytest.mark.soak
@pytest.mark.parametrize("kind", ["code", "grounded"])
def test_two_processes_decode_the_other_prompts_exactly(lm, bench_prompts, greedy, kind):
    """The code and grounded prompts make test leaves out: two gloo processes at both settings, greedy's tokens and
    one device's steps."""
    from lade_core.lookahead import lookahead_generate
    from lade_core.parallel import Job, run_job

    prompt = next(p for p in bench_prompts if p["kind"] == kind)
    ids = lm.encode_prompt(prompt["prompt"])
    runs = run_job(Job(None, "cpu", None, "stock", (tuple(ids),), SETTINGS, MAX_NEW), 2)
    for config, run in zip(SETTINGS, runs, strict=True):
        one = lookahead_generate(lm, list(ids), config, MAX_NEW)
        assert run.tokens == greedy(prompt["id"], MAX_NEW) == one.tokens, config
        assert [s.accepted for s in run.steps] == [s.accepted for s in one.steps]


def test_each_rank_fed_its_share(lm, two_ranks):
    """Per step, what each rank fed (counted from its input) is its share's layout; with the paper's layout that is
    the deal's count, and at a full step the busiest rank fed what the speed lab's simulation says. Each rank sent
    its part of the all-gather; the one that verified the accepted tokens also their K/V (2 x layers x kv heads x
    head dim fp32 values a token)."""
    c = lm.model.config
    kv_per_token = 2 * c.num_hidden_layers * c.num_key_value_heads * (c.hidden_size // c.num_attention_heads) * 4
    full_steps = 0
    for _, _, config, run, _ in two_ranks:
        for step in run.steps[1:]:
            assert len(step.ranks) == 2
            sizes = [len(c) for c in step.candidates]
            shares = deal(step.window, len(step.levels_before), sizes, 2)
            for share, rank in zip(shares, step.ranks):
                assert (rank.first, rank.columns, rank.candidates) == (share.first, share.columns, share.candidates)
                counted = fed(share, len(step.levels_before), sizes)
                assert rank.fed == counted if not config.tree else rank.fed <= counted
            assert sum(r.fed for r in step.ranks) >= step.n_input + 1  # x on both, level 0 twice on the second
            gathered = 4 * payload(shares, sizes)
            assert min(r.sent for r in step.ranks) == gathered
            kv = [r.sent - gathered for r in step.ranks if r.sent > gathered]
            assert kv == ([step.match_lengths[step.winner] * kv_per_token] if step.winner >= 0 else [])
            full = len(step.levels_before) == config.ngram - 1 and len(step.candidates) == config.guess
            if full and not config.tree:
                full_steps += 1
                assert max(r.fed for r in step.ranks) == tokens_per_device(step.n_input, config.window, config.guess, 2)
    assert full_steps > 0


def test_a_parallel_run_is_a_trace_like_any_other(lm, two_ranks):
    """Saved and loaded back, with its ranks checked against the deal; a rank that claims to have fed one token
    more is refused with the step and the field."""
    from lade_core.autoregressive import autoregressive_generate
    from lade_core.config import DraftConfig
    from lade_core.record import RunRequest, make_trace
    from lade_core.trace import Lane
    from lade_core.tracefile import TraceError, parse_run

    prompt, ids, config, run, _ = two_ranks[0]
    request = RunRequest(prompt["prompt"], ids, MAX_NEW)
    baseline = autoregressive_generate(lm, ids, MAX_NEW)
    trace = make_trace(lm, request, [Lane("lookahead", config, DraftConfig(), run)], baseline)
    assert parse_run(trace.to_json()) == trace
    doc = json.loads(trace.to_json())
    doc["run"]["parallel"]["steps"][3]["ranks"][1]["fed"] += 1
    with pytest.raises(TraceError, match=r"steps\[3\]\.ranks\[1\]\.fed"):
        parse_run(json.dumps(doc))


def test_the_command_line_refuses_devices_where_they_do_not_apply(capsys):
    """Sampling, adaptive sizes and another method are refused before any model loads, with what --devices runs."""
    from lade_core.cli import main

    for extra in (["--temperature", "0.7"], ["--adaptive"], ["--method", "pld"]):
        assert main(["generate", "--prompt", "hi", "--devices", "2", *extra]) == 2
        assert "--devices runs greedy lookahead with fixed sizes only" in capsys.readouterr().err


@pytest.mark.soak
def test_torchruns_ranks_each_load_the_model_once(tmp_path):
    """Under torchrun each rank is a `lade generate` process: it decodes with the model it loaded (on its own GPU
    where there are GPUs, `parallel.rank_device`), not a second copy beside it; the output is greedy's."""
    import os
    import shutil
    import subprocess
    import sys

    from app.process import free_port

    torchrun = shutil.which("torchrun", path=os.path.dirname(sys.executable))
    assert torchrun, "torchrun comes with torch"
    log = tmp_path / "loads.txt"
    probe = (  # counts every model load of each rank, then runs the CLI as `python -m lade_core` would
        "import os, runpy, lade_core.checkpoint as c; load = c.load_model\n"
        "def counted(*a, **k):\n"
        f"    open({str(log)!r}, 'a').write(os.environ['RANK'] + '\\n'); return load(*a, **k)\n"
        "c.load_model = counted\n"
        "runpy.run_module('lade_core', run_name='__main__')\n"
    )
    (tmp_path / "probe.py").write_text(probe)
    args = ["generate", "--devices", "2", "--device", "cpu", "-W", "5", "-N", "3", "-G", "4", "--no-tree"]
    args += ["--max-new-tokens", "12", "--prompt", "Write a Python function that adds two numbers."]
    command = [torchrun, "--nproc-per-node", "2", "--master-port", str(free_port()), str(tmp_path / "probe.py")]
    done = subprocess.run([*command, *args], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "lookahead output identical to greedy" in done.stdout and "rank 1:" in done.stdout, done.stdout
    assert sorted(log.read_text().split()) == ["0", "1"], log.read_text()
