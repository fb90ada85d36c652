"""Lookahead sampling keeps the model's distribution: a statistical test, on synthetic targets and on the real model.

Statistics: Pearson chi-square tests, p-values from the regularised upper incomplete gamma function
(`torch.special.gammaincc`). A two-sample test uses the 2 x K table of category counts; categories whose expected
count would be under 5 are pooled, and the pool is dropped if it is still under 5 (a test conditional on the other
categories, as valid under the null). A comparison of continuations makes 5 tests (the whole continuation, then each
of its 4 positions), each must give p > ALPHA = 1e-4, so a comparison false-alarms with probability at most 5e-4
(Bonferroni). The file makes 5 such model comparisons and 3 synthetic ones (2 tests at ALPHA / 2 each): with fresh
seeds it would fail by chance with probability at most 5 x 5e-4 + 3 x 1e-4 = 2.8e-3. The seeds are fixed, so the
outcome is deterministic. The "flawed verifier" tests assert a rejection (some p < ALPHA) at the same level.

The model tests draw 4-token continuations of a repetitive raw-text prompt (temperature 0.7, top-k 3, prompt n-grams
in the pool, W = N = G = 3), where lookahead steps often accept several tokens. The reference law is that of plain
autoregressive sampling, computed exactly by walking the model's top-k tree; a smaller set of real
`greedy_generate(sampling=...)` runs checks that the real AR sampler agrees with it. The lookahead samples all come
from the real `lookahead_generate`; prompt lookup decoding's and Jacobi decoding's from the real engines too (the
same `verify_sampled`, other drafts: text copied from the prompt, a guess block). To make thousands of runs
affordable on a CPU, the model sits behind `MemoLM`:
each forward pass is computed once per exact call history of its KV cache (the engines are deterministic functions of
that history), and later runs with the same history get the stored logits. A test checks that memoised and plain runs
give the same tokens, seed for seed.
"""

import copy

import numpy as np
import pytest
import torch

import lade_core.decoding
from lade_core.autoregressive import greedy_generate
from lade_core.config import DraftConfig, LookaheadConfig, MethodSpec, Sampling
from lade_core.jacobi import jacobi_generate
from lade_core.lookahead import lookahead_generate
from lade_core.methods import decode
from lade_core.sampling import Sampler, warp
from lade_core.verify import Verdict, verify_sampled

ALPHA = 1e-4
PROMPT = "one two three four one two three four one two three four one two three"
CONFIG = LookaheadConfig(window=3, ngram=3, guess=3, pool="prompt")
NEW_TOKENS = 4


def sampling(seed: int) -> Sampling:
    return Sampling(temperature=0.7, top_k=3, sample_seed=seed)


# -- statistics ----------------------------------------------------------------------------------------------------
def chi2_sf(stat: float, df: int) -> float:
    if df <= 0:
        return 1.0
    return float(torch.special.gammaincc(torch.tensor(df / 2, dtype=torch.float64), torch.tensor(stat / 2)))


def two_sample_p(a: list, b: list) -> float:
    """Chi-square test that samples `a` and `b` (lists of hashable categories) come from one distribution."""
    cats = sorted(set(a) | set(b), key=repr)
    index = {c: i for i, c in enumerate(cats)}
    table = np.stack([np.bincount([index[x] for x in s], minlength=len(cats)) for s in (a, b)]).astype(float)
    small = table.sum(0) * min(len(a), len(b)) / (len(a) + len(b)) < 5
    table = np.column_stack([table[:, ~small], table[:, small].sum(1)])
    if table[:, -1].sum() * min(len(a), len(b)) / (len(a) + len(b)) < 5:
        table = table[:, :-1]
    expected = table.sum(1, keepdims=True) * table.sum(0) / table.sum()
    return chi2_sf(float(((table - expected) ** 2 / expected).sum()), table.shape[1] - 1)


def goodness_of_fit_p(samples: np.ndarray, probs: np.ndarray) -> float:
    """Chi-square test that integer `samples` follow `probs` (categories of probability zero must not occur)."""
    observed = np.bincount(samples, minlength=len(probs))
    if observed[probs == 0].any():
        return 0.0
    expected = probs[probs > 0] * len(samples)
    return chi2_sf(float(((observed[probs > 0] - expected) ** 2 / expected).sum()), int((probs > 0).sum()) - 1)


def continuation_ps(a: list[tuple], b: list[tuple]) -> list[float]:
    """p-values of the whole continuations, then of each position's token."""
    return [two_sample_p(a, b)] + [two_sample_p(_at(a, i), _at(b, i)) for i in range(NEW_TOKENS)]


def _at(samples: list[tuple], i: int) -> list[int]:
    return [s[i] if i < len(s) else -1 for s in samples]  # -1: the continuation ended with EOS before i


# -- a verifier with a deliberate flaw -------------------------------------------------------------------------------
def flawed_verify(flaw: str):
    """`verify_sampled` with one flaw. "keep": rejected tokens stay in the distribution drawn from at the end, so
    the drafts get their probability twice. "scale": after a rejection the next draft is accepted with its plain
    probability, not renormalised by the mass left."""

    def verify(candidates, target, sampler):
        alive, k, emitted = list(range(len(candidates))), 0, []
        while alive and k < len(candidates[0]):
            probs = target(alive[0], k)
            residual, mass = probs.copy(), 1.0
            for c in alive:
                y = candidates[c][k]
                if sampler.uniform() < residual[y] / (1.0 if flaw == "scale" else max(mass, 1e-300)):
                    break
                mass -= residual[y]
                residual[y] = 0.0
            else:
                return _verdict(candidates, alive, emitted + [sampler.draw(probs if flaw == "keep" else residual)])
            emitted.append(int(y))
            alive, k = [c for c in alive if candidates[c][k] == y], k + 1
        return _verdict(candidates, alive, emitted + [sampler.draw(target(alive[0] if alive else 0, k))])

    return verify


def _verdict(candidates, alive, emitted):
    matched = len(emitted) - 1
    winner = alive[0] if matched else -1
    return Verdict(tuple(matched if c == winner else 0 for c in range(len(candidates))), winner, tuple(emitted))


# -- unit tests on synthetic distributions ----------------------------------------------------------------------------
TARGETS = (np.array([0.4, 0.25, 0.15, 0.1, 0.1, 0.0]), np.array([0.05, 0.15, 0.3, 0.5, 0.0, 0.0]))
DRAFTS = ([(0, 1)], [(0, 3), (1, 2), (0, 2), (5, 0)], [(1, 1), (2, 2), (3, 3), (4, 4)])


def synthetic_tokens(verify, drafts, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The first emitted token of n steps, and the second one of the steps that emitted two or more."""
    sampler, first, second = Sampler(seed), [], []
    target = lambda c, k: TARGETS[min(k, 1)]  # noqa: E731
    for _ in range(n):
        emitted = verify(drafts, target, sampler).accepted
        first.append(emitted[0])
        if len(emitted) > 1:
            second.append(emitted[1])
    return np.array(first), np.array(second)


@pytest.mark.parametrize("drafts", DRAFTS)
def test_verify_sampled_emits_the_target_law_whatever_the_drafts(drafts):
    first, second = synthetic_tokens(verify_sampled, drafts, 60_000, seed=len(drafts))
    assert goodness_of_fit_p(first, TARGETS[0]) > ALPHA / 2
    assert goodness_of_fit_p(second, TARGETS[1]) > ALPHA / 2
    assert len(second) > 10_000


@pytest.mark.parametrize("flaw", ["keep", "scale"])
def test_flawed_verifiers_are_caught(flaw):
    first, _ = synthetic_tokens(flawed_verify(flaw), DRAFTS[1], 60_000, seed=7)
    assert goodness_of_fit_p(first, TARGETS[0]) < ALPHA


# -- the real model ------------------------------------------------------------------------------------------------
class Replay:
    """Stands for a KV cache inside `MemoLM`: the calls made on it since it was new."""

    def __init__(self, history: tuple = ()):
        self.history = history


class MemoLM:
    """The real `LM`, each forward computed once per exact cache history; same interface as `LM` for the engines."""

    def __init__(self, lm):
        self.lm, self.device, self.eos_ids, self.max_positions = lm, lm.device, lm.eos_ids, lm.max_positions
        self.kernels = lm.kernels
        self.logits: dict[tuple, torch.Tensor] = {}
        self.saved: dict[tuple, object] = {}  # history -> the real cache it leads to

    def new_cache(self) -> Replay:
        return Replay()

    def sync(self) -> None:
        pass

    @property
    def used(self) -> str:
        return self.lm.used

    def prefill(self, cache, ids):
        return self._forward(cache, ("prefill", tuple(ids)))

    def decode_one(self, cache, token, position):
        return self._forward(cache, ("decode_one", int(token), int(position)))

    def step_forward(self, cache, tokens, layout):
        return self._forward(cache, ("step_forward", tuple(tokens), layout))

    def keep_in_cache(self, cache, start, rows):
        key = cache.history + (("keep_in_cache", start, tuple(rows)),)
        if key not in self.saved:
            self._run(cache.history, key[-1])
        cache.history = key

    def _forward(self, cache, call) -> torch.Tensor:
        key = cache.history + (call,)
        if key not in self.logits:
            self.logits[key] = self._run(cache.history, call)
        cache.history = key
        return self.logits[key]

    def _run(self, history: tuple, call: tuple):
        real = copy.deepcopy(self.saved[history]) if history else self.lm.new_cache()
        name, *args = call
        if name == "step_forward":
            args = [list(args[0]), args[1]]
        elif name in ("prefill", "keep_in_cache"):
            args[-1] = list(args[-1])
        out = getattr(self.lm, name)(real, *args)
        self.saved[history + (call,)] = real
        return out


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Thousands of runs make the engines' small vector ops (warp over the vocabulary) dominate; with two threads
    each of them waits on a thread barrier, which costs ~20 ms instead of ~0.5 ms on a busy machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def memo(lm):
    return MemoLM(lm)


@pytest.fixture(scope="module")
def prompt_ids(lm):
    return lm.encode_prompt(PROMPT, chat=False)


@pytest.fixture(scope="module")
def exact_law(memo, prompt_ids) -> dict[tuple, float]:
    return autoregressive_law(memo, prompt_ids)


def autoregressive_law(memo, prompt_ids) -> dict[tuple, float]:
    """{continuation: probability} under plain sampling, by walking the model's top-k tree (EOS ends a branch)."""
    law = {}

    def walk(cache, prefix, prob, logits):
        probs = warp(logits, sampling(0))
        for t in map(int, np.flatnonzero(probs)):
            if len(prefix) + 1 == NEW_TOKENS or t in memo.eos_ids:
                law[prefix + (t,)] = prob * probs[t]
            else:
                branch = Replay(cache.history)
                walk(branch, prefix + (t,), prob * probs[t], memo.decode_one(branch, t, len(prompt_ids) + len(prefix)))

    cache = memo.new_cache()
    walk(cache, (), 1.0, memo.prefill(cache, prompt_ids))
    return law


def exact_samples(law: dict, n: int, seed: int) -> list[tuple]:
    keys = list(law)
    probs = np.array([law[k] for k in keys])
    return [keys[i] for i in np.random.default_rng(seed).choice(len(keys), size=n, p=probs / probs.sum())]


def lookahead_samples(memo, prompt_ids, n: int) -> tuple[list[tuple], list]:
    runs = [lookahead_generate(memo, prompt_ids, CONFIG, NEW_TOKENS, sampling=sampling(s)) for s in range(n)]
    return [r.tokens for r in runs], [step for r in runs for step in r.steps[1:]]


@pytest.fixture(scope="module")
def lookahead_runs(memo, prompt_ids):
    return lookahead_samples(memo, prompt_ids, 3000)


@pytest.fixture(scope="module")
def autoregressive_samples(memo, prompt_ids) -> list[tuple]:
    return [greedy_generate(memo, prompt_ids, NEW_TOKENS, sampling=sampling(10**6 + s)).tokens for s in range(800)]


def test_lookahead_sampling_has_the_autoregressive_law(lookahead_runs, exact_law):
    assert min(continuation_ps(lookahead_runs[0], exact_samples(exact_law, 30_000, seed=1))) > ALPHA


def test_lookahead_sampling_accepts_several_tokens_per_step(lookahead_runs):
    steps = lookahead_runs[1]
    multi = sum(len(s.accepted) > 1 for s in steps)
    accepted = sum(d.accepted for s in steps for d in s.draws)
    assert multi > 0.3 * len(steps) and accepted > 0.5 * len(steps), (multi, accepted, len(steps))


def test_the_real_autoregressive_sampler_agrees(autoregressive_samples, lookahead_runs, exact_law):
    assert min(continuation_ps(autoregressive_samples, exact_samples(exact_law, 30_000, seed=2))) > ALPHA
    assert min(continuation_ps(lookahead_runs[0], autoregressive_samples)) > ALPHA


@pytest.fixture(scope="module")
def relative_runs(memo, prompt_ids):
    """Prompt lookup (K = 4) and Jacobi decoding (W = 3) samples of the same continuations, with their steps."""
    pld = [
        decode(memo, prompt_ids, MethodSpec("pld", draft=DraftConfig(tokens=4)), NEW_TOKENS, sampling(s))
        for s in range(2000)
    ]
    jacobi = [jacobi_generate(memo, prompt_ids, 3, NEW_TOKENS, sampling=sampling(s)) for s in range(2000)]
    return {"pld": pld, "jacobi": jacobi}


@pytest.mark.soak  # 40 s of sampling; lookahead's own law stays in `make test`
@pytest.mark.parametrize("engine", ["pld", "jacobi"])
def test_the_relatives_sample_with_the_autoregressive_law(relative_runs, exact_law, engine):
    """Prompt lookup accepts several copied tokens per step here (a repetitive prompt), Jacobi decoding some guesses:
    both keep the model's law. A Jacobi sampler that ignored the temperature would draw the argmax path far more
    often than 0.7 gives it, and fail here."""
    runs = relative_runs[engine]
    steps = [s for r in runs for s in r.steps[1:]]
    assert sum(len(s.accepted) > 1 for s in steps) > (0.3 if engine == "pld" else 0.02) * len(steps)
    seed = {"pld": 4, "jacobi": 5}[engine]
    assert min(continuation_ps([r.tokens for r in runs], exact_samples(exact_law, 30_000, seed=seed))) > ALPHA


def test_a_flawed_verifier_is_rejected(memo, prompt_ids, exact_law, monkeypatch):
    monkeypatch.setattr(lade_core.decoding, "verify_sampled", flawed_verify("keep"))
    samples, _ = lookahead_samples(memo, prompt_ids, 500)
    assert min(continuation_ps(samples, exact_samples(exact_law, 30_000, seed=3))) < ALPHA


def test_same_seed_same_output_and_the_memo_is_exact(lm, memo, prompt_ids):
    def lookahead(m, seed):
        return lookahead_generate(m, prompt_ids, CONFIG, NEW_TOKENS, sampling=sampling(seed))

    def autoregressive(m, seed):
        return greedy_generate(m, prompt_ids, NEW_TOKENS, sampling=sampling(seed))

    for engine in (lookahead, autoregressive):
        for seed in (0, 3):
            assert engine(lm, seed).tokens == engine(memo, seed).tokens == engine(memo, seed).tokens
        assert len({engine(memo, seed).tokens for seed in range(20)}) > 1
    assert [len(s.accepted) for s in lookahead(memo, 0).steps] == [1, 3]  # a 3-token step was compared
    assert [len(s.accepted) for s in lookahead(memo, 3).steps] == [1, 2, 1]


def test_temperature_zero_is_greedy(memo, prompt_ids):
    greedy = greedy_generate(memo, prompt_ids, 8).tokens
    assert lookahead_generate(memo, prompt_ids, CONFIG, 8).tokens == greedy
    assert lookahead_generate(memo, prompt_ids, CONFIG, 8, sampling=Sampling(top_k=3, sample_seed=5)).tokens == greedy
    assert greedy_generate(memo, prompt_ids, 8, sampling=Sampling(sample_seed=9)).tokens == greedy
