"""What the browser's renderer gets: the engine-derived data must be the engine's own. Would catch a mask in the page
that differs from the one the model used, pool rows that differ from a replay of the engine's pool, or a size budget
that lets a run's view data grow without bound. No model."""

import base64
import json

import numpy as np
import pytest

from app.render.payload import ITEM_BUDGET, Deriver, PayloadTooLarge, payload, reason_rules, token_kinds
from lade_core import parse_run
from lade_core.layout import REASONS, StepLayout
from lade_core.paths import RUNS
from lade_core.pool import replay_pool


def runs():
    return [parse_run(p.read_bytes()) for p in sorted(RUNS.glob("*.json"))]


def unpack(row) -> np.ndarray:
    q = row["size"]
    bits = np.unpackbits(np.frombuffer(base64.b64decode(row["mask"]), dtype=np.uint8))[: q * q]
    return bits.reshape(q, q).astype(bool)


@pytest.mark.parametrize("run", runs(), ids=lambda r: r.title)
def test_every_steps_mask_is_the_layouts_own(run):
    data = payload(run)
    assert data["trace"] == json.loads(run.to_json())["run"]  # the trace travels as the file has it
    for step, derived in zip(run.parallel.steps, data["derived"]["steps"]):
        if step.kind == "prefill":
            assert derived["layout"] == -1
            continue
        row = data["derived"]["layouts"][derived["layout"]]
        layout = step.layout
        assert np.array_equal(unpack(row), layout.mask())
        assert row["labels"] == layout.labels() and row["positions"] == layout.positions().tolist()


def test_reason_rules_reproduce_the_engines_reasons():
    """The page picks a hover reason by (query kind, key kind, visible); that table must give layout.reason."""
    rules = reason_rules()
    for layout in (
        StepLayout.plain(3, 4, 3, 3),
        StepLayout.tree(2, 3, [(1, 2), (1, 3), (4, 5)]),
        StepLayout.plain(1, 5, 0, 0),
    ):
        kinds, mask, labels = token_kinds(layout), layout.mask(), layout.labels()
        for q in range(layout.size):
            for k in range(layout.size):
                code = rules[kinds[q]][kinds[k]][int(mask[q, k])]
                assert REASONS[code][1].format(q=labels[q], k=labels[k]) == layout.reason(q, k)


@pytest.mark.parametrize("run", [r for r in runs() if r.method == "lookahead"], ids=lambda r: r.title)
def test_pool_rows_are_a_replay_of_the_engines_pool(run):
    steps = payload(run)["derived"]["steps"]
    for i, (step, derived) in enumerate(zip(run.parallel.steps, steps)):
        pool = replay_pool((s.ngrams_added for s in run.parallel.steps[: i + 1]), run.config.guess)
        assert derived["pool"]["size"] == len(pool) == step.pool_size
        rows = {row["key"]: [tuple(it["cont"]) for it in row["items"]] for row in derived["pool"]["rows"]}
        assert rows[step.input_token] == pool.lookup(step.input_token)
        for key, conts in rows.items():
            assert conts == pool.lookup(key)


def test_view_data_has_a_budget():
    run = runs()[0]
    deriver = Deriver(run)
    deriver.items = ITEM_BUDGET - 5
    with pytest.raises(PayloadTooLarge, match="too large to draw"):
        for step in run.parallel.steps:
            deriver.step(step)


@pytest.mark.model
def test_kept_from_is_where_the_engines_pool_took_the_kept_candidate(lm):
    """Chapter 4 said nothing of where kept drafts come from, while the lesson's run keeps about two in five of its
    draft tokens from the prompt's and answer's n-grams, not window columns. The derived `kept_from` of each step
    (replayed from the trace) is what the engine's own pool said of the winning candidate before the step."""
    from lade_core import LookaheadConfig, MethodSpec
    from lade_core.decoding import generate
    from lade_core.methods import make_decoder
    from lade_core.pool import NGramPool
    from lade_core.trace import MethodRun

    prompt = "Write a Python class Stack with push, pop, peek and is_empty methods, and a short example of using it."
    ids = lm.encode_prompt(prompt)
    config = LookaheadConfig(window=7, ngram=4, guess=7, pool="prompt")
    decoder = make_decoder(lm, list(ids), MethodSpec("lookahead", config), None)
    said, ahead = [], {}

    def on_step(step):
        if step.index:  # the engine's pool before this step, read after the last one
            kept = step.winner >= 0 and step.n_accepted_from_candidate and step.winner < len(step.candidates)
            said.append(ahead.get(step.candidates[step.winner], "") if kept else "")
        x = step.accepted[-1]
        ahead.clear()
        ahead.update({c: decoder.pool.source(x, c) for c in decoder.pool.lookup(x)})

    method: MethodRun = generate(decoder, lm.eos_ids, 48, on_step, None)
    pool, derived, stub = NGramPool(config.guess), [], deriver_stub()
    for step in method.steps:
        derived.append(Deriver.kept_from(step, pool))
        stub.pool_rows(step, pool)
    assert derived[1:] == said and {"window", "text"} <= set(said), said


def deriver_stub():
    """A deriver with nothing but a budget, for calling `pool_rows` on a pool of one's own."""
    stub = Deriver.__new__(Deriver)
    stub.items = 0
    return stub
