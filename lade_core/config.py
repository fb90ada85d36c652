"""The settings objects of a decoding run: `LookaheadConfig` (W, N, G and the pool, tree and size options),
`DraftConfig` (what the speculative methods' drafts propose) and `Sampling`.

Both are frozen; each field's type and engine-wide range are declared once, beside it (`schema.spec`), and checked
once, in `__post_init__`, with a message that names the field, the value and the allowed range. The public app
checks tighter ranges over the same fields (`schema.check_bounds`); the trace loader builds both from JSON through
the same declarations.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from . import schema

# Hard limits of the engine itself: beyond these a step's input or the pool stops being sensible on any device.
MAX_WINDOW = 256
MAX_NGRAM = 16
MAX_GUESS = 256
MAX_DRAFT = 64  # tokens a draft may propose per step
SCHEDULES = ("constant", "heuristic")  # how a draft's length K moves from step to step (`DraftConfig.schedule`)

# Where the pool's n-grams come from: the window alone (the paper's plain method), plus the n-grams of the text
# generated so far, plus those of the prompt as well (the paper's "prompt as reference").
POOL_POLICIES = ("paper", "output", "prompt")

# The decoding methods: lookahead decoding, Jacobi decoding, and the speculative ones, where a draft proposes and
# the model verifies in one forward (prompt lookup decoding, an early-exit draft of the model, a draft model).
DRAFT_KINDS = ("pld", "early-exit", "draft")
MODEL_DRAFTS = ("early-exit", "draft")  # the drafts a model writes (a schedule may move their length)
METHODS = ("lookahead", "jacobi", *DRAFT_KINDS)
HYBRID = "lookahead+pld"  # a lookahead lane that also verifies prompt lookup's copies: named as the hybrid it is

# Every way of decoding by name, as written inside a sentence (capitalised at the start of one): the one table the
# app, its captions, the page (it comes with every payload, `derived.names`) and the tests read.
METHOD_NAMES = {
    "lookahead": "lookahead",
    "jacobi": "Jacobi",
    "pld": "prompt lookup",
    "early-exit": "early exit",
    "draft": "draft model",
    HYBRID: "lookahead + prompt lookup",
    "greedy": "greedy",
    "sampling": "sampling",
}


class ConfigError(schema.SchemaError):
    """A setting is out of range or of the wrong type; the message says which and why."""


@dataclass(frozen=True)
class LookaheadConfig:
    """W, N, G of the paper plus the pool and verification options.

    window (W): columns of the Jacobi window, i.e. how far ahead the lookahead branch guesses.
    ngram (N): n-gram size; the window has N-1 levels and a full match accepts N tokens.
    guess (G): at most G candidates are verified per step, and the pool keeps at most G n-grams per key.
        G = 0 turns verification off (one token per step), an ablation.
    pool: where the pool's n-grams come from (`POOL_POLICIES`): "paper" the window only; "output" also the
        n-grams of the text generated so far; "prompt" also the prompt's.
    tree: verify the candidates as a token tree (candidates sharing a prefix share its rows) instead of one row
        of N-1 tokens each: the same tokens accepted, fewer tokens fed (on by default: it measured 3-5% cheaper
        steps on this project's CPU, BENCHMARKS.md "Token tree"; off is the paper's layout).
    adaptive: choose the window and the number of candidates step by step (up to W and G) from the step cost and
        the acceptance seen so far; W and G then bound the sizes. Needs the device's step cost (`StepCost`).
    window_seed: seeds the initial window, drawn from the prompt's tokens.
    lookup: also verify what prompt lookup copies from the text (up to this many tokens, keyed on the text's last
        two tokens, from its first and its most recent occurrence, `drafts.PromptLookup`), as one or two more
        candidates: longer ones than the pool's N-1 where the answer repeats the prompt or itself. 0 (the
        default) is the paper's method; needs the token tree.
    """

    window: int = field(default=7, metadata=schema.spec(1, MAX_WINDOW, label="window (W)"))
    ngram: int = field(default=4, metadata=schema.spec(2, MAX_NGRAM, label="ngram (N)"))
    guess: int = field(default=7, metadata=schema.spec(0, MAX_GUESS, label="guess (G)"))
    pool: str = field(default="prompt", metadata=schema.spec(choices=POOL_POLICIES, label="pool policy"))
    tree: bool = True
    adaptive: bool = False
    window_seed: int = field(default=0, metadata=schema.spec(0, schema.INT_MAX, label="window seed"))
    lookup: int = field(default=0, metadata=schema.spec(0, MAX_DRAFT, label="prompt lookup tokens"))

    def __post_init__(self):
        schema.check(self, ConfigError)
        if self.lookup and not self.tree:
            raise ConfigError("prompt lookup candidates (lookup > 0) are verified in the token tree: set tree")

    @property
    def levels(self) -> int:
        """Rows of the Jacobi window: N-1."""
        return self.ngram - 1

    @property
    def tokens_per_forward(self) -> int:
        """Most tokens one step feeds the model: 1 + (W+G)(N-1), plus the copied candidates'."""
        return 1 + (self.window + self.guess) * (self.ngram - 1) + 2 * self.lookup

    @property
    def most_accepted(self) -> int:
        """Most tokens one step emits: N, or a whole copied candidate and the model's next token."""
        return max(self.ngram, self.lookup + 1)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> LookaheadConfig:
        return schema.build(cls, data, "config", ConfigError)


def jacobi_config(window: int, window_seed: int = 0) -> LookaheadConfig:
    """Jacobi decoding's settings in lookahead's terms: a one-level window of W guesses (N = 2) and no verification
    branch (G = 0); the Jacobi engine accepts from the window itself."""
    return LookaheadConfig(window=window, ngram=2, guess=0, pool="paper", window_seed=window_seed)


@dataclass(frozen=True)
class DraftConfig:
    """What the speculative methods' drafts propose: prompt lookup decoding, an early-exit draft, a draft model.

    tokens (K): the most tokens a draft proposes per step: the continuation prompt lookup copies, or a draft
        model's autoregressive passes (10, as transformers' `prompt_lookup_num_tokens=10`).
    match: prompt lookup matches the last n tokens of the text, n from `match` down to 1, and copies what followed
        their first earlier occurrence (transformers' `max_matching_ngram_size`, default 2).
    exit_layer: the early-exit draft runs the model's first `exit_layer` layers, then its final norm and LM head.
    draft_model: a hub id or folder of a separate draft model with the model's tokenizer ("" for none).
    schedule: "constant" drafts K tokens every step; "heuristic" starts at K and drafts two more after a step that
        kept its whole draft, one fewer (at least 1) otherwise (transformers' opt-in
        `num_assistant_tokens_schedule="heuristic"`), so a draft that is seldom right stops paying for long guesses.
    """

    tokens: int = field(default=10, metadata=schema.spec(1, MAX_DRAFT, label="draft tokens (K)"))
    match: int = field(default=2, metadata=schema.spec(1, MAX_NGRAM, label="matching n-gram size"))
    exit_layer: int = field(default=4, metadata=schema.spec(1, 1024, label="exit layer"))
    draft_model: str = field(default="", metadata=schema.spec(max_len=200, label="draft model"))
    schedule: str = field(default="constant", metadata=schema.spec(choices=SCHEDULES, label="draft length schedule"))

    def __post_init__(self):
        schema.check(self, ConfigError)

    def to_dict(self) -> dict:
        return asdict(self)

    def next_tokens(self, k: int, proposed: int, kept: int) -> int:
        """The draft length after a step that drafted `k`, proposed `proposed` tokens and kept `kept` of them."""
        if self.schedule == "constant":
            return self.tokens
        return min(k + 2, MAX_DRAFT) if proposed and kept == proposed else max(1, k - 1)


@dataclass(frozen=True)
class Sampling:
    """How a token is drawn from the model's next-token distribution.

    temperature = 0 is greedy decoding (argmax), the exact path. Otherwise the logits are divided by the temperature,
    then restricted to the top_k most likely tokens (0 = no limit) and to the smallest set whose probability reaches
    top_p (1.0 = no limit), renormalised, and sampled with a generator seeded by `sample_seed`.
    """

    temperature: float = field(default=0.0, metadata=schema.spec(0.0, 100.0, label="temperature"))
    top_k: int = field(default=0, metadata=schema.spec(0, 10**7, label="top_k"))
    top_p: float = field(default=1.0, metadata=schema.spec(0.0, 1.0, label="top-p"))
    sample_seed: int = field(default=0, metadata=schema.spec(0, schema.INT_MAX, label="sampling seed"))

    def __post_init__(self):
        schema.check(self, ConfigError)
        if self.top_p == 0.0:
            raise ConfigError("top-p must be above 0 (1.0 keeps the whole distribution)")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Sampling:
        return schema.build(cls, data, "sampling", ConfigError)


@dataclass(frozen=True)
class MethodSpec:
    """What one lane runs: `method` (one of `METHODS`), its settings, and this device's step cost (adaptive sizes
    only; not part of a recorded run)."""

    method: str = "lookahead"
    config: LookaheadConfig = field(default_factory=LookaheadConfig)
    draft: DraftConfig = field(default_factory=DraftConfig)
    step_cost: object = None  # a `sizes.StepCost`: this device's forward cost by tokens fed (adaptive sizes)

    def __post_init__(self):
        if self.method not in METHODS:
            raise ConfigError(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if self.method == "draft" and not self.draft.draft_model:
            raise ConfigError("the draft method needs a draft model: pass --draft-model HUB_ID_OR_FOLDER")
        if self.method == "jacobi" and (self.config.ngram, self.config.guess) != (2, 0):
            raise ConfigError("Jacobi decoding's settings are jacobi_config(window): N = 2, G = 0")

    @property
    def tokens_per_forward(self) -> int:
        """Most tokens one step feeds the model."""
        if self.method == "lookahead":
            return self.config.tokens_per_forward
        return 1 + (self.config.window if self.method == "jacobi" else self.draft.tokens)

    @property
    def label(self) -> str:
        """A short description: 'lookahead W=7 N=4 G=7', 'pld K=10 n<=2', 'early-exit 4 layers, K=10', ..."""
        c, d = self.config, self.draft
        return {
            "lookahead": f"lookahead W={c.window} N={c.ngram} G={c.guess}",
            "jacobi": f"jacobi W={c.window}",
            "pld": f"pld K={d.tokens} n<={d.match}",
            "draft": f"draft {d.draft_model}, K={d.tokens}",
            "early-exit": f"early-exit {d.exit_layer} layers, K={d.tokens}",
        }[self.method]
