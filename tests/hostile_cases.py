"""Hostile trace files: a registry of cases, each a small valid trace with one thing made hostile, and what the
loader must do with it. It leaves out running them (tests/test_hostile_loader.py does, and the browser tests can).

A case is one decorated function. It gets a fresh copy of a base trace (a recorded run cut to its first steps, in
tests/hostile/base-*.json) as a JSON document and makes it hostile in place, or returns what the file is instead (other
JSON data, or bytes). The decorator states the expectation:

    @case(rejects="run.dtype")       # parse_run raises TraceError; the one-line message contains this text
    def dtype_markup(doc):
        '''dtype is a closed set: markup in it is refused.'''
        doc["run"]["dtype"] = SVG

    @case(accepts=True)              # loads, passes the app's limits, and is later shown only as text
    @case(accepts=True, limits="run.prompt")   # loads, but app.limits.check_trace refuses it with this text

`base="sampled"` or `base="jacobi"` starts from the sampled or Jacobi run instead of the greedy lookahead one.
`raw("1e999")` puts literal JSON text where JSON data cannot say it. `python tests/hostile_cases.py` lists the cases;
`--write DIR` writes each as DIR/<name>.json; `--bases` recuts the bases from assets/runs.
"""

from __future__ import annotations

import copy
import json
import re
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Callable

from lade_core.paths import ROOT, RUNS

HERE = ROOT / "tests" / "hostile"
MAX_TRACE_BYTES = 20 * 2**20  # lade_core.load's limit (not imported: listing the cases needs no loader)
# Base traces: (recorded run, parallel steps kept). Each keeps a step that the cases below bend: greedy step 24 (two
# candidates, winner 0, four tokens), sampled step 21 (draws, winner 0), Jacobi step 41 (two tokens accepted).
BASES = {"greedy": ("code-class-W7N4G7", 25), "sampled": ("code-class-t0.7-W7N4G7", 22),
         "jacobi": ("code-class-jacobi-W7", 42)}

IMG = "<img src=x onerror=alert(document.domain)>"
SCRIPT = "<script>window.__pwned=1</script>"
SVG = '"><svg onload=alert(1)>'
MD_IMAGE = "![x](http://attacker/p.png)"
MD_LINK = "[Log in again](https://evil.example)"
BREAKOUT = "</script>" + SCRIPT  # would end a <script> data block early if `<` were not escaped there
MARKUP = (IMG, SCRIPT, SVG, MD_IMAGE, MD_LINK, BREAKOUT)
TELLTALES = ("<img src=x", "<script>window.__pwned", "<svg onload", "</script><script>")  # never in a page unescaped
BIDI = "\u202eexe.txt\u202c \u2066isolate\u2069 \u200fRLM"  # right-to-left override, isolates, marks
ZERO_WIDTH = "a\u200bb\u200cc\u200dd\u2060e\ufeff"
EMOJI = "👩‍👩‍👧‍👦 🇺🇳 👍🏽 🧑‍💻 e" + "\u0301" * 40  # ZWJ family, flag, skin tone, combining marks


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable
    base: str
    rejects: str | None
    accepts: bool
    limits: str | None

    @property
    def about(self) -> str:
        return (self.build.__doc__ or "").strip().splitlines()[0]

    @property
    def expectation(self) -> str:
        if self.rejects is not None:
            return f"rejects: {self.rejects}"
        return "accepts" + (f", then check_trace refuses: {self.limits}" if self.limits else "")

    def data(self) -> bytes:
        """The file's bytes, built now (some are megabytes: nothing is kept)."""
        doc = base_doc(self.base)
        out = self.build(doc)
        out = doc if out is None else out
        return out if isinstance(out, bytes) else dumps(out)


CASES: dict[str, Case] = {}


def case(*, rejects: str | None = None, accepts: bool = False, limits: str | None = None, base: str = "greedy"):
    """Register the decorated function as a case; exactly one of `rejects` and `accepts` is given."""
    assert (rejects is None) == accepts and base in BASES and (limits is None or accepts)

    def register(fn):
        assert fn.__name__ not in CASES and fn.__doc__, fn.__name__
        CASES[fn.__name__] = Case(fn.__name__, fn, base, rejects, accepts, limits)
        return fn

    return register


# -- building blocks -------------------------------------------------------------------------------------------------
_RAW = re.compile(r'"@raw@((?:[^"\\]|\\.)*)@"')


def raw(text: str) -> str:
    """A placeholder that `dumps` replaces by the literal JSON `text` (1e999, -Infinity, "\\ud800")."""
    return f"@raw@{text}@"


def dumps(data) -> bytes:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))  # NaN stays the JSON extension NaN
    return _RAW.sub(lambda m: json.loads(f'"{m.group(1)}"'), text).encode("utf-8")


@cache
def _base_text(name: str) -> str:
    return (HERE / f"base-{name}.json").read_text(encoding="utf-8")


def base_doc(name: str) -> dict:
    """A fresh copy of a base trace's JSON document."""
    return json.loads(_base_text(name))


def cut(doc: dict, keep: int) -> dict:
    """A recorded run cut to its first `keep` parallel steps: tokens, budget, baseline and token texts to match."""
    run = doc["run"]
    par, base = run["parallel"], run["baseline"]
    par["steps"] = par["steps"][:keep]
    n = sum(len(s["accepted"]) for s in par["steps"])
    par["tokens"], base["tokens"], base["steps"] = par["tokens"][:n], base["tokens"][:n], base["steps"][:n]
    par["stop_reason"] = base["stop_reason"] = "length"
    run["max_new_tokens"] = n
    used = set(map(str, re.findall(r"\d+", json.dumps([run["prompt_ids"], par, base]))))
    run["token_text"] = {k: v for k, v in run["token_text"].items() if k in used}
    return doc


def step(doc: dict, i: int, lane: str = "parallel") -> dict:
    return doc["run"][lane]["steps"][i]


def set_accepted(doc: dict, i: int, accepted: list[int]) -> None:
    """Give parallel step `i` other accepted tokens, with the run's output and budget changed to match (so the
    loader gets as far as checking the step itself)."""
    run, s = doc["run"], step(doc, i)
    start = sum(len(t["accepted"]) for t in run["parallel"]["steps"][:i])
    tokens = run["parallel"]["tokens"]
    tokens[start: start + len(s["accepted"])] = accepted
    s["accepted"] = accepted
    run["max_new_tokens"] = max(run["max_new_tokens"], len(tokens))


def nested(depth: int) -> list:
    out: list = []
    for _ in range(depth):
        out = [out]
    return out


def as_version_1(doc: dict) -> dict:
    """A version-2 document written back in version 1's names (what `load.upgrade_v1` reads)."""
    run = doc["run"]
    for key in ("vocab_size", "context", "method", "recorded_at"):
        run.pop(key)
    config = run["config"]
    config["pool_from_prompt"] = config.pop("pool") == "prompt"
    config["seed"] = config.pop("window_seed")
    run["lookahead"], run["greedy"] = run.pop("parallel"), run.pop("baseline")
    for lane in (run["lookahead"], run["greedy"]):
        for s in lane["steps"]:
            for key in ("guess", "tree"):
                s.pop(key)
            s["levels_after"] = []
            s["kind"] = "greedy" if s["kind"] == "autoregressive" else s["kind"]
    doc["version"] = 1
    return doc


from hostile_case_list import *  # noqa: E402,F401,F403  the cases themselves, registered on import


def main(argv: list[str]) -> None:
    if argv[:1] == ["--bases"]:
        for name, (recorded, keep) in BASES.items():
            doc = cut(json.loads((RUNS / f"{recorded}.json").read_text(encoding="utf-8")), keep)
            (HERE / f"base-{name}.json").write_text(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n",
                                                    encoding="utf-8")
    elif argv[:1] == ["--write"]:
        folder = Path(argv[1])
        folder.mkdir(parents=True, exist_ok=True)
        for c in CASES.values():
            (folder / f"{c.name}.json").write_bytes(c.data())
    else:
        for c in CASES.values():
            print(f"{c.name:34} {c.base:8} {c.expectation}: {c.about}")


if __name__ == "__main__":
    main(sys.argv[1:])
