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
`--write DIR` writes each as DIR/<name>.json (`write(folder)` from a test); `--bases [NAME ...]` recuts the bases
from assets/runs (all, or the ones named).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from lade_core.paths import ROOT, RUNS
from lade_core.tracefile import MAX_TRACE_BYTES

HERE = ROOT / "tests" / "hostile"
# Base traces: (recorded run, parallel steps kept). Each keeps a step that the cases below bend: greedy step 24 (two
# candidates, winner 0, four tokens), sampled step 21 (draws, winner 0), Jacobi step 41 (two tokens accepted).
BASES = {
    "greedy": ("code-class-W7N4G7", 25),
    "sampled": ("code-class-t0.7-W7N4G7", 22),
    "jacobi": ("code-class-jacobi-W7", 42),
    "race": ("relatives-race-grounded", 4),
}
# The race base (version 3): lookahead with prompt lookup candidates in `parallel`, prompt lookup decoding and an
# early-exit draft in `lanes`, each cut to the tokens its first 4 main steps wrote.

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
# Characters that show nothing (default-ignorable or format), each kind carried by one token of `token_text_invisible`:
# a grid cell must name every one of them (⟨U+E0041⟩), so that a token cannot carry hidden text.
INVISIBLE = {
    "tags": "ok" + "".join(chr(0xE0000 + ord(c)) for c in "ignore all") + "\U000e007f",  # Unicode tag characters
    "variation_selectors": "a\ufe00b\ufe0ec\U000e0100d\U000e01ef",
    "hangul_fillers": "\u115f\u1160\u3164\uffa0",
    "mongolian_vowel_separator": "x\u180ey",
    "other_ignorables": "\u00ad\u034f\u061c\u17b4\u17b5\u2061\u2064\u206a\u206f\ufff9\ufffb\U0001d173\U0001bca0",
}
INVISIBLE_CODEPOINTS = sorted({ord(c) for text in INVISIBLE.values() for c in text if not c.isascii()})
# A model name made of Markdown and HTML that would fetch from another origin and show a link if rendered as
# Markdown (the speed lab did): at most 200 characters, the field's limit. No request may go to OFF_ORIGIN.
OFF_ORIGIN = ("attacker.example", "evil.example")
MODEL_MARKDOWN = (
    '![a](https://attacker.example/a.png) <img src="https://attacker.example/b.png"> '
    "[Log in again](https://evil.example/login) **bold** # Heading"
)


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
    """A recorded run cut to its first `keep` parallel steps: tokens, budget, baseline, the other lanes (each to
    its steps within those tokens, "cancelled" where that falls short) and token texts to match."""
    run = doc["run"]
    par, base = run["parallel"], run["baseline"]
    par["steps"] = par["steps"][:keep]
    n = sum(len(s["accepted"]) for s in par["steps"])
    par["tokens"], base["tokens"], base["steps"] = par["tokens"][:n], base["tokens"][:n], base["steps"][:n]
    par["stop_reason"] = base["stop_reason"] = "length"
    run["max_new_tokens"] = n
    for lane in run.get("lanes", []):
        steps, total = [], 0
        for s in lane["run"]["steps"]:
            if total + len(s["accepted"]) > n:
                break
            steps.append(s)
            total += len(s["accepted"])
        lane["run"].update(
            steps=steps, tokens=lane["run"]["tokens"][:total], stop_reason="length" if total == n else "cancelled"
        )
    lanes = [lane["run"] for lane in run.get("lanes", [])]
    used = set(re.findall(r"(?<![\d.])\d+(?![\d.])", json.dumps([run["prompt_ids"], par, base, lanes])))  # ints
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
    tokens[start : start + len(s["accepted"])] = accepted
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


# -- markup in every string field: free text loads (and is shown as text), a closed set refuses it ------------------
@case(accepts=True)
def prompt_markup(doc):
    """Every markup payload in the prompt, Markdown image and link included."""
    doc["run"]["prompt"] = "\n".join(MARKUP) + "\n" + doc["run"]["prompt"]


@case(accepts=True)
def title_markup(doc):
    """A title that closes a <script> element and opens another."""
    doc["run"]["title"] = BREAKOUT + IMG


@case(accepts=True)
def model_markup(doc):
    """Markup and Markdown as the model's name (at most 200 characters)."""
    doc["run"]["model"] = " ".join((IMG, SCRIPT, SVG, MD_IMAGE, MD_LINK))


@case(accepts=True)
def model_markdown_lab(doc):
    """Markdown image links, an <img> and a "Log in again" link to other origins as the model's name (the lab)."""
    doc["run"]["model"] = MODEL_MARKDOWN


@case(accepts=True)
def device_markup(doc):
    """An attribute break-out as the device (at most 40 characters)."""
    doc["run"]["device"] = SVG


@case(accepts=True)
def recorded_at_markup(doc):
    """An <img onerror> as the recording date."""
    doc["run"]["recorded_at"] = "<img src=x onerror=alert(1)>"


@case(accepts=True)
def token_text_markup(doc):
    """The text of the first output tokens is markup, Markdown and a </script> break-out."""
    ids = list(dict.fromkeys(doc["run"]["parallel"]["tokens"]))
    for token, text in zip(ids, MARKUP):
        doc["run"]["token_text"][str(token)] = text


@case(rejects="run.parallel.stop_reason must be one of")
def stop_reason_markup(doc):
    """stop_reason is a closed set: markup in it is refused."""
    doc["run"]["parallel"]["stop_reason"] = IMG


@case(rejects="run.parallel.steps[3].kind must be one of")
def kind_markup(doc):
    """A step's kind is a closed set."""
    step(doc, 3)["kind"] = SCRIPT


@case(rejects="run.parallel.steps[3].kernels must be one of")
def kernels_markup(doc):
    """A step's CPU layout is a closed set (stock, packed, or unrecorded)."""
    step(doc, 3)["kernels"] = IMG


@case(accepts=True)
def machine_markup(doc):
    """Markup, bidi and Markdown in the machine's words (its description, kernels and libraries) are shown as text."""
    doc["run"]["machine"] = {
        "description": "\u202e" + IMG,
        "kernels": SCRIPT[:80],
        "versions": MD_LINK[:200],
        "cores": 2,
        "threads": 1,
    }


@case(rejects="run.machine.description is 201 characters long")
def machine_description_long(doc):
    """The machine's description is bounded."""
    doc["run"]["machine"] = {"description": "x" * 201}


@case(rejects="run.machine.threads must be")
def machine_threads_huge(doc):
    """Threads are a count within bounds."""
    doc["run"]["machine"] = {"description": "cpu", "threads": 10**9}


@case(rejects="run.machine.curve has 65 items")
def machine_curve_long(doc):
    """A curve is at most 64 widths long."""
    doc["run"]["machine"] = {"curve": [{"tokens": n, "seconds": 1.0, "q1": 1.0, "q3": 1.0} for n in range(1, 66)]}


@case(rejects="run.machine.curve[1].tokens: 1 does not follow 1")
def machine_curve_unordered(doc):
    """A curve's widths go up from one token."""
    doc["run"]["machine"] = {"curve": [{"tokens": 1, "seconds": 1.0, "q1": 1.0, "q3": 1.0}] * 2}


@case(rejects="run.machine.curve[0]: the median lies outside its quartiles")
def machine_curve_quartiles(doc):
    """A point's median lies between its quartiles."""
    doc["run"]["machine"] = {"curve": [{"tokens": 1, "seconds": 2.0, "q1": 1.0, "q3": 1.5}]}


@case(rejects="run.machine.noise must be")
def machine_noise_huge(doc):
    """The noise floor is a ratio within bounds."""
    doc["run"]["machine"] = {"noise": 1e9}


@case(rejects="run.machine.bandwidth must be")
def machine_bandwidth_negative(doc):
    """The roof's bandwidth is not negative."""
    doc["run"]["machine"] = {"bandwidth": -1.0}


@case(rejects="run.dtype must be one of")
def dtype_markup(doc):
    """dtype is a closed set."""
    doc["run"]["dtype"] = SVG


@case(rejects="run.method must be one of")
def method_markup(doc):
    """method is a closed set (a Markdown link)."""
    doc["run"]["method"] = MD_LINK


@case(rejects="run.config.pool must be one of")
def pool_markup(doc):
    """The pool policy is a closed set (a Markdown image)."""
    doc["run"]["config"]["pool"] = MD_IMAGE


@case(rejects="run.device is 42 characters long")
def device_too_long(doc):
    """A device name over its 40 characters."""
    doc["run"]["device"] = IMG


@case(rejects="run.token_text keys must be token ids")
def token_text_key_markup(doc):
    """A token_text key that is markup, not a token id."""
    doc["run"]["token_text"][IMG] = "x"


@case(rejects="run.prompt is not valid Unicode text")
def prompt_lone_surrogate(doc):
    """A lone surrogate (JSON \\ud800) in the prompt: no UTF-8 page or file can carry it."""
    doc["run"]["prompt"] = raw('"a\\ud800b"')


@case(rejects="run.parallel.steps[3].draws: a greedy run makes no draws")
def draws_in_greedy_run(doc):
    """A sampling draw in a greedy run."""
    s = step(doc, 3)
    s["draws"] = [
        {
            "candidate": 0,
            "position": 0,
            "token": s["candidates"][0][0],
            "prob": 0.5,
            "uniform": 0.1,
            "accepted": True,
            "residual_mass": 1.0,
        }
    ]


# -- huge, negative and non-finite numbers -------------------------------------------------------------------------
@case(rejects="run.parallel.steps[3].index must be between 0 and 100000, got a 13288-bit integer")
def index_huge(doc):
    """index = 10**4000 (4001 digits, under Python's 4300-digit limit)."""
    step(doc, 3)["index"] = 10**4000


@case(rejects="not a JSON trace file")
def index_too_many_digits(doc):
    """index with 5000 digits: the JSON reader refuses to convert it."""
    step(doc, 3)["index"] = raw("9" * 5000)


@case(rejects="run.max_new_tokens must be between 1 and 1000000")
def max_new_tokens_negative(doc):
    """max_new_tokens = -10**30."""
    doc["run"]["max_new_tokens"] = -(10**30)


@case(rejects="run.parallel.steps[3].position: is 1000000")
def position_huge(doc):
    """A step at position 10**6."""
    step(doc, 3)["position"] = 10**6


@case(rejects="run.parallel.steps[3].forward_s must be a finite number")
def forward_s_nan(doc):
    """The JSON extension literal NaN as a duration."""
    step(doc, 3)["forward_s"] = float("nan")


@case(rejects="run.parallel.wall_s must be a finite number")
def wall_s_1e999(doc):
    """1e999, which JSON readers turn into infinity."""
    doc["run"]["parallel"]["wall_s"] = raw("1e999")


@case(rejects="run.sampling.temperature must be a finite number")
def temperature_minus_infinity(doc):
    """The literal -Infinity as the temperature."""
    doc["run"]["sampling"]["temperature"] = raw("-Infinity")


@case(rejects="run.max_new_tokens must be a whole number")
def max_new_tokens_nan(doc):
    """NaN where a whole number is expected."""
    doc["run"]["max_new_tokens"] = float("nan")


@case(rejects="run.parallel.steps[3].window must be a whole number, got 7.0")
def window_float(doc):
    """7.0 where a whole number is expected."""
    step(doc, 3)["window"] = 7.0


@case(rejects="run.config.window must be a whole number, got True")
def config_window_bool(doc):
    """true where a number is expected."""
    doc["run"]["config"]["window"] = True


@case(rejects="run.parallel.steps[3].overhead_s must be a finite number, got True")
def overhead_s_bool(doc):
    """true where a float is expected."""
    step(doc, 3)["overhead_s"] = True


@case(rejects="run.config.tree must be true or false, got 1")
def tree_number(doc):
    """1 where true or false is expected."""
    doc["run"]["config"]["tree"] = 1


@case(rejects="run.vocab_size must be a whole number, got '49152'")
def vocab_size_string(doc):
    """A number written as a string."""
    doc["run"]["vocab_size"] = "49152"


@case(rejects="run.parallel.steps[3].accepted[0]: a token id is outside the run's vocabulary")
def accepted_id_over_vocab(doc):
    """An emitted token id equal to vocab_size."""
    set_accepted(doc, 3, [doc["run"]["vocab_size"]])


@case(rejects="run.parallel.steps[3].candidates[0]: a token id is outside the run's vocabulary")
def candidate_id_over_vocab(doc):
    """A candidate token id past the vocabulary (but under 2**31)."""
    step(doc, 3)["candidates"][0][0] = 2**31 - 1


@case(rejects="run.prompt_ids: a token id is outside the vocabulary")
def prompt_id_over_vocab(doc):
    """A prompt token id past the vocabulary."""
    doc["run"]["prompt_ids"][0] = 10**6


@case(rejects="run.parallel.steps[3].input_token must be between 0 and")
def input_token_negative(doc):
    """A negative token id."""
    step(doc, 3)["input_token"] = -1


@case(rejects="run.parallel.steps[5].levels_before[0][0] must be between 0 and")
def level_id_negative(doc):
    """A negative token id inside the window."""
    step(doc, 5)["levels_before"][0][0] = -5


@case(rejects="run.vocab_size must be between 1 and")
def vocab_size_zero(doc):
    """A vocabulary of no tokens."""
    doc["run"]["vocab_size"] = 0


@case(rejects="run.parallel.steps[3].draws[0].token: is not the token its candidate offers", base="sampled")
def draw_token_over_vocab(doc):
    """A sampling draw of a token id past the vocabulary (and not its candidate's token)."""
    step(doc, 3)["draws"][0]["token"] = 10**9


# -- steps that do not fit their run ---------------------------------------------------------------------------------
@case(rejects="run.parallel.steps[3].window must be between 0 and 256, got 2000")
def window_2000(doc):
    """A step's window of 2000 in a W = 7 run (past the engine's limit)."""
    step(doc, 3)["window"] = 2000


@case(rejects="run.parallel.steps[3].window: is 100; the run's W is 7")
def window_wider_than_run(doc):
    """A step's window of 100 in a W = 7 run (within the engine's limit)."""
    step(doc, 3)["window"] = 100


@case(rejects="run.parallel.steps[5].levels_before: 4 levels")
def too_many_levels(doc):
    """Four window levels where N - 1 = 3."""
    levels = step(doc, 5)["levels_before"]
    levels.append(list(levels[0]))


@case(rejects="run.parallel.steps[5].levels_before[0]: has 6 tokens; this step needs 7")
def level_too_short(doc):
    """A window level one token short of W."""
    step(doc, 5)["levels_before"][0].pop()


@case(rejects="run.parallel.steps[3].candidates[0]: has 4 tokens; this step needs 3")
def candidate_wrong_length(doc):
    """A candidate of N tokens where N - 1 are expected."""
    step(doc, 3)["candidates"][0].append(198)


@case(rejects="run.parallel.steps[3].candidates: 10 candidates, guess 7")
def more_candidates_than_g(doc):
    """Ten candidates where G = 7."""
    s = step(doc, 3)
    s["candidates"], s["predictions"], s["match_lengths"] = s["candidates"] * 2, s["predictions"] * 2, [0] * 10


@case(rejects="run.parallel.steps[3].predictions: one row of N tokens per candidate")
def predictions_short_of_candidates(doc):
    """Four prediction rows for five candidates."""
    step(doc, 3)["predictions"].pop()


@case(rejects="run.parallel.steps[3].match_lengths: one length per candidate")
def match_lengths_count(doc):
    """Four match lengths for five candidates."""
    step(doc, 3)["match_lengths"].pop()


@case(rejects="run.parallel.steps[24].match_lengths: are [2, 0]; the candidates and predictions give [3, 0]")
def match_lengths_disagree(doc):
    """A match length that the candidates and predictions do not give."""
    step(doc, 24)["match_lengths"] = [2, 0]


@case(rejects="run.parallel.steps[24].match_lengths: are [3, 0]; the candidates and predictions give [2, 0]")
def prediction_not_matching_candidate(doc):
    """A prediction changed so that it no longer matches its candidate's third token."""
    step(doc, 24)["predictions"][0][2] += 1


@case(rejects="run.parallel.steps[24].winner: is 1; the longest match makes it 0")
def wrong_winner(doc):
    """The shorter match named the winner."""
    step(doc, 24)["winner"] = 1


@case(rejects="run.parallel.steps[24].accepted: is not the winner's matched prefix")
def accepted_not_winner_prefix(doc):
    """Accepted tokens that are not the winning candidate's prefix (the output changed to match)."""
    set_accepted(doc, 24, step(doc, 24)["accepted"][:3] + [5])


@case(rejects="run.parallel.steps[5].accepted: has 5 tokens; a lookahead step emits 1 to 4")
def accepted_more_than_n(doc):
    """Five tokens from one step where N = 4 (the output changed to match)."""
    set_accepted(doc, 5, step(doc, 5)["accepted"] * 5)


@case(rejects="run.parallel.steps[4].position: is 59")
def positions_out_of_order(doc):
    """Two steps' positions swapped."""
    a, b = step(doc, 4), step(doc, 5)
    a["position"], b["position"] = b["position"], a["position"]


@case(rejects="run.parallel.steps[2].index: is 7")
def index_out_of_order(doc):
    """A step numbered out of order."""
    step(doc, 2)["index"] = 7


@case(rejects="run.parallel.steps[6].input_token: is not the last token accepted")
def input_token_not_previous(doc):
    """A step's input token that is not the previous step's last accepted token."""
    step(doc, 6)["input_token"] = step(doc, 4)["accepted"][0]


@case(rejects="run.parallel.tokens: the steps' accepted tokens do not add up")
def tokens_do_not_add_up(doc):
    """An output one token shorter than the steps' accepted tokens."""
    doc["run"]["parallel"]["tokens"].pop()


@case(rejects="run.parallel.steps[10].accepted: does not match the run's output")
def tokens_differ_from_steps(doc):
    """An output token that no step emitted."""
    tokens = doc["run"]["parallel"]["tokens"]
    tokens[10] = tokens[10] + 1


@case(rejects="run.parallel.steps[6].pool_size: replaying the added n-grams does not give the recorded pool")
def pool_size_does_not_replay(doc):
    """A pool size one more than the replay gives."""
    step(doc, 6)["pool_size"] += 1


@case(rejects="run.parallel.steps[5].pool_size: replaying the added n-grams")
def evictions_do_not_replay(doc):
    """A step that says it evicted nothing where the replay evicts three n-grams."""
    step(doc, 5)["ngrams_evicted"] = []


@case(rejects="run.parallel.steps[5].ngrams_added: 32 n-grams")
def too_many_ngrams_added(doc):
    """More n-grams added by one step than its window can give."""
    s = step(doc, 5)
    s["ngrams_added"] = s["ngrams_added"] * 4


@case(rejects="run.parallel.steps[5].kind: is 'jacobi'; expected warmup or lookahead")
def jacobi_step_in_lookahead_run(doc):
    """A Jacobi step in a lookahead run."""
    step(doc, 5)["kind"] = "jacobi"


@case(rejects="run.parallel.steps[3].kind: is 'lookahead'; expected jacobi", base="jacobi")
def lookahead_step_in_jacobi_run(doc):
    """A lookahead step in a Jacobi run."""
    step(doc, 3)["kind"] = "lookahead"


@case(rejects="run.parallel.steps[0].kind: is 'warmup'; expected prefill")
def no_prefill(doc):
    """A run whose first step is not its prefill."""
    step(doc, 0)["kind"] = "warmup"


@case(rejects="run.parallel.steps[1].kind: is 'lookahead' with 1 of 3 levels")
def warmup_called_lookahead(doc):
    """A step with one window level of three called a full lookahead step."""
    step(doc, 1)["kind"] = "lookahead"


@case(rejects="run.baseline.steps[2]: a autoregressive step has no window")
def baseline_step_with_window(doc):
    """An autoregressive step of the baseline that claims a window."""
    step(doc, 2, "baseline")["window"] = 7


@case(rejects="run.parallel.steps[41].predictions: a Jacobi step's prediction row", base="jacobi")
def jacobi_prediction_not_new_level(doc):
    """A Jacobi step whose new level is not its prediction row."""
    step(doc, 41)["new_level"][0] += 1


@case(rejects="run.config: Jacobi decoding runs have N = 2 and G = 0", base="jacobi")
def jacobi_with_candidates(doc):
    """A Jacobi run configured with G = 3."""
    doc["run"]["config"]["guess"] = 3


@case(rejects="run.parallel.steps[3].draws[0]: names a candidate", base="sampled")
def draw_of_missing_candidate(doc):
    """A draw from candidate 5 of 5."""
    step(doc, 3)["draws"][0]["candidate"] = 5


@case(rejects="run.parallel.steps[3].draws: 50 draws for 5 candidates", base="sampled")
def too_many_draws(doc):
    """More draws than the candidates' positions allow."""
    s = step(doc, 3)
    s["draws"] = s["draws"] * 10


@case(rejects="run.parallel.steps[21].accepted: does not start with the winner's accepted drafts", base="sampled")
def sampled_accepted_not_drafts(doc):
    """A sampled step whose accepted tokens are not the winner's accepted drafts."""
    s = step(doc, 21)
    set_accepted(doc, 21, [s["accepted"][0], 5, *s["accepted"][2:]])


@case(rejects="run.max_new_tokens: 55 prompt tokens and 31 new ones do not fit the context of 10")
def context_too_small(doc):
    """A context too small for the prompt and the new tokens."""
    doc["run"]["context"] = 10


@case(rejects="run.sampling: top-p must be above 0")
def top_p_zero(doc):
    """top_p = 0, refused by the settings' own check across fields."""
    doc["run"]["sampling"]["top_p"] = 0.0


@case(rejects="run.parallel.stop_reason: 'length' but fewer tokens")
def length_stop_short(doc):
    """A run stopped for length one token short of its budget."""
    doc["run"]["max_new_tokens"] += 1


@case(rejects="run.prompt_ids: the prompt has no tokens")
def empty_prompt_ids(doc):
    """A prompt of no tokens."""
    doc["run"]["prompt_ids"] = []


@case(rejects="run.parallel.steps: a run has at least its prefill step")
def no_steps(doc):
    """A lane with no steps and no tokens."""
    doc["run"]["parallel"].update(steps=[], tokens=[], stop_reason="eos")


# -- structure -------------------------------------------------------------------------------------------------------
@case(rejects="not a JSON trace file (broken or truncated): maximum recursion depth exceeded")
def deep_nesting(doc):
    """100,000 nested lists as the run."""
    return b'{"schema":"lade-explorer/run","version":2,"run":' + b"[" * 100_000 + b"]" * 100_000 + b"}"


@case(rejects="run.prompt_ids[0] must be a whole number")
def nesting_inside_a_field(doc):
    """900 nested lists where token ids are expected (deep, but within the JSON reader's limit)."""
    doc["run"]["prompt_ids"] = nested(900)


@case(rejects="run.prompt_ids[0] must be a whole number")
def nesting_inside_a_version_1_field(doc):
    """The same in a version-1 file, whose upgrade walks the whole document."""
    doc = as_version_1(doc)
    doc["run"]["prompt_ids"] = nested(900)
    return doc


@case(rejects="not a Lookahead Decoding Explorer trace")
def top_level_list(doc):
    """The document inside a list."""
    return [doc]


@case(rejects="not a Lookahead Decoding Explorer trace")
def top_level_null(doc):
    """null as the whole file."""
    return b"null"


@case(rejects="not a Lookahead Decoding Explorer trace")
def wrong_schema(doc):
    """Another schema's name (markup)."""
    doc["schema"] = IMG


@case(rejects="trace version 6 is not supported")
def version_6(doc):
    """A version from the future."""
    doc["version"] = 6


@case(rejects="trace version '2' is not supported")
def version_string(doc):
    """The version as a string."""
    doc["version"] = "2"


@case(rejects="trace version True is not supported")
def version_true(doc):
    """The version as true (which Python would take for 1)."""
    doc["version"] = True


@case(rejects="trace version a 13288-bit integer is not supported")
def version_huge(doc):
    """The version as 10**4000."""
    doc["version"] = 10**4000


@case(rejects="the file has unknown top-level fields: 'payload'")
def unknown_top_level_field(doc):
    """A field beside schema, version and run."""
    doc["payload"] = SCRIPT


@case(rejects="run has unknown fields: 'onload'")
def unknown_run_field(doc):
    """A field the run does not have."""
    doc["run"]["onload"] = SCRIPT


@case(rejects="run.parallel.steps[3] has unknown fields: '__proto__'")
def unknown_step_field(doc):
    """__proto__ inside a step (prototype pollution in a careless JavaScript reader)."""
    step(doc, 3)["__proto__"] = {"isAdmin": True}


@case(rejects="run.vocab_size is missing")
def missing_field(doc):
    """A required field left out."""
    del doc["run"]["vocab_size"]


@case(rejects="run.parallel.steps[3].accepted is missing")
def missing_step_field(doc):
    """A required field of a step left out."""
    del step(doc, 3)["accepted"]


@case(rejects="run must be an object, got NoneType")
def missing_run(doc):
    """A document with no run."""
    del doc["run"]


@case(rejects="not a JSON trace file (broken or truncated)")
def truncated(doc):
    """The file cut in half."""
    data = dumps(doc)
    return data[: len(data) // 2]


@case(rejects="not a JSON trace file (broken or truncated)")
def empty_file(doc):
    """An empty file."""
    return b""


@case(rejects="not a JSON trace file (broken or truncated)")
def invalid_utf8(doc):
    """Bytes that are not UTF-8 inside the prompt."""
    return dumps(doc).replace(b"Write a Python", b"Write a \xff\xfe Python", 1)


@case(rejects="not a JSON trace file (broken or truncated)")
def raw_control_character(doc):
    """A raw NUL byte inside a JSON string (JSON requires it escaped)."""
    return dumps(doc).replace(b"Write a Python", b"Write a \x00 Python", 1)


@case(rejects="a trace may be at most 8 MiB")
def oversized(doc):
    """One byte over the loader's limit: a valid run padded with spaces (built when asked for, never stored)."""
    data = dumps(doc)
    return data + b" " * (MAX_TRACE_BYTES + 1 - len(data))


@case(accepts=True)
def version_1(doc):
    """A version-1 file (lookahead/greedy lanes, pool_from_prompt, levels_after): upgraded, and it loads."""
    return as_version_1(doc)


@case(rejects="run.prompt_ids must be a list, got int")
def version_1_prompt_ids_number(doc):
    """A version-1 file whose prompt_ids is a number (its upgrade counts the prompt)."""
    doc = as_version_1(doc)
    doc["run"]["prompt_ids"] = 5
    return doc


@case(rejects="run.parallel.steps must be a list, got int")
def version_1_steps_number(doc):
    """A version-1 file whose steps is a number (its upgrade walks the steps)."""
    doc = as_version_1(doc)
    doc["run"]["lookahead"]["steps"] = 5
    return doc


@case(rejects="run.max_new_tokens must be a whole number, got 'many'")
def version_1_max_new_tokens_text(doc):
    """A version-1 file whose max_new_tokens is text (its upgrade derives the context from it)."""
    doc = as_version_1(doc)
    doc["run"]["max_new_tokens"] = "many"
    return doc


@case(accepts=True)
def duplicate_keys(doc):
    """The title twice: markup first, then plain text (JSON readers keep the last)."""
    data = dumps(doc)
    return data.replace(b'"title":', b'"title":' + json.dumps(IMG).encode() + b',"title":', 1)


@case(accepts=True)
def byte_order_mark(doc):
    """A UTF-8 byte-order mark before the document."""
    return b"\xef\xbb\xbf" + dumps(doc)


# -- text that is hard to display (valid: shown as text, never interpreted) ------------------------------------------
@case(accepts=True)
def token_text_bidi(doc):
    """Right-to-left overrides, isolates and zero-width characters in token texts."""
    ids = list(dict.fromkeys(doc["run"]["parallel"]["tokens"]))
    for token, text in zip(ids, (BIDI, ZERO_WIDTH, "\u202e" * 200, "\u200b" * 256)):
        doc["run"]["token_text"][str(token)] = text


@case(accepts=True)
def token_text_invisible(doc):
    """Token texts carrying Unicode tag characters, variation selectors, Hangul fillers, U+180E and other
    default-ignorable characters (one kind per token, INVISIBLE)."""
    ids = list(dict.fromkeys(doc["run"]["parallel"]["tokens"]))
    assert len(ids) >= len(INVISIBLE)
    for token, text in zip(ids, INVISIBLE.values()):
        doc["run"]["token_text"][str(token)] = text


# A title that reads "holiday-exe.png" where a right-to-left override is honoured (it ends in ".exe"), and a model
# name whose override would reverse the device, dtype and date written after it: each must be named and isolated.
BIDI_TITLE = "holiday-\u202egnp.exe"
BIDI_MODEL = "SmolLM2\u202e-135M \u2067x"


@case(accepts=True)
def title_and_model_bidi(doc):
    """A right-to-left override in the title (it shows "exe.png" for ".exe") and in the model's name."""
    doc["run"]["title"] = BIDI_TITLE
    doc["run"]["model"] = BIDI_MODEL


@case(accepts=True)
def title_of_a_gallery_run(doc):
    """A run titled with a gallery run's name: it must not be shown or exported under that run's title or caption."""
    doc["run"]["title"] = BASES["greedy"][0]


@case(accepts=True)
def stop_reason_budget(doc):
    """A run the server stopped at its time limit for one run (stop_reason "budget"), short of max_new_tokens."""
    doc["run"]["max_new_tokens"] += 5
    doc["run"]["parallel"]["stop_reason"] = doc["run"]["baseline"]["stop_reason"] = "budget"


@case(accepts=True)
def prompt_bidi(doc):
    """A right-to-left override and zero-width characters in the prompt."""
    doc["run"]["prompt"] = BIDI + ZERO_WIDTH + doc["run"]["prompt"]


@case(accepts=True)
def token_text_long(doc):
    """Token texts of 256 characters, the limit: one word, a very wide glyph, one of spaces."""
    ids = list(dict.fromkeys(doc["run"]["parallel"]["tokens"]))
    for token, text in zip(ids, ("W" * 256, "\ufdfd" * 256, " " * 256, "\n" * 256)):
        doc["run"]["token_text"][str(token)] = text


@case(rejects="run.token_text[3725] is 257 characters long")
def token_text_too_long(doc):
    """A token text of 257 characters."""
    token = doc["run"]["parallel"]["tokens"][0]
    doc["run"]["token_text"][str(token)] = "W" * 257


@case(accepts=True)
def emoji(doc):
    """Emoji (ZWJ sequences, flags, skin tones) and stacked combining marks in token texts and the prompt."""
    token = doc["run"]["parallel"]["tokens"][0]
    doc["run"]["token_text"][str(token)] = EMOJI
    doc["run"]["prompt"] = EMOJI + doc["run"]["prompt"]


@case(accepts=True)
def control_characters(doc):
    """NUL, bell, an ANSI escape and a carriage return in token texts and the prompt (escaped in JSON)."""
    token = doc["run"]["parallel"]["tokens"][0]
    doc["run"]["token_text"][str(token)] = "\x00\x07\x1b[31mred\x1b[0m\r"
    doc["run"]["prompt"] = "\x1b[2J\x00" + doc["run"]["prompt"]


# -- valid, but past the public app's limits --------------------------------------------------------------------------
@case(accepts=True, limits="run.prompt is 100,000 characters")
def prompt_100k(doc):
    """A prompt of 100,000 characters (the engine's limit; four times the app's)."""
    doc["run"]["prompt"] = ("<b>" * 40_000)[:100_000]


@case(accepts=True, limits="window (W) must be between 1 and 32, got 40")
def window_over_public_limit(doc):
    """A run configured with W = 40 (its steps use 7)."""
    doc["run"]["config"]["window"] = 40


@case(accepts=True, limits="run.max_new_tokens is 600")
def max_new_tokens_over_public_limit(doc):
    """A budget of 600 new tokens, stopped early at end of text."""
    run = doc["run"]
    run["max_new_tokens"] = 600
    run["parallel"]["stop_reason"] = run["baseline"]["stop_reason"] = "eos"


# -- lanes and the speculative methods (version 3) ------------------------------------------------------------------
def lane_step(doc: dict, lane: int, want) -> dict:
    """The first decoding step of run.lanes[lane] for which `want(step)` holds."""
    return next(s for s in doc["run"]["lanes"][lane]["run"]["steps"][1:] if want(s))


def drafted(s: dict) -> bool:
    return bool(s["candidates"])


@case(accepts=True, base="race")
def race_as_recorded(doc):
    """A four-lane race (lookahead with copied candidates, prompt lookup, early exit; the baseline) loads."""


@case(rejects="run.lanes[0].method must be one of", base="race")
def lane_method_markup(doc):
    """A lane's method is a closed set."""
    doc["run"]["lanes"][0]["method"] = IMG


@case(rejects="run.lanes has 3 items; at most 2 are allowed", base="race")
def too_many_lanes(doc):
    """Three lanes beside the main one: a race has four at most."""
    doc["run"]["lanes"].append(doc["run"]["lanes"][0])


@case(rejects="run.lanes[0].draft.tokens must be between 1 and 64, got 1000", base="race")
def draft_tokens_huge(doc):
    """A lane's K past the engine's range."""
    doc["run"]["lanes"][0]["draft"]["tokens"] = 1000


@case(rejects="run.lanes[1].draft.draft_model: a draft-model run names its draft model", base="race")
def draft_lane_without_a_model(doc):
    """A draft-model lane that names no draft model."""
    doc["run"]["lanes"][1]["method"] = "draft"


@case(rejects="expected pld", base="race")
def early_exit_step_in_a_pld_lane(doc):
    """A step of another method's kind inside a prompt lookup lane."""
    lane_step(doc, 0, drafted)["kind"] = "early-exit"


@case(rejects=": prompt lookup copies text, but this draft has a token the text lacks", base="race")
def pld_draft_not_in_the_text(doc):
    """Prompt lookup proposing a token that neither the prompt nor the output holds."""
    s = lane_step(doc, 0, drafted)
    s["candidates"][0][-1] = doc["run"]["vocab_size"] - 1


@case(rejects=".draft_passes: is 2; a pld draft of these tokens takes 0", base="race")
def pld_with_draft_passes(doc):
    """Prompt lookup claiming draft model passes."""
    lane_step(doc, 0, drafted)["draft_passes"] = 2


@case(rejects="; a early-exit draft of these tokens takes", base="race")
def early_exit_passes_do_not_match_the_draft(doc):
    """An early-exit step whose draft passes are not its draft's tokens."""
    s = lane_step(doc, 1, drafted)
    s["draft_passes"] = len(s["candidates"][0]) + 1


@case(rejects="; a draft has 1 to K = 10", base="race")
def pld_draft_longer_than_k(doc):
    """A prompt lookup draft of more than K tokens (predictions to match)."""
    s = lane_step(doc, 0, drafted)
    s["candidates"][0] = (s["candidates"][0] * 12)[:12]
    s["predictions"][0] = (s["predictions"][0] * 13)[:13]


@case(rejects="a pld step has no window and no pool", base="race")
def pld_step_with_a_window(doc):
    """A speculative step with window levels."""
    s = lane_step(doc, 0, drafted)
    s["window"], s["levels_before"] = 2, [[1, 2]]


@case(rejects=".position: is", base="race")
def lane_position_out_of_order(doc):
    """A lane's step at the wrong position."""
    lane_step(doc, 0, drafted)["position"] += 1


@case(rejects=".match_lengths: are", base="race")
def lane_match_lengths_disagree(doc):
    """A lane's step claiming more of its draft matched than its predictions say (the winner unchanged)."""

    def partly(s):
        return s["candidates"] and 1 <= s["match_lengths"][0] < len(s["candidates"][0])

    lanes = doc["run"]["lanes"]
    s = next(t for lane in lanes for t in lane["run"]["steps"][1:] if partly(t))
    s["match_lengths"][0] += 1


@case(rejects="a lookahead step does no drafting", base="race")
def draft_time_in_a_lookahead_step(doc):
    """Drafting time on a lookahead step."""
    step(doc, 3)["draft_s"] = 0.5


@case(rejects="a copied candidate has 1 to 10 tokens of the text", base="race")
def copied_candidate_too_long(doc):
    """Lookahead's copied candidate longer than the run's prompt lookup K."""
    s = next(t for t in doc["run"]["parallel"]["steps"] if t.get("copied"))
    s["candidates"][-1] = (s["candidates"][-1] * 11)[:11]
    s["predictions"][-1] = (s["predictions"][-1] * 12)[:12]


@case(rejects="only a lookahead step of a run with prompt lookup candidates verifies a copied one")
def copied_candidate_without_lookup(doc):
    """A copied candidate in a run recorded without prompt lookup candidates."""
    step(doc, 24)["copied"] = 1


@case(rejects="run.sampling has unknown fields: 'seed'", base="race")
def old_seed_name_in_version_3(doc):
    """Version 3 calls the sampling seed `sample_seed`; the old name is refused there (version 2 upgrades it)."""
    doc["run"]["sampling"]["seed"] = doc["run"]["sampling"].pop("sample_seed")


def write(folder: Path, names=None) -> dict[str, Path]:
    """Each case (or those in `names`) as folder/<name>.json, for a test that uploads files; name -> path."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for c in CASES.values():
        if names is None or c.name in names:
            paths[c.name] = folder / f"{c.name}.json"
            paths[c.name].write_bytes(c.data())
    return paths


# Links the page reads (lade-links.js read): each is bad somewhere, so each gets a notice.
LONG_VALUE = "A" * 100_000
QUERIES = [
    {"run": "![x](http://attacker/p.png)"},
    {"run": "[Log in again](https://evil.example)"},
    {"run": "code-class", "step": "<script>"},
    {"run": "code-class", "view": "<img>"},
    {"run": "code-class", "step": "<script>alert(1)</script>", "view": "<img src=x onerror=alert(1)>"},
    {"lesson": "99"},
    {"lesson": "<svg onload=alert(1)>"},
    {"run": LONG_VALUE, "step": LONG_VALUE, "view": LONG_VALUE},
    {"run": "code-class", "step": LONG_VALUE, "view": LONG_VALUE, "embed": LONG_VALUE},
    {"lesson": LONG_VALUE},
    {"run": "code\x00-class\u202e\n", "step": "1\r\n2", "view": "\x1b[31m"},
    {"run": "code-class", "step": "\u0661\u0662", "view": "![x](http://attacker/p.png)"},
    {"run": "[a](javascript:alert(1))", "view": "`code`"},
]


def main(argv: list[str]) -> None:
    if argv[:1] == ["--bases"]:  # all of them, or the names given after it
        for name, (recorded, keep) in BASES.items():
            if argv[1:] and name not in argv[1:]:
                continue
            doc = cut(json.loads((RUNS / f"{recorded}.json").read_text(encoding="utf-8")), keep)
            (HERE / f"base-{name}.json").write_text(
                json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8"
            )
    elif argv[:1] == ["--write"]:
        write(Path(argv[1]))
    else:
        for c in CASES.values():
            print(f"{c.name:34} {c.base:8} {c.expectation}: {c.about}")


if __name__ == "__main__":
    main(sys.argv[1:])
