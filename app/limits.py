"""The public app's limits: tighter bounds over the engine's own settings, and the checks of a request against them.

The settings and their engine-wide ranges are declared once, in lade_core/config.py; here are only narrower ranges
for a shared CPU server (`PUBLIC`, `PUBLIC_SAMPLING`), checked by the schema's own machinery: `schema.check_form` for
a request's values as a form or a JSON client sends them, `schema.check_bounds` for an opened trace's settings; plus
what only the app has: the prompt's length and text, the upload size, the queue and the sessions. The Run button,
the `/generate` API and opened trace files all pass through these checks; a value that arrives as 3.5, -1, "abc",
None, NaN, 1e30 or true gets a message naming the field, the value and the range (`gr.Error`), never a traceback.
"""

from __future__ import annotations

import re

import gradio as gr

from lade_core import ConfigError, DraftConfig, LookaheadConfig, MethodSpec, RunTrace, Sampling
from lade_core.config import jacobi_config
from lade_core.schema import SchemaError, check_bounds, check_form, form_value, shown
from lade_core.tracefile import MAX_TRACE_BYTES

PUBLIC = {"window": (1, 32), "ngram": (2, 8), "guess": (0, 32)}  # over LookaheadConfig's fields
PUBLIC_SAMPLING = {"temperature": (0.0, 2.0), "top_p": (0.05, 1.0), "sample_seed": (0, 2**31 - 1)}  # over Sampling's
MAX_NEW_TOKENS = (1, 512)
NEW_TOKENS = 64  # what a live run writes unless asked otherwise (the sidebar's slider, the API's default)
MAX_PROMPT_CHARS = 8000


def refused(message: str) -> gr.Error:
    """The error a refusal raises: its message for the visitor, and no traceback in the log (a refusal is no bug)."""
    return gr.Error(message, print_exception=False)


UPLOAD_BYTES = MAX_TRACE_BYTES  # the one limit on a trace file (and on any upload), stated the same way everywhere
UPLOAD_MIB = UPLOAD_BYTES // 2**20
RUNS_ROUTE = "/runs"  # where a trace file is posted (app/routes.py); the guard caps its body at UPLOAD_BYTES
# The engine: one thread runs one run at a time (app/live.py `ENGINE`), so model calls never overlap on the CPU.
ENGINE_SLOTS = 1
# Its queue (app/runqueue.py): the runs waiting for it, one per distinct request (an identical request joins the run
# waiting or running); at most ENGINE_WAITING wait, and one more is refused with the seconds after which a place
# should be free (at least BUSY_RETRY_S). A place whose wait is predicted past LONG_WAIT_S is offered the race in the
# visitor's own browser beside it.
ENGINE_WAITING = 24
BUSY_RETRY_S = 5
LONG_WAIT_S = 30
# The engine's events (Run, /generate, Auto) share one concurrency group. Run's and /generate's jobs only follow the
# runs in that queue, so the group has no Gradio limit and none of them waits in Gradio's queue (whose bound and whose
# "Queue is full" never reach them); at most FOLLOWERS follow at once (one more is refused with a time to try again).
ENGINE_GROUP = "engine"
FOLLOWERS = 150
QUEUE_SIZE = 24  # events waiting in Gradio's queue (Stop's, the settling after it); one more is told "Queue is full"
# Gradio's queue: its bound and its job slots leave room for every follower, so that a class arriving within a second
# is answered by the engine's queue (its own sentence, a time to try again), never by Gradio's "Queue is full! Please
# try again." (a class of 30 on 30 prompts got it twice when only QUEUE_SIZE events could wait for Gradio's loop), and
# a follower never waits for one of Gradio's 40 default slots behind runs that take minutes (`serve.launch`).
GRADIO_SLOTS = 40 + FOLLOWERS  # Gradio's default for its other events, plus the followers
# Sessions whose state the server keeps (the least recently used go first; a closed tab drops its own): each holds
# its components' last values (a few bytes for the stage), and no run.
STATE_SESSIONS = 300
# What one live run may cost: its prompt's tokens after the chat template (the prefill, the KV cache of both lanes).
MAX_PROMPT_TOKENS = 2048
# ... and the race as a whole: every lane (each method and the baseline) prefills the prompt and keeps its own KV cache
# at once, so a request is admitted by lanes x prompt tokens (one method at MAX_PROMPT_TOKENS, three at half of it);
# and a run ends after RUN_BUDGET_S seconds on the engine (stop_reason "budget"), however wide its steps.
MAX_LANE_TOKENS = 2 * MAX_PROMPT_TOKENS
RUN_BUDGET_S = 60.0
# Engine jobs (Run, /generate, Auto) one client may have waiting or running at once (app/guard.py; a client is its
# address, or X-Forwarded-For's when the operator trusts a proxy: app.py --trust-proxy, LADE_TRUST_PROXY).
PER_CLIENT = 2
# ... an IPv6 client counted by its network of this prefix (a home or a server gets a /64: millions of addresses)
IPV6_PREFIX = 64
# Jobs of any kind (the engine's, the light events') one client may have in the queue at once: one visitor cannot
# fill it.
JOBS_PER_CLIENT = 4
# The gate (app/guard.py): any request body but a trace file's at most MAX_BODY_BYTES (a prompt is at most 8,000
# characters); an engine job posted to the REST route whose result nobody opens within JOB_READ_WITHIN_S is taken out
# (or stopped); a client that is no address (an X-Forwarded-For entry is anyone's to write) cut to MAX_CLIENT_CHARS.
MAX_BODY_BYTES = 2**20
JOB_READ_WITHIN_S = 10.0
MAX_CLIENT_CHARS = 64
# A live race whose record nobody pulls for RUN_UNREAD_S once it has the engine stops (app/live.py): a page pulls
# about twice a second while it shows a race, so this is a closed tab, not a slow one. (JOB_READ_WITHIN_S is shorter:
# a job whose stream was never opened at all.)
RUN_UNREAD_S = 60.0
# The run routes (app/routes.py), each client: RUN_READS payload reads per RUN_READS_S seconds (a live run's page
# asks about twice a second), EXPORTS trace files or replays per EXPORTS_S, POSTS trace files posted per POSTS_S,
# ENGINE_FILE_BYTES of the browser engine's files per ENGINE_FILE_S (three whole loads of about 145 MB in 10 min);
# a `since` names at most SINCE_LANES lanes; at most RATE_CLIENTS clients' buckets kept, the oldest go first.
RUN_READS, RUN_READS_S = 120, 10.0
EXPORTS, EXPORTS_S = 6, 60.0
POSTS, POSTS_S = 10, 60.0
ENGINE_FILE_BYTES, ENGINE_FILE_S = 450e6, 600.0
SINCE_LANES = 8
RATE_CLIENTS = 10_000
# The run store (app/store.py): at most STORE_RUNS runs and STORE_BYTES of compressed view data; one client's runs at
# most 1/STORE_SHARE of both (32 runs, 6 MiB).
STORE_RUNS = 256
STORE_BYTES = 48 * 2**20
STORE_SHARE = 8

# The expected wait (app/wait.py), asked outside the queue (it tokenises the prompt): per client at most WAIT_RATE
# asks per WAIT_S seconds (a page asks on opening the sidebar, on each setting's change and every 10 s).
WAIT_RATE, WAIT_S = 30, 10.0
# Work the run routes do one at a time for everyone (app/routes.py `Turns`: reading a posted trace, rendering a
# replay): each client one request waiting or at work (429), at most TURNS_WAITING waiting in all (503), told to try
# again in TURN_RETRY_S; a file a client posts again is answered without reading it (KEPT_DIGESTS remembered), a
# replay is rendered once per run (REPLAY_CACHE_BYTES of them kept).
TURNS_WAITING = 4
TURN_RETRY_S = 10
KEPT_DIGESTS = 4096
REPLAY_CACHE_BYTES = 32 * 2**20
# Request bodies (app/bodies.py), counted before a byte is read: all the bodies arriving or held, at most
# BODY_BYTES_IN_FLIGHT at their stated lengths (503 past it); BODIES_PER_CLIENT still arriving from one client (429);
# a body with no byte for BODY_IDLE_S seconds, or not whole after BODY_S, refused (408).
BODY_BYTES_IN_FLIGHT = 64 * 2**20
BODIES_PER_CLIENT = 2
BODY_IDLE_S = 10.0
BODY_S = 120.0
# The log (app/logs.py): a line is cut at LOG_LINE_CHARS characters; refusal lines, faults and uvicorn's error records
# at most LOG_RECORDS_PER_MINUTE a minute between them (the rest counted); the log as a whole at most
# LOG_BYTES_PER_MINUTE bytes a minute, whatever writes to it.
LOG_LINE_CHARS = 2000
LOG_RECORDS_PER_MINUTE = 60
LOG_BYTES_PER_MINUTE = 128 * 2**10
# A request's address (path and query) at most this many bytes (414 past it: Gradio answered a 64 KB one with a 500
# and a traceback); a forwarded host (X-Forwarded-Host, X-Gradio-Server: Gradio builds its root URL from them) is
# host[:port] of at most FORWARDED_HOST_CHARS characters.
MAX_ADDRESS_BYTES = 8 * 2**10
FORWARDED_HOST_CHARS = 255

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # C0 controls and DEL, except tab, newline, return


def limits_text() -> str:
    W, N, G = PUBLIC["window"], PUBLIC["ngram"], PUBLIC["guess"]
    t, p, s = PUBLIC_SAMPLING["temperature"], PUBLIC_SAMPLING["top_p"], PUBLIC_SAMPLING["sample_seed"]
    return (
        f"Limits of this public demo: W ≤ {W[1]}, N from {N[0]} to {N[1]}, G ≤ {G[1]}, at most {MAX_NEW_TOKENS[1]} "
        f"new tokens, a prompt of at most {MAX_PROMPT_CHARS:,} characters and {MAX_PROMPT_TOKENS:,} tokens (with "
        f"the chat template) that fits the model's context with the new tokens; temperature from 0 (greedy) to "
        f"{t[1]:g}, top-p from {p[0]:g} to {p[1]:g}, a sampling seed "
        f"from 0 to {s[1]:,}; trace files up to {UPLOAD_MIB} MiB. One run at a time: others wait in the engine's "
        f"queue (at most {ENGINE_WAITING}, each shown its place and wait; at most {PER_CLIENT} runs per visitor), "
        f"and a request identical to a run waiting or running joins it. Stop leaves a run (it stops when the last "
        f"one watching it leaves). A run stops "
        f"after {RUN_BUDGET_S:g} s on the engine, and a race reads the prompt once per lane (each method and greedy): "
        f"at most {MAX_LANE_TOKENS:,} prompt tokens in all."
    )


def clean_prompt(prompt) -> str:
    """The prompt, refused with a reason if it is not text, empty, too long, not valid Unicode or has control bytes."""
    if not isinstance(prompt, str):
        raise refused(f"The prompt must be text, got {type(prompt).__name__}.")
    if not prompt.strip():
        raise refused("The prompt is empty: type a prompt or pick an example.")
    if len(prompt) > MAX_PROMPT_CHARS:
        raise refused(f"The prompt is {len(prompt):,} characters; this demo takes at most {MAX_PROMPT_CHARS:,}.")
    try:
        prompt.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise refused(
            f"The prompt is not valid Unicode text (a lone surrogate at character {exc.start + 1})."
        ) from None
    bad = _CONTROL.search(prompt)
    if bad:
        raise refused(
            f"The prompt contains a control character (U+{ord(bad.group()):04X} at character "
            f"{bad.start() + 1}); only newlines and tabs are allowed. Remove it and run again."
        )
    return prompt


def check_request(prompt, window, ngram, guess, max_new_tokens, pool) -> tuple[str, LookaheadConfig, int]:
    """(prompt, config, max new tokens) of a run request within the public limits; gr.Error otherwise. `pool` is
    a pool policy name, or a boolean for the prompt-seeded pool (older API clients send true/false or 0/1)."""
    prompt = clean_prompt(prompt)
    values = check_form(LookaheadConfig, {"window": window, "ngram": ngram, "guess": guess}, PUBLIC, refused)
    max_new = form_value(max_new_tokens, int, "max new tokens", *MAX_NEW_TOKENS, refused)
    if pool is None:
        pool = LookaheadConfig().pool
    elif not isinstance(pool, str) and pool in (True, 1):
        pool = "prompt"
    elif not isinstance(pool, str) and pool in (False, 0):
        pool = "paper"
    try:
        return prompt, LookaheadConfig(**values, pool=pool), max_new
    except (ConfigError, TypeError) as exc:
        raise refused(str(exc)) from None


def check_sampling(temperature, top_p, sample_seed) -> Sampling:
    """The sampling settings of a request within the public limits (a value left out, None, is greedy's default);
    gr.Error otherwise."""
    given = {"temperature": temperature, "top_p": top_p, "sample_seed": sample_seed}
    values = check_form(Sampling, {k: v for k, v in given.items() if v is not None}, PUBLIC_SAMPLING, refused)
    try:
        return Sampling(top_k=0, **values)
    except ConfigError as exc:
        raise refused(str(exc)) from None


def check_context(prompt_tokens: int, context: int, max_new_tokens: int) -> None:
    """The prompt's tokens (after the chat template) must be at most MAX_PROMPT_TOKENS (what one request may cost
    the engine), and with the new tokens fit the model's context; lookahead needs no more (it narrows its window
    near the end)."""
    room = context - max_new_tokens
    if prompt_tokens > room:
        raise refused(
            f"The prompt is {prompt_tokens:,} tokens (with the chat template), but with {max_new_tokens} "
            f"new tokens only {max(room, 0):,} fit in the model's context of {context:,} tokens. Shorten "
            f"the prompt or ask for fewer new tokens."
        )
    if prompt_tokens > MAX_PROMPT_TOKENS:
        raise refused(
            f"The prompt is {prompt_tokens:,} tokens (with the chat template); this demo takes at most "
            f"{MAX_PROMPT_TOKENS:,}. Shorten the prompt."
        )


def check_cost(prompt_tokens: int, methods: int) -> None:
    """A race of `methods` and the baseline on a prompt of `prompt_tokens` (after the chat template) must prefill at
    most MAX_LANE_TOKENS in all: each lane prefills the prompt and holds its KV cache while the others run."""
    lanes = methods + 1
    if lanes * prompt_tokens > MAX_LANE_TOKENS:
        most = MAX_LANE_TOKENS // lanes
        raise refused(
            f"A race of {methods} method{'s' * (methods != 1)} and greedy decoding reads the prompt's "
            f"{prompt_tokens:,} tokens (with the chat template) in each of its {lanes} lanes: "
            f"{lanes * prompt_tokens:,} tokens, and this demo takes at most {MAX_LANE_TOKENS:,} per run. Shorten "
            f"the prompt to {most:,} tokens or race fewer methods."
        )


def budget_text() -> str:
    """What a run stopped by its budget is told."""
    return (
        f"Stopped at this server's limit of {RUN_BUDGET_S:g} s on the engine per run, each lane as far as it got. "
        f"Fewer new tokens, a smaller W, N or G, or fewer methods finish sooner."
    )


def check_trace(run: RunTrace) -> None:
    """A valid trace this app will draw: recorded within its public limits (SchemaError naming the field)."""
    for lane in run.all_lanes:  # the main method's settings, then every raced lane's
        check_bounds(lane.config, PUBLIC, SchemaError)
    if run.max_new_tokens > MAX_NEW_TOKENS[1]:
        raise SchemaError(
            f"run.max_new_tokens is {run.max_new_tokens}; this app draws runs of at most {MAX_NEW_TOKENS[1]} new tokens"
        )
    if len(run.prompt) > MAX_PROMPT_CHARS * 4:
        raise SchemaError(
            f"run.prompt is {len(run.prompt):,} characters; this app draws prompts of at most {MAX_PROMPT_CHARS * 4:,}"
        )


# The methods a visitor may race against the baseline (a draft model is the operator's to load, not offered here).
RACE_METHODS = ("lookahead", "jacobi", "pld", "early-exit")


def check_methods(methods, config: LookaheadConfig) -> list[MethodSpec]:
    """The race a request asks for: 1 to 3 of `RACE_METHODS`, each once, in the order given (the first is drawn step
    by step), with the request's W, N, G for lookahead, its W for Jacobi decoding and the defaults for the drafts;
    gr.Error otherwise. None is lookahead alone."""
    if methods is None:
        methods = ["lookahead"]
    if (
        isinstance(methods, str)
        or not isinstance(methods, (list, tuple))
        or not all(isinstance(m, str) for m in methods)
    ):
        raise refused(f"methods must be a list of names from {', '.join(RACE_METHODS)}, got {shown(methods)}")
    if not 1 <= len(methods) <= 3 or len(set(methods)) != len(methods):
        raise refused(f"choose 1 to 3 different methods to race against greedy decoding, got {len(methods)}")
    unknown = [m for m in methods if m not in RACE_METHODS]
    if unknown:
        raise refused(f"unknown method {shown(unknown[0])}: choose from {', '.join(RACE_METHODS)}")
    lanes = {
        "lookahead": lambda: MethodSpec("lookahead", config),
        "jacobi": lambda: MethodSpec("jacobi", jacobi_config(config.window)),
        "pld": lambda: MethodSpec("pld", draft=DraftConfig()),
        "early-exit": lambda: MethodSpec("early-exit", draft=DraftConfig(schedule="heuristic")),
    }
    return [lanes[m]() for m in methods]
