"""Lookahead's relatives are exact too: prompt lookup decoding, an early-exit draft and a separate draft model write
greedy's tokens on every benchmark prompt (64 tokens, fp32); prompt lookup writes transformers' own
`generate(prompt_lookup_num_tokens=10)` tokens in as many forward passes; the early-exit draft is made of the model's
own modules (no new weights); a draft model with another tokenizer is refused with a message; and a race of four
lanes is one valid trace file. Would catch a draft accepted where the model disagreed, a draft cache left out of step
with the text, a matching rule that drifted from transformers', or a lane the loader cannot read.
"""

import json

import pytest
import torch
from conftest import PAIRWISE_TOKENS, REFERENCE_TOKENS, case_id, pairwise

from lade_core import DraftConfig, LookaheadConfig, MethodSpec, decode, parse_run, record_run
from lade_core.checkpoint import early_exit_lm, load_draft
from lade_core.errors import ModelLoadError
from lade_core.measure.prompts import load_prompts
from lade_core.trace import VERSION

pytestmark = pytest.mark.model
EARLY_EXIT = MethodSpec("early-exit", draft=DraftConfig(tokens=3, exit_layer=8))


PROMPTS = load_prompts()
METHODS = ["pld", "early-exit", "draft"]
GROUNDED = [p for p in PROMPTS if p["id"].startswith("grounded")]  # answers that copy their prompt


@pytest.fixture(scope="module")
def tiny_draft(lm, tmp_path_factory):
    """A useless draft: two layers of random weights over the model's own tokenizer (vocabulary and ids)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    folder = tmp_path_factory.mktemp("tiny-draft")
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=lm.vocab_size,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=lm.max_positions,
        tie_word_embeddings=True,
    )
    LlamaForCausalLM(config).save_pretrained(folder)
    lm.tokenizer.save_pretrained(folder)
    return str(folder)


def _relative_is_exact(lm, prompt, greedy, tiny_draft, method, tokens=REFERENCE_TOKENS):
    spec = {
        "pld": MethodSpec("pld"),
        "early-exit": EARLY_EXIT,
        "draft": MethodSpec("draft", draft=DraftConfig(tokens=4, draft_model=tiny_draft)),
    }[method]
    run = decode(lm, lm.encode_prompt(prompt["prompt"]), spec, tokens)
    assert run.tokens == greedy(prompt["id"], tokens), (method, prompt["id"])
    for step in run.steps[1:]:
        assert step.kind == method and not step.levels_before and step.window == 0 and len(step.candidates) <= 1
        assert step.draft_passes == (0 if method == "pld" else sum(map(len, step.candidates)))
        assert step.seconds == step.forward_s + step.overhead_s + step.draft_s


# `make test`: each method on a prompt of its own kind (grounded, chat, code); every prompt in `make test-soak`.
@pytest.mark.parametrize(("method", "prompt"), pairwise(METHODS, PROMPTS[::-4], each=1), ids=case_id)
def test_every_relative_equals_greedy_pairwise(lm, greedy, tiny_draft, method, prompt):
    _relative_is_exact(lm, prompt, greedy, tiny_draft, method, PAIRWISE_TOKENS)


@pytest.mark.soak
@pytest.mark.parametrize("method", METHODS)
def test_every_relative_equals_greedy_on_every_prompt(lm, bench_prompts, greedy, tiny_draft, method):
    for p in bench_prompts:
        _relative_is_exact(lm, p, greedy, tiny_draft, method)


@pytest.mark.soak  # 23 s; the relatives' exactness stays in `make test` (pairwise)
def test_the_heuristic_draft_length_moves_as_transformers_schedule_and_stays_exact(lm, greedy):
    """Early exit drafted an always-10-token draft (3 of 600 kept): with `schedule="heuristic"` (transformers' opt-in
    `num_assistant_tokens_schedule="heuristic"`) its length starts at K and grows by two after a fully kept draft,
    shrinks by one (to at least 1) otherwise; the text is still greedy's, and the trace checker holds each step to
    the rule. Read here from the steps, not from the engine's code."""
    from lade_core.config import MAX_DRAFT

    prompt = GROUNDED[0]
    spec = MethodSpec("early-exit", draft=DraftConfig(tokens=10, exit_layer=8, schedule="heuristic"))
    run = decode(lm, lm.encode_prompt(prompt["prompt"]), spec, REFERENCE_TOKENS)
    assert run.tokens == greedy(prompt["id"], REFERENCE_TOKENS)
    k, lengths = 10, []
    for step in run.steps[1:]:
        assert step.ngram == k + 1  # the step drafted at most k, and says so
        proposed = len(step.candidates[0]) if step.candidates else 0
        kept = step.match_lengths[step.winner] if step.winner >= 0 else 0
        lengths.append(k)
        k = min(k + 2, MAX_DRAFT) if proposed and kept == proposed else max(1, k - 1)
    assert min(lengths) < 10, "a draft that is seldom right shrinks"
    race = record_run(lm, prompt["prompt"], [spec], 16)
    parse_run(race.to_json().encode())  # the checker reads the schedule back
    bad = json.loads(race.to_json())
    bad["run"]["draft"]["schedule"] = "constant"  # the same steps, claimed as a constant K: refused
    with pytest.raises(ValueError, match="K = 10"):
        parse_run(json.dumps(bad).encode())


def _copies_are_exact(lm, prompts, greedy) -> int:
    """Lookahead with prompt lookup's copies among its candidates writes greedy's tokens; the longest step kept."""
    spec = MethodSpec("lookahead", config=LookaheadConfig(window=4, ngram=3, guess=4, lookup=10))
    longest = 0
    for p in prompts:
        run = decode(lm, lm.encode_prompt(p["prompt"]), spec, REFERENCE_TOKENS)
        assert run.tokens == greedy(p["id"], REFERENCE_TOKENS), p["id"]
        longest = max([longest, *(len(s.accepted) for s in run.steps[1:])])
    return longest


def test_lookahead_with_copied_candidates_equals_greedy_on_the_grounded_prompts(lm, greedy):
    """The fastest shipped setting (BENCHMARKS.md): W=4 N=3 G=4 with prompt lookup's copy of up to 10 tokens among
    the candidates, on the prompts whose answers copy them. Would catch a copied candidate longer than N-1 verified
    wrongly in the token tree."""
    longest = _copies_are_exact(lm, GROUNDED, greedy)
    assert longest > 3, "some step kept a copy longer than the window's n-grams (N-1 = 2 tokens) plus one"


@pytest.mark.soak
def test_lookahead_with_copied_candidates_equals_greedy_on_every_prompt(lm, bench_prompts, greedy):
    _copies_are_exact(lm, bench_prompts, greedy)


def _as_transformers_writes(lm, prompts):
    """Prompt lookup writes transformers' tokens in as many passes (within one) on `prompts`."""
    calls = [0]
    handle = lm.model.register_forward_pre_hook(lambda *_: calls.__setitem__(0, calls[0] + 1))
    try:
        for p in prompts:
            ids = lm.encode_prompt(p["prompt"])
            calls[0] = 0
            ours = decode(lm, ids, MethodSpec("pld"), REFERENCE_TOKENS)
            our_passes, calls[0] = calls[0], 0
            with torch.inference_mode():
                theirs = lm.model.generate(
                    torch.tensor([ids]),
                    attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                    max_new_tokens=REFERENCE_TOKENS,
                    do_sample=False,
                    prompt_lookup_num_tokens=10,
                )
            assert list(ours.tokens) == theirs[0, len(ids) :].tolist(), p["id"]
            assert our_passes == len(ours.steps) and abs(our_passes - calls[0]) <= 1, (p["id"], our_passes, calls[0])
    finally:
        handle.remove()


def test_prompt_lookup_writes_transformers_tokens_in_as_many_passes(lm):
    """Same tokens as `model.generate(prompt_lookup_num_tokens=10)` on a grounded prompt (where prompt lookup copies
    most; every prompt in `make test-soak`), and the same number of
    forward passes of the model, counted by a hook on it, within one (measured here: equal on all eight; one apart
    would be transformers folding its first draft into the prompt's pass, which this engine keeps a step of its own)."""
    _as_transformers_writes(lm, GROUNDED[:1])


@pytest.mark.soak
def test_prompt_lookup_writes_transformers_tokens_on_every_prompt(lm, bench_prompts):
    _as_transformers_writes(lm, bench_prompts)


def test_the_early_exit_draft_is_the_models_own_modules(lm):
    """No weight is copied or added: every parameter and buffer of the draft is one of the model's tensors."""
    draft = early_exit_lm(lm, 8)
    own = {id(t) for t in (*lm.model.parameters(), *lm.model.buffers())}
    assert all(id(t) in own for t in (*draft.model.parameters(), *draft.model.buffers()))
    assert draft.model.config.num_hidden_layers == 8 and lm.model.config.num_hidden_layers == 30
    assert early_exit_lm(lm, 8) is draft  # built once per exit layer
    with pytest.raises(ValueError, match="exit layer must be between 1 and 29"):
        early_exit_lm(lm, 30)


def test_a_draft_model_with_another_tokenizer_is_refused(lm, tmp_path):
    from tokenizers import Tokenizer, models
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab = {"[UNK]": 0, "a": 1, "b": 2}
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(models.WordLevel(vocab, unk_token="[UNK]")), unk_token="[UNK]"
    )
    tokenizer.save_pretrained(tmp_path)
    LlamaForCausalLM(
        LlamaConfig(vocab_size=3, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2)
    ).save_pretrained(tmp_path)
    with pytest.raises(ModelLoadError) as err:
        load_draft(lm, str(tmp_path))
    message = str(err.value)
    assert "cannot draft for" in message and "vocabulary has 3 tokens, the model's 49,152" in message
    assert "needs the model's own tokenizer" in message


def test_a_four_lane_race_is_one_valid_trace(lm):
    """Greedy against lookahead, prompt lookup and an early-exit draft on one clock: a version-3 file whose every
    lane the loader checks, each lane exact, and its view data (layouts shared, a pool only for lookahead)."""
    from app.render.payload import payload

    specs = [MethodSpec(), MethodSpec("pld"), EARLY_EXIT]
    run = record_run(lm, "Repeat this line twice: the cat sat on the mat.", specs, 24)
    assert [lane.method for lane in run.all_lanes] == ["lookahead", "pld", "early-exit"]
    assert all(lane.run.tokens == run.baseline.tokens for lane in run.all_lanes)
    text = run.to_json()
    assert json.loads(text)["version"] == VERSION and parse_run(text) == run
    derived = payload(run)["derived"]
    assert len(derived["lanes"]) == 2 and len(derived["lanes"][0]["steps"]) == len(run.lanes[0].run.steps)
    assert all("pool" not in s for lane in derived["lanes"] for s in lane["steps"]) and "pool" in derived["steps"][1]
