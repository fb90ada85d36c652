"""Property-based tests (hypothesis): the settings, the trace loader, the pool and the step layout hold their
contracts on any input, not just the hand-picked cases of the other test files.

Settings and traces either load into a valid object or raise their own error type with a readable message; the pool
keeps its eviction policy; the mask keeps its visibility rules. No model is needed: the trace tests mutate a shipped
run. Examples pinned with `@example` are bugs these properties once found.
"""

import copy
import json
import math

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lade_core.config import MAX_GUESS, MAX_NGRAM, MAX_WINDOW, POOL_POLICIES, ConfigError, LookaheadConfig, Sampling
from lade_core.layout import StepLayout
from lade_core.paths import RUNS
from lade_core.pool import NGramPool
from lade_core.trace import SCHEMA, VERSION, RunTrace
from lade_core.tracefile import TraceError, parse_run

RUN_TEXT = (RUNS / "code-class-W7N4G7.json").read_text()
RUN_DOC = json.loads(RUN_TEXT)
HUGE = 10**5000  # too long for str(): Python refuses to print ints over 4300 digits

# How many examples each property draws comes from the hypothesis profile conftest.py loads: `make test` runs the
# thorough one, `make test-fast` the quick one; the mutated-trace property, the broadest, draws twice as many.
FAST = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
BROAD = settings(FAST, max_examples=2 * settings.default.max_examples)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
anything = st.one_of(
    st.integers(-5, 300),
    st.integers(),
    st.sampled_from([2**63 - 1, 2**63, -(2**63), 10**400, -(10**400)]),
    st.booleans(),
    st.floats(),
    st.text(max_size=6),
    st.none(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


# 1. settings ---------------------------------------------------------------------------------------------------


def _int_ok(v, low, high) -> bool:
    return type(v) is int and low <= v <= high


def _float_ok(v, low, high) -> bool:
    if type(v) not in (int, float) or (type(v) is float and not math.isfinite(v)):
        return False
    return low <= v <= high


CONFIG_RULES = {
    "window": lambda v: _int_ok(v, 1, MAX_WINDOW),
    "ngram": lambda v: _int_ok(v, 2, MAX_NGRAM),
    "guess": lambda v: _int_ok(v, 0, MAX_GUESS),
    "pool": lambda v: type(v) is str and v in POOL_POLICIES,
    "tree": lambda v: type(v) is bool,
    "adaptive": lambda v: type(v) is bool,
    "window_seed": lambda v: _int_ok(v, 0, 2**63 - 1),
}
SAMPLING_RULES = {
    "temperature": lambda v: _float_ok(v, 0.0, 100.0),
    "top_k": lambda v: _int_ok(v, 0, 10**7),
    "top_p": lambda v: _float_ok(v, 0.0, 1.0) and v > 0,
    "sample_seed": lambda v: _int_ok(v, 0, 2**63 - 1),
}
CONFIG_VALUES = {
    "window": st.integers(1, MAX_WINDOW) | anything,
    "ngram": st.integers(2, MAX_NGRAM) | anything,
    "guess": st.integers(0, MAX_GUESS) | anything,
    "pool": st.sampled_from(POOL_POLICIES) | anything,
    "tree": st.booleans() | anything,
    "adaptive": st.booleans() | anything,
    "window_seed": st.integers(0, 2**63 - 1) | anything,
}
SAMPLING_VALUES = {
    "temperature": st.floats(0.0, 100.0) | anything,
    "top_k": st.integers(0, 10**7) | anything,
    "top_p": st.floats(0.0, 1.0) | anything,
    "sample_seed": st.integers(0, 2**63 - 1) | anything,
}


def _build(cls, rules: dict, kwargs: dict):
    """Construct; check the object against the documented ranges, or the error against the fields at fault."""
    bad = [name for name, ok in rules.items() if name in kwargs and not ok(kwargs[name])]
    try:
        obj = cls(**kwargs)
    except ConfigError as exc:
        assert bad, f"valid settings {kwargs!r} were refused: {exc}"
        labels = {
            "window": "window (W)",
            "ngram": "ngram (N)",
            "guess": "guess (G)",
            "pool": "pool policy",
            "window_seed": "window seed",
            "sample_seed": "sampling seed",
            "top_p": "top-p",
        }
        assert any(labels.get(name, name) in str(exc) for name in bad), f"{exc} names none of {bad}"
        return None
    assert not bad, f"{cls.__name__} accepted invalid {bad}"
    assert all(ok(getattr(obj, name)) for name, ok in rules.items())
    return obj


@FAST
@given(st.fixed_dictionaries({}, optional=CONFIG_VALUES))
@example({"window": HUGE})
def test_lookahead_config_is_valid_or_names_the_field(kwargs):
    cfg = _build(LookaheadConfig, CONFIG_RULES, kwargs)
    if cfg is not None:
        assert cfg.levels == cfg.ngram - 1 >= 1
        assert cfg.tokens_per_forward == 1 + (cfg.window + cfg.guess) * (cfg.ngram - 1)
        assert LookaheadConfig.from_dict(cfg.to_dict()) == cfg


@FAST
@given(st.fixed_dictionaries({}, optional=SAMPLING_VALUES))
@example({"temperature": 10**400})
@example({"top_k": HUGE})
def test_sampling_is_valid_or_names_the_field(kwargs):
    s = _build(Sampling, SAMPLING_RULES, kwargs)
    if s is not None:
        assert s.greedy == (s.temperature == 0)
        assert Sampling.from_dict(s.to_dict()) == s


def _settings_dicts(values: dict):
    keys = st.sampled_from(sorted(values)) | st.text(max_size=4) | st.integers(-2, 2)
    return json_values | st.fixed_dictionaries({}, optional=values) | st.dictionaries(keys, anything, max_size=4)


@FAST
@given(
    st.sampled_from(
        [(LookaheadConfig, CONFIG_RULES, CONFIG_VALUES), (Sampling, SAMPLING_RULES, SAMPLING_VALUES)]
    ).flatmap(lambda c: st.tuples(st.just(c), _settings_dicts(c[2])))
)
@example(((LookaheadConfig, CONFIG_RULES, CONFIG_VALUES), {1: 2, "evil": 3}))
@example(((Sampling, SAMPLING_RULES, SAMPLING_VALUES), {"x": 1, 2: 3}))
def test_from_dict_is_valid_or_config_error(case):
    (cls, rules, _), data = case
    if not isinstance(data, dict) or set(data) - set(rules):
        try:
            cls.from_dict(data)
        except ConfigError as exc:
            assert "must be an object" in str(exc) or "unknown" in str(exc)
            return
        raise AssertionError(f"{cls.__name__}.from_dict accepted {data!r}")
    direct = _build(cls, rules, data)
    try:
        loaded = cls.from_dict(data)
    except ConfigError:
        assert direct is None
    else:
        assert loaded == direct


# 2. the trace loader -------------------------------------------------------------------------------------------


def _check_loaded(text, **kw) -> RunTrace | None:
    """parse_run gives a valid, round-tripping RunTrace or a TraceError with a message; nothing else."""
    try:
        run = parse_run(text, **kw)
    except TraceError as exc:
        assert str(exc).strip()
        return None
    assert parse_run(run.to_json()) == run
    for method in (*(lane.run for lane in run.all_lanes), run.baseline):
        assert sum(len(s.accepted) for s in method.steps) == len(method.tokens)
        for s in method.steps:
            assert -1 <= s.winner < len(s.candidates) and len(s.predictions) == len(s.candidates)
            assert 0 <= s.n_accepted_from_candidate <= max(map(len, s.candidates), default=0)
            assert s.n_input == (0 if s.kind == "prefill" else 1 if s.kind == "autoregressive" else s.layout.size)
    return run


def test_shipped_runs_load_and_round_trip():
    for path in sorted(RUNS.glob("*.json")):
        assert _check_loaded(path.read_text()) is not None, path.name


@FAST
@given(st.text() | st.binary())
@example("[" * 100_000)
@example("1" * 5000)
@example(b"\xff\xfe{")
def test_random_text_is_refused_cleanly(text):
    _check_loaded(text)


def _with_header(run) -> dict:
    return {"schema": SCHEMA, "version": VERSION, "run": run}


RANDOM_RUNS = json_values | st.fixed_dictionaries(dict.fromkeys(RUN_DOC["run"], json_values))  # right keys, any values


@FAST
@given(json_values | st.builds(_with_header, RANDOM_RUNS))
def test_random_json_is_refused_cleanly(value):
    _check_loaded(json.dumps(value))


@FAST
@given(st.integers(0, len(RUN_TEXT) - 1))
def test_truncated_trace_is_refused(cut):
    assert _check_loaded(RUN_TEXT[:cut]) is None


@FAST
@given(anything | json_values)
def test_only_a_readable_version_loads(version):
    """A version-2 body (a shipped run with its sampling seed under the old name `seed`) loads as version 2 only:
    not as version 1 (another layout), not as the current version (whose sampling seed is `sample_seed`), nor as
    anything else."""
    assert RUN_DOC["version"] == VERSION == 5
    sampling = dict(RUN_DOC["run"]["sampling"])
    sampling["seed"] = sampling.pop("sample_seed")
    doc = dict(RUN_DOC, version=version, run=dict(RUN_DOC["run"], sampling=sampling))
    loaded = _check_loaded(json.dumps(doc))
    assert (loaded is not None) == (type(version) is int and version == 2)


@FAST
@given(st.integers(0, 2 * len(RUN_TEXT)))
def test_size_limit(max_bytes):
    assert (_check_loaded(RUN_TEXT, max_bytes=max_bytes) is None) == (len(RUN_TEXT) > max_bytes)


REPLACEMENTS = st.one_of(
    json_values,
    st.sampled_from([None, -1, 0, 1, 10**400, 1e308, -0.0, "", [], {}, [[]], [-1], True, "7"]),
)


def _field_paths(node, path=()):
    """Paths to every value held under a dict key, token_text entries left out (there are many, all alike)."""
    if isinstance(node, dict) and path[-1:] != ("token_text",):
        for key, value in node.items():
            yield path + (key,)
            yield from _field_paths(value, path + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _field_paths(value, path + (i,))


STEP_PATHS = [p for p in _field_paths(RUN_DOC) if "steps" in p]
RUN_PATHS = [p for p in _field_paths(RUN_DOC) if "steps" not in p and p[0] == "run"] + [("run", "token_text", "198")]
FIELD_PATHS = st.sampled_from(STEP_PATHS) | st.sampled_from(RUN_PATHS)  # as many draws in the steps as outside


@st.composite
def mutated_docs(draw):
    """The shipped run with one to three edits: a field dropped, added, replaced, retyped, wrapped or emptied,
    or the same done to an item a few levels further down (a row, a token)."""
    doc = copy.deepcopy(RUN_DOC)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(FIELD_PATHS)
        try:
            parent = doc
            for key in path[:-1]:
                parent = parent[key]
            key, node = path[-1], parent[path[-1]]
        except (KeyError, IndexError, TypeError):  # an earlier edit removed or retyped it
            continue
        while isinstance(node, (dict, list)) and node and draw(st.booleans()):
            keys = sorted(node) if isinstance(node, dict) else range(len(node))
            parent, key = node, draw(st.sampled_from(keys))
            node = parent[key]
        op = draw(st.sampled_from(["drop", "extra", "replace", "str", "wrap", "empty", "negate", "float"]))
        if op == "drop":
            del parent[key]
        elif op == "extra" and isinstance(parent, dict):
            parent[f"{key}_x"] = node
        elif op == "replace":
            parent[key] = draw(REPLACEMENTS)
        elif op == "str":
            parent[key] = json.dumps(node)
        elif op == "wrap":
            parent[key] = [node]
        elif op == "empty":
            parent[key] = type(node)()
        elif op == "negate" and isinstance(node, (int, float)):
            parent[key] = -node - 1
        elif op == "float" and isinstance(node, int) and abs(node) < 2**53:
            parent[key] = node + 0.5
    return doc


@BROAD
@given(mutated_docs())
def test_mutated_trace_loads_or_is_refused_cleanly(doc):
    _check_loaded(json.dumps(doc))


@FAST
@given(FIELD_PATHS, REPLACEMENTS)
@example(("run", "parallel", "wall_s"), 10**400)
@example(("run", "parallel", "steps", 5, "forward_s"), float("nan"))
@example(("run", "sampling", "temperature"), 10**400)
@example(("run", "token_text", "²"), "x")
@example(("run", "token_text", "1" * 5000), "x")
@example(("run", "parallel", "steps", 5, "winner"), 99)
@example(("run", "parallel", "steps", 0, "winner"), 0)
@example(("run", "parallel", "steps", 5, "predictions"), [])
def test_one_replaced_value_loads_or_is_refused_cleanly(path, value):
    doc = copy.deepcopy(RUN_DOC)
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    _check_loaded(json.dumps(doc))


# 3. the n-gram pool --------------------------------------------------------------------------------------------


@FAST
@given(
    st.integers(0, 4), st.integers(2, 4).flatmap(lambda n: st.lists(st.tuples(*[st.integers(0, 3)] * n), max_size=60))
)
def test_pool_keeps_its_policy(per_key, ngrams):
    pool, model = NGramPool(per_key), {}
    for ng in ngrams:
        before = {(k, *c) for k, conts in pool.items().items() for c in conts}
        gone = pool.add(ng)
        key, cont = ng[0], ng[1:]
        if per_key:
            bucket = [cont] + [c for c in model.get(key, []) if c != cont]
            model[key], expected = bucket[:per_key], bucket[per_key:]
            assert gone == ((key, *expected[0]) if expected else None)
        else:
            assert gone is None
        after = {(k, *c) for k, conts in pool.items().items() for c in conts}
        assert before - after == ({gone} if gone else set()) and gone not in after
        assert (ng in after) == bool(per_key)
        assert pool.items() == {k: v for k, v in model.items() if v}
        assert len(pool) == len(after) == sum(len(v) for v in model.values())
        for k, conts in pool.items().items():
            assert len(conts) <= per_key and len(set(conts)) == len(conts)
            assert pool.lookup(k) == conts and pool.lookup(k, 1) == conts[:1]


@FAST
@given(st.integers(0, 4), st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), max_size=30))
def test_add_all_reports_evictions_in_order(per_key, ngrams):
    one_by_one = NGramPool(per_key)
    evicted = [g for g in map(one_by_one.add, ngrams) if g is not None]
    together = NGramPool(per_key)
    assert together.add_all(ngrams) == evicted
    assert together.items() == one_by_one.items()


# 4. the step layout --------------------------------------------------------------------------------------------


@FAST
@given(st.integers(0, 4), st.integers(0, 6), st.integers(0, 4), st.integers(0, 4), st.data())
def test_layout_mask_rules(levels, window, candidates, cand_len, data):
    tree = data.draw(st.booleans())
    cands = [tuple(data.draw(st.integers(0, 3)) for _ in range(cand_len)) for _ in range(candidates)]
    lay = StepLayout.for_candidates(levels, window, cands, cand_len, tree)
    mask, pos = lay.mask(), lay.positions()
    size = 1 + levels * window + lay.nodes
    assert lay.nodes == (len({c[: k + 1] for c in cands for k in range(cand_len)}) if tree else candidates * cand_len)
    assert lay.size == size and mask.shape == (size, size) and mask.dtype == bool and pos.shape == (size,)
    assert mask.diagonal().all() and mask[:, 0].all() and pos[0] == 0
    win, cand = slice(1, lay.verify_start), slice(lay.verify_start, size)
    assert not mask[win, cand].any() and not mask[cand, win].any()
    for q in range(size):
        assert sorted(pos[mask[q]].tolist()) == list(range(pos[q] + 1))
    assert len(lay.labels()) == size
    for _ in range(min(size * size, 10)):
        q, k = data.draw(st.integers(0, size - 1)), data.draw(st.integers(0, size - 1))
        assert (" sees " in lay.reason(q, k)) == bool(mask[q, k])
