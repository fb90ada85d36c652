"""Loading a saved run: `parse_run(text)` validates the whole file before anything can draw it.

Two passes, both linear in the file's size (so a file of S bytes costs O(S) time and memory to load, whatever it
claims): `schema.build` checks every field's type and range as declared in `trace.py`; `check_run` then checks every
step against its run: the prompt and the step order fix each step's position and input token, the window and the
candidates must have the run's W, N and G, every token must be in the run's vocabulary, the accepted tokens must add
up to the output, greedy steps must accept exactly what their own predictions say, and the pool, replayed from the
n-grams the steps added, must have the sizes and evictions the steps recorded. A bad file raises `TraceError` with
one line naming the step and the field. Nothing in a file is ever executed or unpickled. Version 1 files (before
the parallel/baseline names) are upgraded on the way in.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np

from . import schema
from .pool import NGramPool
from .trace import SCHEMA, VERSION, MethodRun, RunTrace, StepTrace

MAX_TRACE_BYTES = 8 * 2**20  # 8 MiB, the one limit on a trace file (the app's uploads too): a 512-token run at
# W = G = 32, N = 8 takes about 3 MiB
_CONTEXT_MAX = next(f.metadata["high"] for f in dataclasses.fields(RunTrace) if f.name == "context")


class TraceError(schema.SchemaError):
    """A trace file is not a valid run of this schema and version; the message says what is wrong, and where."""


def parse_run(text: str | bytes, max_bytes: int = MAX_TRACE_BYTES) -> RunTrace:
    """Validate and load a run saved by `RunTrace.to_json`. Raises `TraceError` on anything else."""
    if len(text) > max_bytes:
        raise TraceError(f"the file is {len(text) / 2**20:.1f} MiB; a trace may be at most {max_bytes / 2**20:.0f} MiB")
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:  # bad JSON or UTF-8, over-long numbers, too deeply nested
        raise TraceError(f"not a JSON trace file (broken or truncated): {str(exc)[:120]}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise TraceError(f"not a Lookahead Decoding Explorer trace (expected schema {SCHEMA!r})")
    version = doc.get("version")
    if type(version) is not int or version not in (1, VERSION):
        raise TraceError(f"trace version {schema.shown(version)} is not supported; this app reads versions 1 and "
                         f"{VERSION}")
    unknown = [k for k in doc if k not in ("schema", "version", "run")]
    if unknown:
        raise TraceError(f"the file has unknown top-level fields: {', '.join(schema.shown(k) for k in unknown[:5])}")
    body = doc.get("run")
    if version == 1:
        body = upgrade_v1(body)
    try:
        run = schema.build(RunTrace, body, "run", TraceError)
    except schema.SchemaError as exc:  # a settings object's own check
        raise TraceError(str(exc)) from None
    check_run(run)
    return run


def upgrade_v1(body) -> dict:
    """A version-1 run as version 2: lanes renamed, the pool flag as a policy, `levels_after` dropped."""
    if not isinstance(body, dict) or not isinstance(body.get("config"), dict):
        raise TraceError("run must be an object with a config")
    body = dict(body)
    config = dict(body["config"])
    config["pool"] = "prompt" if config.pop("pool_from_prompt", False) is True else "paper"
    config["window_seed"] = config.pop("seed", 0)
    config.setdefault("tree", False)  # version 1 verified candidates plainly
    body["config"] = config
    body["method"] = "lookahead"
    body["parallel"], body["baseline"] = body.pop("lookahead", None), body.pop("greedy", None)
    for lane in (body["parallel"], body["baseline"]):
        steps = lane.get("steps") if isinstance(lane, dict) else None
        for step in steps if isinstance(steps, list) else []:
            if isinstance(step, dict):
                step.pop("levels_after", None)
                if step.get("kind") == "greedy":
                    step["kind"] = "autoregressive"
                elif step.get("kind") in ("lookahead", "warmup"):
                    step["guess"] = config.get("guess", 0)
    body.setdefault("vocab_size", _largest_id(body) + 1)
    window, ngram = config.get("window", 0), config.get("ngram", 0)
    # Only whole numbers count, and the sum is kept in range: a bad field is then named by its own check, not here.
    prompt_ids, sizes = body.get("prompt_ids"), (body.get("max_new_tokens"), window, ngram)
    context = (len(prompt_ids) if isinstance(prompt_ids, list) else 0) + sum(v for v in sizes if type(v) is int)
    body.setdefault("context", min(max(context, 1), _CONTEXT_MAX))
    return body


def _largest_id(data) -> int:
    """The largest token id anywhere in a version-1 run (those files did not record the vocabulary). A loop over a
    stack, not recursion: JSON nested a few hundred deep would otherwise end in RecursionError, not a TraceError."""
    largest, stack = 0, [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            keys = [int(k) for k in item if isinstance(k, str) and k.isascii() and k.isdigit() and len(k) < 12]
            largest = max([largest, *keys])
            stack.extend(v for k, v in item.items() if k not in ("wall_s", "forward_s"))
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, int) and not isinstance(item, bool) and 0 <= item < 2**31:
            largest = max(largest, item)
    return largest


def _fail(where: str, why: str):
    raise TraceError(f"{where}: {why}")


def check_run(run: RunTrace) -> None:
    """Every step consistent with its run (see the module docstring); TraceError on the first that is not."""
    vocab = run.vocab_size
    if not run.prompt_ids:
        _fail("run.prompt_ids", "the prompt has no tokens")
    if any(t >= vocab for t in run.prompt_ids):
        _fail("run.prompt_ids", f"a token id is outside the vocabulary of {vocab}")
    if len(run.prompt_ids) + run.max_new_tokens > run.context:
        _fail("run.max_new_tokens", f"{len(run.prompt_ids)} prompt tokens and {run.max_new_tokens} new ones do not "
                                    f"fit the context of {run.context}")
    if run.method == "jacobi" and (run.config.ngram, run.config.guess) != (2, 0):
        _fail("run.config", "Jacobi decoding runs have N = 2 and G = 0 (a one-level window, no candidates)")
    kinds = {"lookahead": ("warmup", "lookahead"), "jacobi": ("jacobi",)}[run.method]
    _check_method(run, run.parallel, "parallel", kinds)
    _check_method(run, run.baseline, "baseline", ("autoregressive",))
    _check_pool(run)


def _check_method(run: RunTrace, method: MethodRun, lane: str, kinds: tuple[str, ...]) -> None:
    where = f"run.{lane}"
    if not method.steps:
        _fail(f"{where}.steps", "a run has at least its prefill step")
    if len(method.tokens) > run.max_new_tokens:
        _fail(f"{where}.tokens", f"{len(method.tokens)} tokens, more than max_new_tokens = {run.max_new_tokens}")
    if sum(len(s.accepted) for s in method.steps) != len(method.tokens):
        _fail(f"{where}.tokens", "the steps' accepted tokens do not add up to the output")
    if method.stop_reason == "length" and len(method.tokens) != run.max_new_tokens:
        _fail(f"{where}.stop_reason", "'length' but fewer tokens than max_new_tokens")
    position, x, emitted = len(run.prompt_ids) - 1, run.prompt_ids[-1], 0
    for i, step in enumerate(method.steps):
        at = f"{where}.steps[{i}]"
        if step.index != i:
            _fail(f"{at}.index", f"is {step.index}; steps are numbered in order from 0")
        want = "prefill" if i == 0 else kinds
        if (step.kind != want) if i == 0 else (step.kind not in kinds):
            _fail(f"{at}.kind", f"is {step.kind!r}; expected {want if i == 0 else ' or '.join(kinds)}")
        if step.position != position:
            _fail(f"{at}.position", f"is {step.position}; the prompt and the tokens before put it at {position}")
        if step.input_token != x:
            _fail(f"{at}.input_token", "is not the last token accepted before this step")
        if tuple(method.tokens[emitted: emitted + len(step.accepted)]) != step.accepted:
            _fail(f"{at}.accepted", "does not match the run's output at this point")
        _check_step(run, step, at)
        position, x, emitted = position + len(step.accepted), step.accepted[-1], emitted + len(step.accepted)


def _ids(rows, vocab: int, at: str, width: int | None = None) -> None:
    for r, row in enumerate(rows):
        if width is not None and len(row) != width:
            _fail(f"{at}[{r}]", f"has {len(row)} tokens; this step needs {width}")
        if any(t >= vocab for t in row):
            _fail(f"{at}[{r}]", f"a token id is outside the run's vocabulary of {vocab:,} tokens")


def _check_step(run: RunTrace, step: StepTrace, at: str) -> None:
    cfg, vocab = run.config, run.vocab_size
    most = {"prefill": 1, "autoregressive": 1, "jacobi": step.window + 1}.get(step.kind, cfg.ngram)
    if not 1 <= len(step.accepted) <= most:
        _fail(f"{at}.accepted", f"has {len(step.accepted)} tokens; a {step.kind} step emits 1 to {most}")
    _ids([step.accepted, (step.input_token,)], vocab, f"{at}.accepted")
    if step.kind in ("prefill", "autoregressive"):
        empty = (step.window, step.guess, len(step.levels_before), len(step.candidates), len(step.draws), step.tree,
                 step.winner + 1)
        if any(empty) or step.new_level or step.predictions or step.match_lengths:
            _fail(at, f"a {step.kind} step has no window, candidates or draws")
        pooled = run.method == "lookahead" and at.startswith("run.parallel")
        if not pooled and (step.ngrams_added or step.ngrams_evicted or step.pool_size):
            _fail(f"{at}.ngrams_added", "a step of this lane has no pool")
        _ids(step.ngrams_added, vocab, f"{at}.ngrams_added", cfg.ngram)
        return
    if step.window > cfg.window:
        _fail(f"{at}.window", f"is {step.window}; the run's W is {cfg.window}")
    if step.kind == "jacobi":
        _check_jacobi(run, step, at)
    else:
        _check_lookahead(run, step, at)
    _check_verdict(run, step, at)


def _check_jacobi(run: RunTrace, step: StepTrace, at: str) -> None:
    W, vocab = step.window, run.vocab_size
    if step.ngram != W + 1 or step.guess or step.tree or step.ngrams_added or step.ngrams_evicted or step.pool_size:
        _fail(at, "a Jacobi step has N = W + 1, no pool and no token tree")
    if len(step.levels_before) != 1 or step.candidates != step.levels_before:
        _fail(f"{at}.levels_before", "a Jacobi step has one guess level, which is also its one candidate")
    _ids(step.levels_before, vocab, f"{at}.levels_before", W)
    _ids([step.new_level], vocab, f"{at}.new_level", W)
    _ids(step.predictions, vocab, f"{at}.predictions", W + 1)
    if len(step.predictions) != 1 or step.predictions[0][1:] != step.new_level:
        _fail(f"{at}.predictions", "a Jacobi step's prediction row is the token after x, then its new level")


def _check_lookahead(run: RunTrace, step: StepTrace, at: str) -> None:
    cfg, vocab, N = run.config, run.vocab_size, run.config.ngram
    if step.ngram != N or step.tree != cfg.tree:
        _fail(at, f"N = {step.ngram}, tree = {step.tree}; the run has N = {N}, tree = {cfg.tree}")
    if step.guess > cfg.guess or len(step.candidates) > step.guess:
        _fail(f"{at}.candidates", f"{len(step.candidates)} candidates, guess {step.guess}; the run's G is {cfg.guess}")
    levels = len(step.levels_before)
    if levels > N - 1 or (step.window == 0) != (levels == 0):
        _fail(f"{at}.levels_before", f"{levels} levels of W = {step.window}; the window has 1 to N-1 = {N - 1}")
    if (step.kind == "warmup") != (0 < levels < N - 1):
        _fail(f"{at}.kind", f"is {step.kind!r} with {levels} of {N - 1} levels")
    _ids(step.levels_before, vocab, f"{at}.levels_before", step.window)
    _ids([step.new_level], vocab, f"{at}.new_level", step.window if levels else 0)
    _ids(step.candidates, vocab, f"{at}.candidates", N - 1)
    _ids(step.predictions, vocab, f"{at}.predictions", N)
    if len(step.predictions) != len(step.candidates):
        _fail(f"{at}.predictions", "one row of N tokens per candidate")
    _ids(step.ngrams_added, vocab, f"{at}.ngrams_added", N)
    if len(step.ngrams_added) > step.window + N - 1 + len(step.accepted):
        _fail(f"{at}.ngrams_added", f"{len(step.ngrams_added)} n-grams; a step adds at most W + N - 1 + its tokens")


def _check_verdict(run: RunTrace, step: StepTrace, at: str) -> None:
    """The match lengths, the winner and the emitted tokens agree with the candidates and the predictions."""
    g = len(step.candidates)
    if len(step.match_lengths) != g or any(m > len(c) for m, c in zip(step.match_lengths, step.candidates)):
        _fail(f"{at}.match_lengths", "one length per candidate, at most its length")
    lengths = list(step.match_lengths)
    best = max(lengths, default=0)
    winner = lengths.index(best) if best > 0 else -1
    if step.winner != winner:
        _fail(f"{at}.winner", f"is {step.winner}; the longest match makes it {winner}")
    if run.sampling.greedy:
        if step.draws:
            _fail(f"{at}.draws", "a greedy run makes no draws")
        if g:
            cands, preds = np.array(step.candidates), np.array(step.predictions)
            recomputed = np.cumprod(cands == preds[:, :-1], axis=1).sum(axis=1).tolist()
            if recomputed != lengths:
                _fail(f"{at}.match_lengths", f"are {lengths}; the candidates and predictions give {recomputed}")
            row = step.predictions[max(winner, 0)]
            if step.accepted != row[: len(step.accepted)] or len(step.accepted) > best + 1:
                _fail(f"{at}.accepted", "is not the winner's matched prefix and the model's next token")
        return
    if len(step.draws) > g * max(len(c) for c in step.candidates or [()]) + 1:
        _fail(f"{at}.draws", f"{len(step.draws)} draws for {g} candidates")
    for d, draw in enumerate(step.draws):
        if draw.candidate >= g or (g and draw.position >= len(step.candidates[draw.candidate])):
            _fail(f"{at}.draws[{d}]", "names a candidate or a position the step does not have")
        if draw.token != step.candidates[draw.candidate][draw.position]:
            _fail(f"{at}.draws[{d}].token", "is not the token its candidate offers at that position")
    kept = min(best, len(step.accepted))
    if winner >= 0 and step.accepted[:kept] != step.candidates[winner][:kept]:
        _fail(f"{at}.accepted", "does not start with the winner's accepted drafts")


def _check_pool(run: RunTrace) -> None:
    """Replaying the n-grams the steps added through the engine's own pool gives the sizes and evictions recorded."""
    if run.method != "lookahead":
        return
    pool = NGramPool(run.config.guess)
    for i, step in enumerate(run.parallel.steps):
        evicted = pool.add_all(step.ngrams_added)
        if tuple(evicted) != step.ngrams_evicted or len(pool) != step.pool_size:
            _fail(f"run.parallel.steps[{i}].pool_size", "replaying the added n-grams does not give the recorded pool")
