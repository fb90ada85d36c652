"""The contract between the engines and the views: `StepTrace` (one forward pass) and `RunTrace` (a whole run).

Both are frozen plain data (ints, strings, tuples), so a view can draw a step without torch or the model, and a run
saved as JSON loads back equal. Token text lives once per run in `RunTrace.token_text` (id -> piece) rather than in
every step. The attention mask is not stored: `StepTrace.layout` rebuilds, with the very function that built it for
the model, the exact boolean matrix the model used (`layout.mask()`).

Loading is strict: wrong schema, wrong version, wrong types or sizes, and truncated files raise `TraceError` with a
readable message. Nothing is ever executed or unpickled.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, field, fields

from .config import ConfigError, LookaheadConfig, Sampling
from .layout import StepLayout

SCHEMA = "lade-explorer/run"
VERSION = 1
MAX_TRACE_BYTES = 20 * 1024 * 1024

Ids = tuple[int, ...]


@dataclass(frozen=True)
class Draw:
    """One verified position of a sampling step: the draft token, its probability, the uniform draw, the verdict."""

    candidate: int  # which candidate offered the token (index into StepTrace.candidates)
    position: int  # index within the candidate (0 = right after x)
    token: int
    prob: float  # probability of `token` under the (residual) target distribution at this point
    uniform: float
    accepted: bool
    residual_mass: float  # probability mass left after removing rejected tokens (1.0 before any rejection)


@dataclass(frozen=True)
class StepTrace:
    index: int
    kind: str  # "prefill", "greedy", "warmup" (window still filling) or "lookahead"
    position: int  # p, the position of the input token x
    input_token: int  # x, the last accepted token
    accepted: Ids  # tokens this step emitted, in order (never past EOS or max_new_tokens)
    forward_s: float
    overhead_s: float
    window: int = 0
    ngram: int = 0
    levels_before: tuple[Ids, ...] = ()  # L x W window before the step (oldest level first)
    levels_after: tuple[Ids, ...] = ()
    new_level: Ids = ()  # the Jacobi update: argmax at the newest level, W tokens
    candidates: tuple[Ids, ...] = ()  # g x (N-1), looked up under input_token
    predictions: tuple[Ids, ...] = ()  # g x N: the model's token at each candidate position, then the one after
    match_lengths: Ids = ()
    winner: int = -1  # index of the accepted candidate, -1 if none matched
    ngrams_added: tuple[Ids, ...] = ()
    ngrams_evicted: tuple[Ids, ...] = ()
    pool_size: int = 0
    draws: tuple[Draw, ...] = ()  # sampling only

    @property
    def layout(self) -> StepLayout:
        """Layout of this step's forward; `layout.mask()` is the boolean attention mask the model used."""
        return StepLayout(len(self.levels_before), self.window, len(self.candidates), max(self.ngram - 1, 0))

    @property
    def n_input(self) -> int:
        """Tokens fed to the model in this step (the prompt for a prefill)."""
        return 0 if self.kind == "prefill" else self.layout.size

    @property
    def n_accepted_from_candidate(self) -> int:
        return self.match_lengths[self.winner] if self.winner >= 0 else 0


@dataclass(frozen=True)
class MethodRun:
    """One method's output: new tokens, its steps, and the wall time of the whole run."""

    tokens: Ids
    steps: tuple[StepTrace, ...]
    wall_s: float
    stop_reason: str = "length"  # "eos", "length" or "cancelled"

    @property
    def compression(self) -> float:
        return len(self.tokens) / max(len(self.steps), 1)

    @property
    def forward_s(self) -> float:
        return sum(s.forward_s for s in self.steps)

    @property
    def overhead_s(self) -> float:
        return sum(s.overhead_s for s in self.steps)


@dataclass(frozen=True)
class RunTrace:
    prompt: str
    prompt_ids: Ids
    model: str
    device: str
    dtype: str
    config: LookaheadConfig
    sampling: Sampling
    max_new_tokens: int
    lookahead: MethodRun
    greedy: MethodRun
    token_text: dict[int, str] = field(default_factory=dict)
    title: str = ""

    def text(self, ids) -> str:
        return "".join(self.token_text.get(int(t), f"<{int(t)}>") for t in ids)

    def to_json(self) -> str:
        body = asdict(self)
        body["token_text"] = {str(k): v for k, v in self.token_text.items()}
        return json.dumps({"schema": SCHEMA, "version": VERSION, "run": body}, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> "RunTrace":
        return parse_run(text)


class TraceError(ValueError):
    """A trace file is not a valid run of this schema and version; the message says what is wrong."""


def _ids(value, what: str) -> Ids:
    if not isinstance(value, list) or not all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in value):
        raise TraceError(f"{what} must be a list of non-negative token ids")
    return tuple(value)


def _grid(value, what: str) -> tuple[Ids, ...]:
    if not isinstance(value, list):
        raise TraceError(f"{what} must be a list of token lists")
    return tuple(_ids(row, what) for row in value)


def _typed(value, kind, what: str):
    ok = isinstance(value, kind) and not (kind is not bool and isinstance(value, bool))
    if kind is float:  # finite, and a whole number small enough for float()
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) <= sys.float_info.max
    if not ok:
        raise TraceError(f"{what} must be of type {kind.__name__}, got {type(value).__name__}")
    return float(value) if kind is float else value


_STEP_PARSERS = {
    "index": lambda v: _typed(v, int, "step index"),
    "kind": lambda v: _typed(v, str, "step kind"),
    "position": lambda v: _typed(v, int, "step position"),
    "input_token": lambda v: _typed(v, int, "input token"),
    "accepted": lambda v: _ids(v, "accepted"),
    "forward_s": lambda v: _typed(v, float, "forward_s"),
    "overhead_s": lambda v: _typed(v, float, "overhead_s"),
    "window": lambda v: _typed(v, int, "window"),
    "ngram": lambda v: _typed(v, int, "ngram"),
    "levels_before": lambda v: _grid(v, "levels_before"),
    "levels_after": lambda v: _grid(v, "levels_after"),
    "new_level": lambda v: _ids(v, "new_level"),
    "candidates": lambda v: _grid(v, "candidates"),
    "predictions": lambda v: _grid(v, "predictions"),
    "match_lengths": lambda v: _ids(v, "match_lengths"),
    "winner": lambda v: _typed(v, int, "winner"),
    "ngrams_added": lambda v: _grid(v, "ngrams_added"),
    "ngrams_evicted": lambda v: _grid(v, "ngrams_evicted"),
    "pool_size": lambda v: _typed(v, int, "pool_size"),
    "draws": lambda v: tuple(_draw(d) for d in _typed(v, list, "draws")),
}


def _draw(d) -> Draw:
    if not isinstance(d, dict) or set(d) != {f.name for f in fields(Draw)}:
        raise TraceError("each draw must have exactly the fields " + ", ".join(f.name for f in fields(Draw)))
    kinds = {f.name: f.type for f in fields(Draw)}
    return Draw(**{k: _typed(v, {"int": int, "float": float, "bool": bool}[kinds[k]], f"draw {k}") for k, v in d.items()})


def _step(d) -> StepTrace:
    if not isinstance(d, dict):
        raise TraceError("each step must be an object")
    unknown = set(d) - set(_STEP_PARSERS)
    if unknown:
        raise TraceError(f"unknown step fields: {sorted(unknown)[:5]}")
    try:
        step = StepTrace(**{k: _STEP_PARSERS[k](v) for k, v in d.items()})
    except TypeError as exc:  # a required field is missing
        raise TraceError(f"a step is missing fields: {exc}") from None
    if step.kind not in ("prefill", "greedy", "warmup", "lookahead"):
        raise TraceError(f"unknown step kind {step.kind!r}")
    if any(len(row) != step.window for row in step.levels_before + step.levels_after):
        raise TraceError(f"step {step.index}: window levels must have W={step.window} tokens")
    g = len(step.candidates)
    if any(len(c) != step.ngram - 1 for c in step.candidates) or len(step.match_lengths) != g:
        raise TraceError(f"step {step.index}: candidates must have N-1 tokens and one match length each")
    if len(step.predictions) != g or any(len(p) != step.ngram for p in step.predictions):
        raise TraceError(f"step {step.index}: predictions must have one row of N tokens per candidate")
    if not -1 <= step.winner < g:
        raise TraceError(f"step {step.index}: winner must be -1 or the index of a candidate, got {step.winner}")
    return step


def _method(d, what: str) -> MethodRun:
    if not isinstance(d, dict) or not {"tokens", "steps", "wall_s"} <= set(d):
        raise TraceError(f"{what} must have tokens, steps and wall_s")
    steps = tuple(_step(s) for s in _typed(d["steps"], list, f"{what} steps"))
    tokens = _ids(d["tokens"], f"{what} tokens")
    if sum(len(s.accepted) for s in steps) != len(tokens):
        raise TraceError(f"{what}: the steps' accepted tokens do not add up to its output")
    return MethodRun(tokens, steps, _typed(d["wall_s"], float, "wall_s"), _typed(d.get("stop_reason", "length"), str, "stop_reason"))


def _token_key(key: str) -> bool:
    """A token_text key: a token id in plain digits, short enough for int() (which also takes '٣' but not '²')."""
    return key.isascii() and key.isdigit() and len(key) < 20


def parse_run(text: str | bytes, max_bytes: int = MAX_TRACE_BYTES) -> RunTrace:
    """Validate and load a run saved by `RunTrace.to_json`. Raises `TraceError` on anything else."""
    if len(text) > max_bytes:
        raise TraceError(f"trace file is {len(text) / 1e6:.1f} MB; the limit is {max_bytes / 1e6:.0f} MB")
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:  # bad JSON or UTF-8, over-long numbers, too deeply nested
        raise TraceError(f"not a JSON trace file (broken or truncated): {exc}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise TraceError(f"not a Lookahead Decoding Explorer trace (expected schema {SCHEMA!r})")
    if type(doc.get("version")) is not int or doc["version"] != VERSION:
        raise TraceError(f"trace version {doc.get('version')!r} is not supported; this app reads version {VERSION}")
    run = doc.get("run")
    needed = {"prompt", "prompt_ids", "model", "device", "dtype", "config", "sampling", "max_new_tokens", "lookahead", "greedy"}
    if not isinstance(run, dict) or not needed <= set(run):
        raise TraceError(f"trace run must have the fields {sorted(needed)}")
    try:
        config = LookaheadConfig.from_dict(run["config"])
        sampling = Sampling.from_dict(run["sampling"])
    except (ConfigError, TypeError) as exc:
        raise TraceError(f"trace settings are invalid: {exc}") from None
    table = run.get("token_text", {})
    if not isinstance(table, dict) or not all(isinstance(v, str) and _token_key(k) for k, v in table.items()):
        raise TraceError("token_text must map token ids to strings")
    return RunTrace(
        prompt=_typed(run["prompt"], str, "prompt"),
        prompt_ids=_ids(run["prompt_ids"], "prompt_ids"),
        model=_typed(run["model"], str, "model"),
        device=_typed(run["device"], str, "device"),
        dtype=_typed(run["dtype"], str, "dtype"),
        config=config,
        sampling=sampling,
        max_new_tokens=_typed(run["max_new_tokens"], int, "max_new_tokens"),
        lookahead=_method(run["lookahead"], "lookahead"),
        greedy=_method(run["greedy"], "greedy"),
        token_text={int(k): v for k, v in table.items()},
        title=_typed(run.get("title", ""), str, "title"),
    )
