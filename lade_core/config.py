"""The two settings objects of a decoding run: `LookaheadConfig` (W, N, G and the pool options) and `Sampling`.

Both are frozen and validated once, in `__post_init__`, with a message that names the field, the value and the
allowed range. Everything else in the package takes them as they are. Public-app limits (smaller ranges for a
shared server) live in the app, not here.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

# Hard limits of the engine itself: beyond these a step's input or the pool stops being sensible on any device.
MAX_WINDOW = 256
MAX_NGRAM = 16
MAX_GUESS = 256


class ConfigError(ValueError):
    """A setting is out of range or of the wrong type; the message says which and why."""


def _shown(value) -> str:
    """The value for a message; huge integers by size, since Python refuses to print those over 4300 digits."""
    if isinstance(value, int) and value.bit_length() > 64:
        return f"a {value.bit_length()}-bit integer"
    return repr(value)


def _check_int(name: str, value, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{name} must be a whole number, got {value!r}")
    if not low <= value <= high:
        raise ConfigError(f"{name} must be between {low} and {high}, got {_shown(value)}")


def _check_float(name: str, value, low: float, high: float) -> None:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not number or isinstance(value, float) and not math.isfinite(value):  # isfinite overflows on a huge int
        raise ConfigError(f"{name} must be a finite number, got {value!r}")
    if not low <= value <= high:
        raise ConfigError(f"{name} must be between {low} and {high}, got {_shown(value)}")


def _from_mapping(cls, data, what: str):
    """Build `cls` from a JSON mapping, refusing anything but a mapping of its own field names."""
    if not isinstance(data, dict):
        raise ConfigError(f"{what} settings must be a mapping, got {type(data).__name__}")
    unknown = set(data) - set(cls.__dataclass_fields__)
    if unknown:
        raise ConfigError(f"unknown {what} fields: {sorted(map(str, unknown))}")
    return cls(**data)


@dataclass(frozen=True)
class LookaheadConfig:
    """W, N, G of the paper plus the pool options.

    window (W): columns of the Jacobi window, i.e. how far ahead the lookahead branch guesses.
    ngram (N): n-gram size; the window has N-1 levels and a full match accepts N tokens.
    guess (G): at most G candidates are verified per step, and the pool keeps at most G n-grams per key.
        G = 0 turns verification off (one token per step), an ablation.
    pool_from_prompt: seed the pool with the prompt's n-grams (the paper's "prompt as reference") and keep adding
        the n-grams of the accepted output, as the reference implementation does with this option. Off by default,
        so that the plain method, with a pool fed by the window alone, can be shown.
    seed: seeds the initial window, drawn from the prompt's tokens.
    """

    window: int = 7
    ngram: int = 4
    guess: int = 7
    pool_from_prompt: bool = False
    seed: int = 0

    def __post_init__(self):
        _check_int("window (W)", self.window, 1, MAX_WINDOW)
        _check_int("ngram (N)", self.ngram, 2, MAX_NGRAM)
        _check_int("guess (G)", self.guess, 0, MAX_GUESS)
        if not isinstance(self.pool_from_prompt, bool):
            raise ConfigError(f"pool_from_prompt must be true or false, got {self.pool_from_prompt!r}")
        _check_int("seed", self.seed, 0, 2**63 - 1)

    @property
    def levels(self) -> int:
        """Rows of the Jacobi window: N-1."""
        return self.ngram - 1

    @property
    def tokens_per_forward(self) -> int:
        """Most tokens one step feeds the model: 1 + (W+G)(N-1)."""
        return 1 + (self.window + self.guess) * (self.ngram - 1)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "LookaheadConfig":
        return _from_mapping(cls, data, "config")


@dataclass(frozen=True)
class Sampling:
    """How a token is drawn from the model's next-token distribution.

    temperature = 0 is greedy decoding (argmax), the exact path. Otherwise the logits are divided by the temperature,
    then restricted to the top_k most likely tokens (0 = no limit) and to the smallest set whose probability reaches
    top_p (1.0 = no limit), renormalised, and sampled with a generator seeded by `seed`.
    """

    temperature: float = 0.0
    top_k: int = 0
    top_p: float = 1.0
    seed: int = 0

    def __post_init__(self):
        _check_float("temperature", self.temperature, 0.0, 100.0)
        _check_int("top_k", self.top_k, 0, 10**7)
        _check_float("top_p", self.top_p, 0.0, 1.0)
        if self.top_p == 0.0:
            raise ConfigError("top_p must be above 0 (1.0 keeps the whole distribution)")
        _check_int("seed", self.seed, 0, 2**63 - 1)

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Sampling":
        return _from_mapping(cls, data, "sampling")
