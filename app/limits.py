"""Limits of the public app and the checks of a run request against them, each failing with a clear `gr.Error`.

The engine itself allows more (lade_core/config.py); a shared CPU server does not. The same checks serve the Run
button and the `generate` API endpoint, so a value that arrives as 3.5, -1, "abc" or None gets a message, never a
traceback. What is left to the engine: the token count of the prompt, known only once the model's tokenizer (with its
chat template) has seen it, is checked here by `check_context` against the context size the caller passes in.
"""

from __future__ import annotations

import math
import re

import gradio as gr

from lade_core import ConfigError, LookaheadConfig, Sampling

WINDOW = (1, 32)
NGRAM = (2, 8)
GUESS = (0, 32)
MAX_NEW_TOKENS = (1, 512)
MAX_PROMPT_CHARS = 8000
# Sampling: temperature 0 is greedy decoding (the exact path); top-p 1 keeps the whole distribution.
TEMPERATURE = (0.0, 2.0)
TOP_P = (0.05, 1.0)
SAMPLE_SEED = (0, 2**31 - 1)
# Engine runs (Run button and API) share one concurrency group with one slot: model calls never overlap on the CPU.
ENGINE_GROUP = "engine"
ENGINE_SLOTS = 1
# Events waiting in the queue, all kinds together; one more is answered "Queue is full".
QUEUE_SIZE = 24
# Open sessions whose gr.State (one RunTrace each, up to ~4 MB at the limits) the server keeps; the least recently used
# go first (Gradio also drops a session's state when its tab closes).
STATE_SESSIONS = 300

_NAMES = {"window (W)": WINDOW, "ngram (N)": NGRAM, "guess (G)": GUESS, "max new tokens": MAX_NEW_TOKENS,
          "sampling seed": SAMPLE_SEED}
# C0 controls and DEL, except tab, newline and carriage return.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def limits_md() -> str:
    """The limits as shown next to the controls."""
    return (f"Limits of this public demo: W ≤ {WINDOW[1]}, N from {NGRAM[0]} to {NGRAM[1]}, G ≤ {GUESS[1]}, "
            f"at most {MAX_NEW_TOKENS[1]} new tokens, a prompt of at most {MAX_PROMPT_CHARS:,} characters that fits "
            f"the model's context together with the new tokens; temperature from 0 (greedy) to {TEMPERATURE[1]:g}, "
            f"top-p from {TOP_P[0]:g} to {TOP_P[1]:g}, a sampling seed from 0 to {SAMPLE_SEED[1]:,}. One run at a "
            f"time: others wait in a queue "
            f"(their position is shown), and Stop frees the slot.")


def whole(name: str, value) -> int:
    """`value` as an int within the public limits of `name`; gr.Error naming the limits otherwise."""
    low, high = _NAMES[name]
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise gr.Error(f"{name} must be a whole number from {low} to {high}, got {_shown(value)}")
    try:
        number = float(value)
    except (ValueError, OverflowError):
        raise gr.Error(f"{name} must be a whole number from {low} to {high}, got {_shown(value)}") from None
    if not math.isfinite(number) or number != int(number) or not low <= number <= high:
        raise gr.Error(f"{name} must be a whole number from {low} to {high}, got {_shown(value)}")
    return int(number)


def _shown(value) -> str:
    if isinstance(value, int) and value.bit_length() > 64:  # repr refuses ints over 4300 digits
        return f"a {value.bit_length()}-bit number"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def clean_prompt(prompt) -> str:
    """The prompt, refused with a reason if it is not text, empty, too long, not valid Unicode or has control bytes."""
    if not isinstance(prompt, str):
        raise gr.Error(f"The prompt must be text, got {type(prompt).__name__}.")
    if not prompt.strip():
        raise gr.Error("The prompt is empty: type a prompt or pick an example.")
    if len(prompt) > MAX_PROMPT_CHARS:
        raise gr.Error(f"The prompt is {len(prompt):,} characters; this demo takes at most {MAX_PROMPT_CHARS:,}.")
    try:
        prompt.encode("utf-8")
    except UnicodeEncodeError as exc:
        where = exc.start + 1
        raise gr.Error(f"The prompt is not valid Unicode text (a lone surrogate at character {where}).") from None
    bad = _CONTROL.search(prompt)
    if bad:
        raise gr.Error(f"The prompt contains a control character (U+{ord(bad.group()):04X} at character "
                       f"{bad.start() + 1}); only newlines and tabs are allowed. Remove it and run again.")
    return prompt


def check_request(prompt, window, ngram, guess, max_new_tokens, pool_from_prompt) -> tuple[str, LookaheadConfig, int]:
    """(prompt, config, max new tokens) of a run request within the public limits; gr.Error otherwise."""
    prompt = clean_prompt(prompt)
    W, N, G = whole("window (W)", window), whole("ngram (N)", ngram), whole("guess (G)", guess)
    max_new = whole("max new tokens", max_new_tokens)
    if pool_from_prompt is None or pool_from_prompt in (0, 1):  # JSON clients may send 0/1 or leave it out
        seed = bool(pool_from_prompt)
    else:
        raise gr.Error(f"pool_from_prompt must be true or false, got {_shown(pool_from_prompt)}")
    try:
        return prompt, LookaheadConfig(window=W, ngram=N, guess=G, pool_from_prompt=seed), max_new
    except ConfigError as exc:
        raise gr.Error(str(exc)) from None


def _number(name: str, value, low: float, high: float, default: float) -> float:
    """`value` as a float in [low, high]; None (a JSON client leaving it out) is `default`; gr.Error otherwise."""
    if value is None:
        return default
    message = f"{name} must be a number from {low:g} to {high:g}, got {_shown(value)}"
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise gr.Error(message)
    try:
        number = float(value)
    except (ValueError, OverflowError):
        raise gr.Error(message) from None
    if not math.isfinite(number) or not low <= number <= high:
        raise gr.Error(message)
    return number


def check_sampling(temperature, top_p, seed) -> Sampling:
    """The sampling settings of a run request within the public limits (None = greedy's default); gr.Error otherwise.

    top_k is left at 0 (no limit): the page offers temperature and top-p only.
    """
    t = _number("temperature", temperature, *TEMPERATURE, default=0.0)
    p = _number("top-p", top_p, *TOP_P, default=1.0)
    s = 0 if seed is None else whole("sampling seed", seed)
    try:
        return Sampling(temperature=t, top_k=0, top_p=p, seed=s)
    except ConfigError as exc:
        raise gr.Error(str(exc)) from None


def check_context(prompt_tokens: int, context: int, config: LookaheadConfig, max_new_tokens: int) -> None:
    """The prompt's tokens (after the chat template), the new tokens and the lookahead's reach must fit the context."""
    reach = config.window + config.ngram  # how far past the output the lookahead window guesses
    room = context - max_new_tokens - reach
    if prompt_tokens > room:
        raise gr.Error(f"The prompt is {prompt_tokens:,} tokens (with the chat template), but with {max_new_tokens} "
                       f"new tokens and {reach} positions of lookahead only {max(room, 0):,} fit in the model's "
                       f"context of {context:,} tokens. Shorten the prompt or ask for fewer new tokens.")
