"""The public app's limits: tighter bounds over the engine's own settings, and the checks of a request against them.

The settings and their engine-wide ranges are declared once, in lade_core/config.py; here are only narrower ranges
for a shared CPU server (`PUBLIC`), checked by the same machinery (`schema.check_bounds`) with the same messages,
plus what only the app has: the prompt's length and text, the upload size, the queue and the sessions. The Run
button, the `/generate` API and opened trace files all pass through these checks; a value that arrives as 3.5, -1,
"abc" or None gets a message (`gr.Error`), never a traceback.
"""

from __future__ import annotations

import math
import re

import gradio as gr

from lade_core import ConfigError, LookaheadConfig, RunTrace, Sampling
from lade_core.load import MAX_TRACE_BYTES
from lade_core.schema import SchemaError, check_bounds, label, shown

PUBLIC = {"window": (1, 32), "ngram": (2, 8), "guess": (0, 32)}  # over LookaheadConfig's fields
PUBLIC_SAMPLING = {"temperature": (0.0, 2.0), "top_p": (0.05, 1.0), "seed": (0, 2**31 - 1)}  # over Sampling's
MAX_NEW_TOKENS = (1, 512)
MAX_PROMPT_CHARS = 8000
UPLOAD_BYTES = MAX_TRACE_BYTES  # the one limit on a trace file (and on any upload), stated the same way everywhere
UPLOAD_MIB = UPLOAD_BYTES // 2**20
# Engine runs (Run button and API) share one concurrency group with one slot: model calls never overlap on the CPU.
ENGINE_GROUP = "engine"
ENGINE_SLOTS = 1
QUEUE_SIZE = 24  # events waiting in the queue, all kinds together; one more is told "Queue is full"
# Sessions whose state the server keeps (the least recently used go first; a closed tab drops its own). A session
# holds its run as compressed JSON, at most SESSION_BYTES: together at most SESSION_BYTES * STATE_SESSIONS.
STATE_SESSIONS = 300
SESSION_BYTES = 2 * 2**20

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # C0 controls and DEL, except tab, newline, return


def limits_text() -> str:
    W, N, G = PUBLIC["window"], PUBLIC["ngram"], PUBLIC["guess"]
    t, p, s = PUBLIC_SAMPLING["temperature"], PUBLIC_SAMPLING["top_p"], PUBLIC_SAMPLING["seed"]
    return (f"Limits of this public demo: W ≤ {W[1]}, N from {N[0]} to {N[1]}, G ≤ {G[1]}, at most {MAX_NEW_TOKENS[1]} "
            f"new tokens, a prompt of at most {MAX_PROMPT_CHARS:,} characters that fits the model's context with the "
            f"new tokens; temperature from 0 (greedy) to {t[1]:g}, top-p from {p[0]:g} to {p[1]:g}, a sampling seed "
            f"from 0 to {s[1]:,}; trace files up to {UPLOAD_MIB} MiB. One run at a time: others wait in a queue "
            f"(their position is shown), and Stop frees the slot.")


def _number(name: str, value, low, high, whole: bool):
    """`value` (from a slider, a JSON client or a form) as a number within [low, high]; gr.Error otherwise."""
    kind = "a whole number" if whole else "a number"
    message = f"{name} must be {kind} from {low} to {high}, got {shown(value)}" if whole else \
        f"{name} must be {kind} from {low:g} to {high:g}, got {shown(value)}"
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise gr.Error(message)
    try:
        number = float(value)
    except (ValueError, OverflowError):
        raise gr.Error(message) from None
    if not math.isfinite(number) or (whole and number != int(number)) or not low <= number <= high:
        raise gr.Error(message)
    return int(number) if whole else number


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
        raise gr.Error(f"The prompt is not valid Unicode text (a lone surrogate at character {exc.start + 1}).") \
            from None
    bad = _CONTROL.search(prompt)
    if bad:
        raise gr.Error(f"The prompt contains a control character (U+{ord(bad.group()):04X} at character "
                       f"{bad.start() + 1}); only newlines and tabs are allowed. Remove it and run again.")
    return prompt


def check_request(prompt, window, ngram, guess, max_new_tokens, pool) -> tuple[str, LookaheadConfig, int]:
    """(prompt, config, max new tokens) of a run request within the public limits; gr.Error otherwise. `pool` is
    a pool policy name, or a boolean for the prompt-seeded pool (older API clients send true/false or 0/1)."""
    prompt = clean_prompt(prompt)
    values = {name: _number(label(LookaheadConfig, name), value, *PUBLIC[name], whole=True)
              for name, value in (("window", window), ("ngram", ngram), ("guess", guess))}
    max_new = _number("max new tokens", max_new_tokens, *MAX_NEW_TOKENS, whole=True)
    if pool is None:
        pool = LookaheadConfig().pool
    elif not isinstance(pool, str) and pool in (True, 1):
        pool = "prompt"
    elif not isinstance(pool, str) and pool in (False, 0):
        pool = "paper"
    try:
        return prompt, LookaheadConfig(**values, pool=pool), max_new
    except (ConfigError, TypeError) as exc:
        raise gr.Error(str(exc)) from None


def check_sampling(temperature, top_p, seed) -> Sampling:
    """The sampling settings of a request within the public limits (None = greedy's default); gr.Error otherwise."""
    bounds = PUBLIC_SAMPLING
    t = 0.0 if temperature is None else _number("temperature", temperature, *bounds["temperature"], whole=False)
    p = 1.0 if top_p is None else _number("top-p", top_p, *PUBLIC_SAMPLING["top_p"], whole=False)
    s = 0 if seed is None else _number("sampling seed", seed, *PUBLIC_SAMPLING["seed"], whole=True)
    try:
        return Sampling(temperature=t, top_k=0, top_p=p, seed=s)
    except ConfigError as exc:
        raise gr.Error(str(exc)) from None


def check_context(prompt_tokens: int, context: int, max_new_tokens: int) -> None:
    """The prompt's tokens (after the chat template) and the new tokens must fit the model's context; lookahead
    needs no more (it narrows its window near the end)."""
    room = context - max_new_tokens
    if prompt_tokens > room:
        raise gr.Error(f"The prompt is {prompt_tokens:,} tokens (with the chat template), but with {max_new_tokens} "
                       f"new tokens only {max(room, 0):,} fit in the model's context of {context:,} tokens. Shorten "
                       f"the prompt or ask for fewer new tokens.")


def check_trace(run: RunTrace) -> None:
    """A valid trace this app will draw: recorded within its public limits (SchemaError naming the field)."""
    check_bounds(run.config, PUBLIC, SchemaError)
    if run.max_new_tokens > MAX_NEW_TOKENS[1]:
        raise SchemaError(f"run.max_new_tokens is {run.max_new_tokens}; this app draws runs of at most "
                          f"{MAX_NEW_TOKENS[1]} new tokens")
    if len(run.prompt) > MAX_PROMPT_CHARS * 4:
        raise SchemaError(f"run.prompt is {len(run.prompt):,} characters; this app draws prompts of at most "
                          f"{MAX_PROMPT_CHARS * 4:,}")
