"""A saved run's file: `parse_run(text)` validates the whole file before anything can draw it.

Two passes, both linear in the file's size (so a file of S bytes costs O(S) time and memory to load, whatever it
claims): `schema.build` checks every field's type and range as declared in `trace.py`; `tracecheck.check_run` then
checks every step of every lane against its run (positions, input tokens, sizes, vocabulary, greedy acceptance, the
pool replayed). A bad file raises `TraceError` with one line naming the step and the field. Nothing in a file is
ever executed or unpickled. Older versions are upgraded on the way in: version 1 (before the parallel/baseline
names), version 2 (before the sampling seed was called `sample_seed`, and before extra lanes and draft settings);
versions 3 and 4 lack only fields that have defaults (a step's layout, `kernels`, reads as unrecorded).
"""

from __future__ import annotations

import dataclasses
import json

from . import schema
from .trace import SCHEMA, VERSION, RunTrace
from .tracecheck import TraceError, check_run

__all__ = ["MAX_TRACE_BYTES", "TraceError", "check_run", "parse_run", "upgrade_v1", "upgrade_v2"]

MAX_TRACE_BYTES = 8 * 2**20  # 8 MiB, the one limit on a trace file (the app's uploads too): a 512-token run at
# W = G = 32, N = 8 takes about 3 MiB
_CONTEXT_MAX = next(f.metadata["high"] for f in dataclasses.fields(RunTrace) if f.name == "context")


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
    if type(version) is not int or version not in range(1, VERSION + 1):
        raise TraceError(
            f"trace version {schema.shown(version)} is not supported; this app reads versions 1 to {VERSION}"
        )
    unknown = [k for k in doc if k not in ("schema", "version", "run")]
    if unknown:
        raise TraceError(f"the file has unknown top-level fields: {', '.join(schema.shown(k) for k in unknown[:5])}")
    body = doc.get("run")
    if version == 1:
        body = upgrade_v1(body)
    if version < 3:
        body = upgrade_v2(body)
    try:
        run = schema.build(RunTrace, body, "run", TraceError)
    except schema.SchemaError as exc:  # a settings object's own check
        raise TraceError(str(exc)) from None
    check_run(run)
    return run


def upgrade_v2(body):
    """A version-2 run as version 3: the sampling seed is `sample_seed` (a file with both is left for the schema
    to refuse)."""
    sampling = body.get("sampling") if isinstance(body, dict) else None
    if isinstance(sampling, dict) and "seed" in sampling and "sample_seed" not in sampling:
        sampling = dict(sampling)
        sampling["sample_seed"] = sampling.pop("seed")
        body = {**body, "sampling": sampling}
    return body


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
