"""The checks across steps that a trace's schema cannot state: `check_run(run)`, run by the loader (`tracefile.py`)
after every field passed its declared type and range.

For every lane (the main method in `parallel`, the extra `lanes`, the baseline): the prompt and the step order fix
each step's position and input token; each step is of its method's kind and fits the run's settings (W, N, G for
lookahead and Jacobi decoding; K, the exit layer and the draft model for the speculative methods); every token is in
the run's vocabulary; the accepted tokens add up to the output; greedy steps accept exactly what their own
predictions say; a lookahead lane's pool, replayed from the n-grams its steps added, has the sizes and evictions its
steps recorded; prompt lookup proposes only tokens the text already holds; a Lookahead Parallelism step's devices
hold the shares the deal gives them (`shares.deal`) and fed what their shares' layouts hold; the machine's cost curve
widens from one token up, each median between its quartiles. A bad file raises
`TraceError` with one line naming the step and the field. Every check is linear in the size of what it checks.
"""

from __future__ import annotations

from . import schema
from .config import DRAFT_KINDS
from .pool import NGramPool
from .shares import deal, layout
from .trace import Lane, MethodRun, RunTrace, StepTrace

KINDS = {
    "lookahead": ("warmup", "lookahead"),
    "jacobi": ("jacobi",),
    "autoregressive": ("autoregressive",),
    **{kind: (kind,) for kind in DRAFT_KINDS},
}


class TraceError(schema.SchemaError):
    """A trace file is not a valid run of this schema and version; the message says what is wrong, and where."""


def _fail(where: str, why: str):
    raise TraceError(f"{where}: {why}")


def check_run(run: RunTrace) -> None:
    """Every step of every lane consistent with its run (see the module docstring); TraceError on the first that
    is not."""
    if not run.prompt_ids:
        _fail("run.prompt_ids", "the prompt has no tokens")
    if any(t >= run.vocab_size for t in run.prompt_ids):
        _fail("run.prompt_ids", f"a token id is outside the vocabulary of {run.vocab_size}")
    if len(run.prompt_ids) + run.max_new_tokens > run.context:
        _fail(
            "run.max_new_tokens",
            f"{len(run.prompt_ids)} prompt tokens and {run.max_new_tokens} new ones do not "
            f"fit the context of {run.context}",
        )
    for i, lane in enumerate(run.all_lanes):
        where = "run" if i == 0 else f"run.lanes[{i - 1}]"
        _check_settings(lane, where)
        _check_method(run, lane, lane.run, f"{where}.parallel" if i == 0 else f"{where}.run")
        _check_pool(lane, f"{where}.parallel" if i == 0 else f"{where}.run")
    _check_method(run, None, run.baseline, "run.baseline")
    _check_machine(run)


def _check_machine(run: RunTrace) -> None:
    """A recorded machine's curve starts at one token, widens step by step, and each point's median lies between
    its quartiles."""
    curve = run.machine.curve
    if curve and curve[0].tokens != 1:
        _fail(
            "run.machine.curve[0].tokens", f"a cost curve starts at one token (the greedy step), not {curve[0].tokens}"
        )
    for i, (a, b) in enumerate(zip(curve, curve[1:]), start=1):
        if b.tokens <= a.tokens:
            _fail(f"run.machine.curve[{i}].tokens", f"{b.tokens} does not follow {a.tokens}: widths go up")
    for i, p in enumerate(curve):
        if not p.q1 <= p.seconds <= p.q3:
            _fail(f"run.machine.curve[{i}]", "the median lies outside its quartiles")


def _check_settings(lane: Lane, where: str) -> None:
    if lane.method == "jacobi" and (lane.config.ngram, lane.config.guess) != (2, 0):
        _fail(f"{where}.config", "Jacobi decoding runs have N = 2 and G = 0 (a one-level window, no candidates)")
    if lane.method == "draft" and not lane.draft.draft_model:
        _fail(f"{where}.draft.draft_model", "a draft-model run names its draft model")


def _check_method(run: RunTrace, lane: Lane | None, method: MethodRun, where: str) -> None:
    """One lane's run; `lane` None is the baseline (autoregressive decoding)."""
    kinds = KINDS[lane.method if lane else "autoregressive"]
    if not method.steps:
        _fail(f"{where}.steps", "a run has at least its prefill step")
    if len(method.tokens) > run.max_new_tokens:
        _fail(f"{where}.tokens", f"{len(method.tokens)} tokens, more than max_new_tokens = {run.max_new_tokens}")
    if sum(len(s.accepted) for s in method.steps) != len(method.tokens):
        _fail(f"{where}.tokens", "the steps' accepted tokens do not add up to the output")
    if method.stop_reason == "length" and len(method.tokens) != run.max_new_tokens:
        _fail(f"{where}.stop_reason", "'length' but fewer tokens than max_new_tokens")
    position, x, emitted = len(run.prompt_ids) - 1, run.prompt_ids[-1], 0
    seen = set(run.prompt_ids)  # the tokens the text holds before each step (what prompt lookup may copy)
    k = lane.draft.tokens if lane else 0  # a speculative step's draft length, as the lane's schedule moves it
    for i, step in enumerate(method.steps):
        at = f"{where}.steps[{i}]"
        if step.index != i:
            _fail(f"{at}.index", f"is {step.index}; steps are numbered in order from 0")
        if (step.kind != "prefill") if i == 0 else (step.kind not in kinds):
            _fail(f"{at}.kind", f"is {step.kind!r}; expected {'prefill' if i == 0 else ' or '.join(kinds)}")
        if step.position != position:
            _fail(f"{at}.position", f"is {step.position}; the prompt and the tokens before put it at {position}")
        if step.input_token != x:
            _fail(f"{at}.input_token", "is not the last token accepted before this step")
        if tuple(method.tokens[emitted : emitted + len(step.accepted)]) != step.accepted:
            _fail(f"{at}.accepted", "does not match the run's output at this point")
        _check_step(run, lane, step, at, seen, k)
        if lane and step.kind in DRAFT_KINDS:
            matched = step.match_lengths[step.winner] if step.winner >= 0 else 0
            k = lane.draft.next_tokens(k, len(step.candidates[0]) if step.candidates else 0, matched)
        seen.update(step.accepted)
        position, x, emitted = position + len(step.accepted), step.accepted[-1], emitted + len(step.accepted)


def _ids(rows, vocab: int, at: str, width: int | None = None) -> None:
    for r, row in enumerate(rows):
        if width is not None and len(row) != width:
            _fail(f"{at}[{r}]", f"has {len(row)} tokens; this step needs {width}")
        if any(t >= vocab for t in row):
            _fail(f"{at}[{r}]", f"a token id is outside the run's vocabulary of {vocab:,} tokens")


def _check_step(run: RunTrace, lane: Lane | None, step: StepTrace, at: str, seen: set, k: int = 0) -> None:
    cfg, vocab = lane.config if lane else run.config, run.vocab_size
    most = {
        "prefill": 1,
        "autoregressive": 1,
        "jacobi": step.window + 1,
        "lookahead": cfg.most_accepted,
        "warmup": cfg.most_accepted,
    }.get(step.kind, step.ngram)
    if not 1 <= len(step.accepted) <= most:
        _fail(f"{at}.accepted", f"has {len(step.accepted)} tokens; a {step.kind} step emits 1 to {most}")
    _ids([step.accepted, (step.input_token,)], vocab, f"{at}.accepted")
    if step.kind not in DRAFT_KINDS and (step.draft_s or step.draft_passes):
        _fail(f"{at}.draft_s", f"a {step.kind} step does no drafting")
    if step.copied and (
        step.kind not in ("lookahead", "warmup") or not cfg.lookup or step.copied > len(step.candidates)
    ):
        _fail(f"{at}.copied", "only a lookahead step of a run with prompt lookup candidates verifies a copied one")
    if step.ranks:
        _check_ranks(step, at)
    if step.kind in ("prefill", "autoregressive"):
        empty = (
            step.window,
            step.guess,
            len(step.levels_before),
            len(step.candidates),
            len(step.draws),
            step.tree,
            step.winner + 1,
        )
        if any(empty) or step.new_level or step.predictions or step.match_lengths:
            _fail(at, f"a {step.kind} step has no window, candidates or draws")
        pooled = lane is not None and lane.method == "lookahead"
        if not pooled and (step.ngrams_added or step.ngrams_evicted or step.pool_size):
            _fail(f"{at}.ngrams_added", "a step of this lane has no pool")
        _ids(step.ngrams_added, vocab, f"{at}.ngrams_added", cfg.ngram)
        return
    if step.kind in DRAFT_KINDS:
        _check_draft(lane, step, at, vocab, seen, k)
    else:
        if step.window > cfg.window:
            _fail(f"{at}.window", f"is {step.window}; the run's W is {cfg.window}")
        if step.kind == "jacobi":
            _check_jacobi(cfg, step, at, vocab)
        else:
            _check_lookahead(cfg, step, at, vocab, seen)
    _check_verdict(run, step, at)


def _check_ranks(step: StepTrace, at: str) -> None:
    """A Lookahead Parallelism step: at least two devices, dealt their shares by the one rule, each having fed its
    share's layout."""
    if step.kind not in ("lookahead", "warmup") or len(step.ranks) < 2:
        _fail(f"{at}.ranks", "only a lookahead step is dealt out, over 2 devices or more")
    levels, sizes = len(step.levels_before), [len(c) for c in step.candidates]
    shares = deal(step.window if levels else 0, levels, sizes, len(step.ranks))
    for r, (share, rank) in enumerate(zip(shares, step.ranks)):
        if (rank.first, rank.columns, rank.candidates) != (share.first, share.columns, share.candidates):
            _fail(f"{at}.ranks[{r}]", "is not the share the deal gives this device (shares.py)")
        if rank.fed != layout(share, levels, step.candidates, max(step.ngram - 1, 0), step.tree).size:
            _fail(f"{at}.ranks[{r}].fed", f"is {rank.fed}; this device's share feeds another number of tokens")


def _check_jacobi(cfg, step: StepTrace, at: str, vocab: int) -> None:
    W = step.window
    if step.ngram != W + 1 or step.guess or step.tree or step.ngrams_added or step.ngrams_evicted or step.pool_size:
        _fail(at, "a Jacobi step has N = W + 1, no pool and no token tree")
    if len(step.levels_before) != 1 or step.candidates != step.levels_before:
        _fail(f"{at}.levels_before", "a Jacobi step has one guess level, which is also its one candidate")
    _ids(step.levels_before, vocab, f"{at}.levels_before", W)
    _ids([step.new_level], vocab, f"{at}.new_level", W)
    _ids(step.predictions, vocab, f"{at}.predictions", W + 1)
    if len(step.predictions) != 1 or step.predictions[0][1:] != step.new_level:
        _fail(f"{at}.predictions", "a Jacobi step's prediction row is the token after x, then its new level")


def _check_lookahead(cfg, step: StepTrace, at: str, vocab: int, seen: set) -> None:
    """A lookahead step: the window's levels, G pool candidates of N-1 tokens, and (with `lookup`) one or two last
    copied candidates of 1 to `lookup` tokens, all of them tokens the text already holds."""
    N, pooled = cfg.ngram, step.candidates[: len(step.candidates) - step.copied]
    if step.ngram != N or step.tree != cfg.tree:
        _fail(at, f"N = {step.ngram}, tree = {step.tree}; the run has N = {N}, tree = {cfg.tree}")
    if step.guess > cfg.guess or len(pooled) > step.guess:
        _fail(f"{at}.candidates", f"{len(pooled)} candidates, guess {step.guess}; the run's G is {cfg.guess}")
    for k, c in enumerate(step.candidates[len(pooled) :], start=len(pooled)):
        if not 1 <= len(c) <= cfg.lookup or not seen.issuperset(c):
            _fail(f"{at}.candidates[{k}]", f"a copied candidate has 1 to {cfg.lookup} tokens of the text")
    levels = len(step.levels_before)
    if levels > N - 1 or (step.window == 0) != (levels == 0):
        _fail(f"{at}.levels_before", f"{levels} levels of W = {step.window}; the window has 1 to N-1 = {N - 1}")
    if (step.kind == "warmup") != (0 < levels < N - 1):
        _fail(f"{at}.kind", f"is {step.kind!r} with {levels} of {N - 1} levels")
    _ids(step.levels_before, vocab, f"{at}.levels_before", step.window)
    _ids([step.new_level], vocab, f"{at}.new_level", step.window if levels else 0)
    _ids(pooled, vocab, f"{at}.candidates", N - 1)
    _ids(step.predictions[: len(pooled)], vocab, f"{at}.predictions", N)
    if len(step.predictions) != len(step.candidates):
        _fail(f"{at}.predictions", "one row of N tokens per candidate")
    for c, row in zip(step.candidates[len(pooled) :], step.predictions[len(pooled) :]):
        _ids([row], vocab, f"{at}.predictions", len(c) + 1)
    _ids(step.ngrams_added, vocab, f"{at}.ngrams_added", N)
    if len(step.ngrams_added) > step.window + cfg.most_accepted:  # the window's, and the text's (before a cut)
        _fail(f"{at}.ngrams_added", f"{len(step.ngrams_added)} n-grams; a step adds at most W + {cfg.most_accepted}")


def _check_draft(lane: Lane, step: StepTrace, at: str, vocab: int, seen: set, K: int) -> None:
    """A speculative step: no window and no pool, at most one proposal of 1 to K tokens verified as a token tree
    (K the lane's draft length at this step, by its schedule), its predictions one longer than it; a draft model's
    passes are its tokens, prompt lookup makes none and copies only tokens the text already holds."""
    if (
        step.window
        or step.levels_before
        or step.new_level
        or step.ngrams_added
        or step.ngrams_evicted
        or step.pool_size
    ):
        _fail(at, f"a {step.kind} step has no window and no pool")
    if step.ngram != K + 1 or not step.tree or step.guess != 1 or len(step.candidates) > 1:
        _fail(at, f"a {step.kind} step verifies at most one draft of up to K = {K} tokens as a tree (N = K + 1)")
    for c, cand in enumerate(step.candidates):
        if not 1 <= len(cand) <= K:
            _fail(f"{at}.candidates[{c}]", f"has {len(cand)} tokens; a draft has 1 to K = {K}")
    _ids(step.candidates, vocab, f"{at}.candidates")
    if len(step.predictions) != len(step.candidates):
        _fail(f"{at}.predictions", "one row per candidate")
    for c, (cand, row) in enumerate(zip(step.candidates, step.predictions)):
        _ids([row], vocab, f"{at}.predictions", len(cand) + 1)
        if step.kind == "pld" and not seen.issuperset(cand):
            _fail(f"{at}.candidates[{c}]", "prompt lookup copies text, but this draft has a token the text lacks")
    passes = 0 if step.kind == "pld" else sum(len(c) for c in step.candidates)
    if step.draft_passes != passes:
        _fail(f"{at}.draft_passes", f"is {step.draft_passes}; a {step.kind} draft of these tokens takes {passes}")


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
        recomputed = [_agreed(c, p) for c, p in zip(step.candidates, step.predictions)]
        if g and recomputed != lengths:
            _fail(f"{at}.match_lengths", f"are {lengths}; the candidates and predictions give {recomputed}")
        row = step.predictions[max(winner, 0)] if g else step.accepted
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


def _agreed(candidate, prediction) -> int:
    """How many leading tokens of `candidate` equal the model's tokens before them (`prediction[k]`)."""
    m = 0
    while m < len(candidate) and candidate[m] == prediction[m]:
        m += 1
    return m


def _check_pool(lane: Lane, where: str) -> None:
    """Replaying the n-grams the steps added through the engine's own pool gives the sizes and evictions recorded."""
    if lane.method != "lookahead":
        return
    pool = NGramPool(lane.config.guess)
    for i, step in enumerate(lane.run.steps):
        evicted = pool.add_all(step.ngrams_added)
        if tuple(evicted) != step.ngrams_evicted or len(pool) != step.pool_size:
            _fail(f"{where}.steps[{i}].pool_size", "replaying the added n-grams does not give the recorded pool")
