"""The two settings objects of a decoding run: `LookaheadConfig` (W, N, G and the pool, tree and size options) and
`Sampling`.

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

# Where the pool's n-grams come from: the window alone (the paper's plain method), plus the n-grams of the text
# generated so far, plus those of the prompt as well (the paper's "prompt as reference").
POOL_POLICIES = ("paper", "output", "prompt")


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
    """

    window: int = field(default=7, metadata=schema.spec(1, MAX_WINDOW, label="window (W)"))
    ngram: int = field(default=4, metadata=schema.spec(2, MAX_NGRAM, label="ngram (N)"))
    guess: int = field(default=7, metadata=schema.spec(0, MAX_GUESS, label="guess (G)"))
    pool: str = field(default="prompt", metadata=schema.spec(choices=POOL_POLICIES, label="pool policy"))
    tree: bool = True
    adaptive: bool = False
    window_seed: int = field(default=0, metadata=schema.spec(0, schema.INT_MAX, label="window seed"))

    def __post_init__(self):
        schema.check(self, ConfigError)

    @property
    def levels(self) -> int:
        """Rows of the Jacobi window: N-1."""
        return self.ngram - 1

    @property
    def tokens_per_forward(self) -> int:
        """Most tokens one step feeds the model: 1 + (W+G)(N-1)."""
        return 1 + (self.window + self.guess) * (self.ngram - 1)

    @property
    def reach(self) -> int:
        """How many positions past the last committed token a step may write to the KV cache or guess: the newest
        window level guesses up to position p + N-1 + W."""
        return self.window + self.ngram - 1

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "LookaheadConfig":
        return schema.build(cls, data, "config", ConfigError)


def jacobi_config(window: int, window_seed: int = 0) -> LookaheadConfig:
    """Jacobi decoding's settings in lookahead's terms: a one-level window of W guesses (N = 2) and no verification
    branch (G = 0); the Jacobi engine accepts from the window itself."""
    return LookaheadConfig(window=window, ngram=2, guess=0, pool="paper", window_seed=window_seed)


@dataclass(frozen=True)
class Sampling:
    """How a token is drawn from the model's next-token distribution.

    temperature = 0 is greedy decoding (argmax), the exact path. Otherwise the logits are divided by the temperature,
    then restricted to the top_k most likely tokens (0 = no limit) and to the smallest set whose probability reaches
    top_p (1.0 = no limit), renormalised, and sampled with a generator seeded by `seed`.
    """

    temperature: float = field(default=0.0, metadata=schema.spec(0.0, 100.0, label="temperature"))
    top_k: int = field(default=0, metadata=schema.spec(0, 10**7, label="top_k"))
    top_p: float = field(default=1.0, metadata=schema.spec(0.0, 1.0, label="top_p"))
    seed: int = field(default=0, metadata=schema.spec(0, schema.INT_MAX, label="sampling seed"))

    def __post_init__(self):
        schema.check(self, ConfigError)
        if self.top_p == 0.0:
            raise ConfigError("top_p must be above 0 (1.0 keeps the whole distribution)")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Sampling":
        return schema.build(cls, data, "sampling", ConfigError)
