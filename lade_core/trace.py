"""The contract between the engines and the views: `StepTrace` (one forward pass) and `RunTrace` (a whole run).

Time: a step's seconds are `forward_s + overhead_s + draft_s` (the target model's forward, the engine's own work,
and drafting: a draft model's passes or prompt lookup's search), and a run's `wall_s` is the sum over its steps.

Both are frozen plain data (ints, strings, tuples), so a view can draw a step without torch or the model, and a run
saved as JSON loads back equal. Each field is declared once, here: its type in the annotation and its range in the
`spec` beside it; the JSON, the loader (`tracefile.parse_run`) and the browser's renderer all use these names. Token
text lives once per run in `RunTrace.token_text` (id -> piece) rather than in every step. The attention mask is not
stored: `StepTrace.layout` rebuilds, with the very function that built it for the model, the exact boolean matrix the
model used (`layout.mask()`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from functools import cached_property

from . import schema
from .config import (
    DRAFT_KINDS,
    HYBRID,
    MAX_DRAFT,
    MAX_GUESS,
    MAX_NGRAM,
    MAX_WINDOW,
    METHODS,
    DraftConfig,
    LookaheadConfig,
    Sampling,
)
from .layout import StepLayout

SCHEMA = "lade-explorer/run"
VERSION = 5  # 5: the run's `machine`, a step's CPU layout (`kernels`); 4: Lookahead Parallelism's `ranks`, "budget"
MAX_STEPS = 100_000  # far beyond any run the engines make; bounds what a file can ask a view to draw
MAX_TEXT = 100_000  # characters of a prompt
MAX_LANES = 2  # lanes beside the main one: a race is the baseline and up to three methods
MAX_DEVICES = 8  # ranks of a Lookahead Parallelism run (`parallel.py`)
# A speculative method's steps are of its method's kind (DRAFT_KINDS: "pld", "early-exit", "draft").
STEP_KINDS = ("prefill", "autoregressive", "warmup", "lookahead", "jacobi", *DRAFT_KINDS)
CPU_LAYOUTS = ("stock", "packed", "transposed")  # a forward's linear layers on a CPU, as `kernels.py` builds them
LAYOUTS = ("", *CPU_LAYOUTS)  # what a step records: "" where a trace did not record it
STOP_REASONS = ("eos", "length", "cancelled", "budget", "running")  # budget: a public run out of time; running: so far

Ids = tuple[int, ...]
_TOKENS = schema.spec(max_len=MAX_WINDOW + 1)  # a level, a candidate, an n-gram, a step's tokens
_GRID = schema.spec(max_len=MAX_WINDOW * 4 + MAX_GUESS)  # rows of a window, candidates, pool changes
_SECONDS = schema.spec(0.0, 1e6)
_PROBABILITY = schema.spec(0.0, 1.0 + 1e-6)  # float sums may land a hair over 1


@dataclass(frozen=True)
class Draw:
    """One verified position of a sampling step: the draft token, its probability, the uniform draw, the verdict."""

    candidate: int = field(metadata=schema.spec(0, MAX_GUESS))  # which candidate offered the token
    position: int = field(metadata=schema.spec(0, MAX_WINDOW))  # index within the candidate (0 = right after x)
    token: int = field(metadata=schema.spec(0, schema.TOKEN_MAX))
    prob: float = field(metadata=_PROBABILITY)  # probability of `token` under the (residual) target
    uniform: float = field(metadata=schema.spec(0.0, 1.0))  # the draw: accepted when uniform < prob
    accepted: bool
    residual_mass: float = field(metadata=_PROBABILITY)  # mass left after removing rejected tokens


@dataclass(frozen=True)
class RankStep:
    """One device's part of a Lookahead Parallelism step (`parallel.py`), as it ran: its share (`shares.Share`:
    window columns and candidates), the tokens it fed the model (counted from its input), its forward's seconds and
    the bytes it sent: its own part of the all-gather (4 x the padded width; every other rank receives it, so what
    crosses each link grows with the ranks: a ring all-gather over k ranks passes k-1 such parts through each), and
    the accepted tokens' K/V when it verified them (broadcast to every other rank)."""

    first: int = field(metadata=schema.spec(0, MAX_WINDOW))  # first window column it updated
    columns: int = field(metadata=schema.spec(0, MAX_WINDOW))  # window columns it updated
    candidates: Ids = field(metadata=schema.spec(max_len=MAX_GUESS + 2, items=(0, MAX_GUESS + 1)))  # their indexes
    fed: int = field(metadata=schema.spec(1, 10**6))
    forward_s: float = field(metadata=_SECONDS)
    sent: int = field(metadata=schema.spec(0, 10**12))  # bytes


@dataclass(frozen=True)
class CostPoint:
    """One width of a machine's cost curve: a forward of `tokens` tokens, its median seconds and quartiles."""

    tokens: int = field(metadata=schema.spec(1, 4096))
    seconds: float = field(metadata=_SECONDS)
    q1: float = field(metadata=_SECONDS)
    q3: float = field(metadata=_SECONDS)


@dataclass(frozen=True)
class Machine:
    """Where and how a run was recorded, so that every figure beside it can be of the machine and moment that made
    it: the processor in words (a browser: its backend), the CPUs the process could use and the threads it ran on,
    the linear layers' layouts (`kernel_choice.KernelPlan.label`), the libraries, the load when it started; and,
    measured in the same process, the forward's cost curve the way a race runs it (`measure/costcurve.py`), this
    CPU's measured roof (`measure/cpuroof.py`; 0 where not measured) and the spread of a greedy step within that
    one measurement (the noise rule's floor on this device, `app/speed.py`). Empty in traces that did not record
    it."""

    description: str = field(default="", metadata=schema.spec(max_len=200))
    cores: int = field(default=0, metadata=schema.spec(0, 100_000))
    threads: int = field(default=0, metadata=schema.spec(0, 100_000))
    kernels: str = field(default="", metadata=schema.spec(max_len=80))
    versions: str = field(default="", metadata=schema.spec(max_len=200))
    load: float = field(default=-1.0, metadata=schema.spec(-1.0, 1e6))  # 1-minute load average; -1: unknown
    curve: tuple[CostPoint, ...] = field(default=(), metadata=schema.spec(max_len=64))
    curve_at: str = field(default="", metadata=schema.spec(max_len=40))  # when the curve was measured
    bandwidth: float = field(default=0.0, metadata=schema.spec(0.0, 1e16))  # bytes/s
    flops: float = field(default=0.0, metadata=schema.spec(0.0, 1e20))  # fp32 FLOP/s
    noise: float = field(default=0.0, metadata=schema.spec(0.0, 100.0))  # the curve's greedy step, one half of its
    # samples against the other (1.04: 4%): the noise floor measured on this device in this process; 0: not measured

    @property
    def recorded(self) -> bool:
        return bool(self.description)


@dataclass(frozen=True)
class Verdict:
    """What verification decided: each candidate's accepted prefix length, the winner (-1: none matched), the
    tokens the step emits, and the sampling draws made (none when greedy)."""

    lengths: tuple[int, ...]
    winner: int
    accepted: tuple[int, ...]
    draws: tuple[Draw, ...] = ()

    @property
    def matched(self) -> int:
        """Draft tokens accepted: the winner's matched prefix (0 when nothing matched)."""
        return self.lengths[self.winner] if self.winner >= 0 else 0


@dataclass(frozen=True)
class StepTrace:
    index: int = field(metadata=schema.spec(0, MAX_STEPS))
    kind: str = field(metadata=schema.spec(choices=STEP_KINDS))
    position: int = field(metadata=schema.spec(0, schema.TOKEN_MAX))  # p, the position of the input token x
    input_token: int = field(metadata=schema.spec(0, schema.TOKEN_MAX))  # x, the last accepted token
    accepted: Ids = field(metadata=_TOKENS)  # tokens this step emitted, in order (never past EOS or the budget)
    forward_s: float = field(metadata=_SECONDS)
    overhead_s: float = field(metadata=_SECONDS)
    window: int = field(default=0, metadata=schema.spec(0, MAX_WINDOW))  # W this step fed (0: no window)
    ngram: int = field(default=0, metadata=schema.spec(0, MAX_WINDOW + 1))  # N: a full match emits N tokens
    guess: int = field(default=0, metadata=schema.spec(0, MAX_GUESS))  # G this step looked up at most
    tree: bool = False  # candidates fed as a token tree (shared prefixes once)
    levels_before: tuple[Ids, ...] = field(default=(), metadata=schema.spec(max_len=MAX_NGRAM))  # L x W, oldest first
    new_level: Ids = field(default=(), metadata=_TOKENS)  # the Jacobi update: argmax at the newest level
    candidates: tuple[Ids, ...] = field(default=(), metadata=_GRID)  # g x (N-1), looked up under x
    predictions: tuple[Ids, ...] = field(default=(), metadata=_GRID)  # g x N: model's token after x, then each
    match_lengths: Ids = field(default=(), metadata=schema.spec(max_len=MAX_GUESS, items=(0, MAX_WINDOW)))
    winner: int = field(default=-1, metadata=schema.spec(-1, MAX_GUESS))  # accepted candidate, -1 if none matched
    ngrams_added: tuple[Ids, ...] = field(default=(), metadata=schema.spec(max_len=10**6))
    ngrams_evicted: tuple[Ids, ...] = field(default=(), metadata=schema.spec(max_len=10**6))
    pool_size: int = field(default=0, metadata=schema.spec(0, 10**7))
    draws: tuple[Draw, ...] = field(default=(), metadata=schema.spec(max_len=MAX_GUESS * MAX_NGRAM + 1))
    draft_s: float = field(default=0.0, metadata=_SECONDS)  # drafting: a draft model's passes, prompt lookup's search
    draft_passes: int = field(default=0, metadata=schema.spec(0, MAX_DRAFT))  # forward passes of a draft model
    copied: int = field(default=0, metadata=schema.spec(0, 2))  # lookahead: the last candidates are prompt lookup's
    ranks: tuple[RankStep, ...] = field(default=(), metadata=schema.spec(max_len=MAX_DEVICES))  # parallel.py's devices
    kernels: str = field(default="", metadata=schema.spec(choices=LAYOUTS))  # the CPU layout its forward ran on

    def but(self, **changes) -> StepTrace:
        return replace(self, **changes)

    @property
    def seconds(self) -> float:
        """The step's time: its forward, its engine overhead and its drafting."""
        return self.forward_s + self.overhead_s + self.draft_s

    @cached_property  # frozen, so computed once: the lab and the views ask it of every step many times
    def layout(self) -> StepLayout:
        """Layout of this step's forward; `layout.mask()` is the boolean attention mask the model used. Jacobi
        decoding feeds its guess once, as a one-level window, and verifies that level as its one candidate; a
        speculative step feeds its draft as a token tree with no window (one path for one proposal)."""
        if self.kind == "jacobi":
            return StepLayout.plain(1, self.window, 0, 0)
        if self.kind in DRAFT_KINDS:
            return StepLayout.tree(0, 0, self.candidates)
        return StepLayout.for_candidates(
            len(self.levels_before), self.window, self.candidates, max(self.ngram - 1, 0), self.tree
        )

    @property
    def n_input(self) -> int:
        """Tokens fed to the model in this step (the prompt for a prefill)."""
        return 0 if self.kind == "prefill" else 1 if self.kind == "autoregressive" else self.layout.size

    @property
    def n_accepted_from_candidate(self) -> int:
        """Draft tokens this step kept: the winner's matched prefix, cut where the run ended inside it."""
        matched = self.match_lengths[self.winner] if self.winner >= 0 else 0
        return min(matched, len(self.accepted))


@dataclass(frozen=True)
class MethodRun:
    """One method's output: new tokens, its steps, and the wall time of the whole run."""

    tokens: Ids = field(metadata=schema.spec(max_len=10**6))
    steps: tuple[StepTrace, ...] = field(metadata=schema.spec(max_len=MAX_STEPS))
    wall_s: float = field(metadata=schema.spec(0.0, 1e7))
    stop_reason: str = field(default="length", metadata=schema.spec(choices=STOP_REASONS))

    @property
    def compression(self) -> float:
        return len(self.tokens) / max(len(self.steps), 1)

    @property
    def forward_s(self) -> float:
        return sum(s.forward_s for s in self.steps)

    @property
    def overhead_s(self) -> float:
        return sum(s.overhead_s for s in self.steps)

    @property
    def draft_s(self) -> float:
        return sum(s.draft_s for s in self.steps)


@dataclass(frozen=True)
class Lane:
    """A method raced beside the run's main one: its name, its settings (`config` for lookahead and Jacobi
    decoding, `draft` for the speculative methods; the other one keeps its defaults) and its run."""

    method: str = field(metadata=schema.spec(choices=METHODS))
    config: LookaheadConfig
    draft: DraftConfig
    run: MethodRun

    @property
    def kind(self) -> str:
        """The lane's method, or `HYBRID` for a lookahead lane that also verifies prompt lookup's copies."""
        return HYBRID if self.method == "lookahead" and self.config.lookup else self.method


@dataclass(frozen=True)
class RunTrace:
    """A recorded run: one prompt decoded by a main method (`method`, with `config` or `draft`, in `parallel`: what
    the step views draw), by plain autoregressive decoding (greedy, or plain sampling when the run samples) in
    `baseline`, and by up to `MAX_LANES` more methods raced on the same clock (`lanes`), with what all of them saw."""

    prompt: str = field(metadata=schema.spec(max_len=MAX_TEXT))
    prompt_ids: Ids = field(metadata=schema.spec(max_len=10**6))
    model: str = field(metadata=schema.spec(max_len=200))
    device: str = field(metadata=schema.spec(max_len=40))
    dtype: str = field(metadata=schema.spec(choices=("float32", "bfloat16", "float16")))
    vocab_size: int = field(metadata=schema.spec(1, schema.TOKEN_MAX + 1))
    context: int = field(metadata=schema.spec(1, 10**7))  # the model's context, in positions
    method: str = field(metadata=schema.spec(choices=METHODS))
    config: LookaheadConfig
    sampling: Sampling
    max_new_tokens: int = field(metadata=schema.spec(1, 10**6))
    parallel: MethodRun  # the main method's run
    baseline: MethodRun  # autoregressive decoding: greedy, or plain sampling
    token_text: dict[int, str] = field(default_factory=dict, metadata=schema.spec(max_len=256))
    title: str = field(default="", metadata=schema.spec(max_len=200))
    recorded_at: str = field(default="", metadata=schema.spec(max_len=40))  # ISO date of the recording
    draft: DraftConfig = field(default_factory=DraftConfig)  # the main method's draft settings (speculative ones)
    lanes: tuple[Lane, ...] = field(default=(), metadata=schema.spec(max_len=MAX_LANES))
    machine: Machine = field(default_factory=Machine)  # where and how it ran (version 5)

    @property
    def main_lane(self) -> Lane:
        return Lane(self.method, self.config, self.draft, self.parallel)

    @property
    def all_lanes(self) -> tuple[Lane, ...]:
        """The main lane, then the others (the baseline apart)."""
        return (self.main_lane, *self.lanes)

    def text(self, ids) -> str:
        return "".join(self.token_text.get(int(t), f"<{int(t)}>") for t in ids)

    def to_json(self) -> str:
        doc = {"schema": SCHEMA, "version": VERSION, "run": schema.to_data(self)}
        return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
