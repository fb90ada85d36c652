"""The engine's small parts, by hand: the Jacobi window (warm-up, columns into n-grams, resizing), fixed and adaptive
step sizes (never past the context; adaptive falls back when guesses stop paying), and the settings' declared-once
checks (every message names the field, the value and the range). No model."""

import pytest

from lade_core import ConfigError, LookaheadConfig, Sampling, StepCost
from lade_core.config import jacobi_config
from lade_core.schema import SchemaError, check_bounds
from lade_core.sizes import AdaptiveSizes, FixedSizes, Sizes, size_policy
from lade_core.trace import Verdict
from lade_core.window import JacobiWindow


def test_window_docstring_example():
    window = JacobiWindow([10, 11], width=2, ngram=3, window_seed=0)
    a, b = window.levels[0]
    assert window.update((3, 4)) == [] and window.full
    assert window.update((5, 6)) == [(a, 3, 5), (b, 4, 6)]
    assert window.levels == [(3, 4), (5, 6)]


def test_window_resizes_and_pauses():
    window = JacobiWindow([7], width=3, ngram=3, window_seed=1)
    window.update((1, 2, 3))
    window.resize(2)
    assert window.levels == [(7, 7), (1, 2)]
    window.resize(0)  # a paused branch keeps its state
    assert window.levels == [(7, 7), (1, 2)]
    window.resize(4)
    assert [len(level) for level in window.levels] == [4, 4] and window.levels[1][:2] == (1, 2)


def test_fixed_sizes_stop_at_the_context():
    sizes = FixedSizes(LookaheadConfig(7, 4, 7), context=100)
    assert sizes.choose(50, 3, 5) == Sizes(width=7, guess=7)
    assert sizes.choose(92, 3, 5) == (5, 7)  # the newest level reaches p + L + W - 1 <= 99
    assert sizes.choose(98, 3, 5) == (0, 0)  # no room for the window, nor for a candidate of N-1 = 3


def test_adaptive_sizes_fall_back_when_guesses_stop_paying():
    """On a steep cost curve, candidates that never match are dropped; matches bring them back."""
    steep = StepCost(((1, 1.0), (2, 1.1), (40, 3.0)))
    sizes = AdaptiveSizes(LookaheadConfig(4, 4, 4, adaptive=True), steep, context=10_000, decay=0.5, probe=10**6)
    for _ in range(20):
        width, guess = sizes.choose(10, 3, 4)
        sizes.observe(Verdict((0,) * guess, -1, (1,)), 1 + width * 3 + guess * 3)
    assert sizes.choose(10, 3, 4)[1] == 0
    for _ in range(30):
        width, guess = sizes.choose(10, 3, 4)
        sizes.observe(Verdict((3,) * max(guess, 1), 0, (1, 2, 3, 4)), 1 + width * 3 + guess * 3)
    assert sizes.choose(10, 3, 4)[1] >= 1


def test_the_window_earns_only_from_candidates_it_harvested():
    """observe() credits the window with a winner's matched tokens only where that candidate came from the window:
    a text n-gram winning 3 tokens leaves its earning decaying, a window n-gram winning 3 raises it (0.5 -> 1.6)."""
    sizes = AdaptiveSizes(
        LookaheadConfig(4, 4, 2, adaptive=True), StepCost(((1, 1.0), (40, 2.0))), context=1000, decay=0.5
    )
    won = Verdict((3, 0), 0, (1, 2, 3, 4))
    sizes.observe(won, 20, ("text", "window"))
    assert sizes.window_gain == 0.25
    sizes.observe(won, 20, ("window", "text"))
    assert sizes.window_gain == 0.5 * 0.25 + 0.5 * 3
    sizes.observe(Verdict((0, 0), -1, (1,)), 20, ("window", "window"))  # no winner: nothing earned
    assert sizes.window_gain == 0.5 * (0.5 * 0.25 + 0.5 * 3)


def test_adaptive_needs_a_step_cost():
    with pytest.raises(ValueError, match="step cost"):
        size_policy(LookaheadConfig(adaptive=True), None, 100)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"window": 0}, "window (W) must be between 1 and 256, got 0"),
        ({"ngram": 17}, "ngram (N) must be between 2 and 16, got 17"),
        ({"guess": -1}, "guess (G) must be between 0 and 256, got -1"),
        ({"window": 2.5}, "window (W) must be a whole number, got 2.5"),
        ({"window": True}, "window (W) must be a whole number, got True"),
        ({"window": 10**400}, "a 1329-bit integer"),
        ({"pool": "weird"}, "pool policy must be one of paper, output, prompt, got 'weird'"),
        ({"tree": "yes"}, "tree must be true or false"),
    ],
)
def test_config_messages_name_field_value_and_range(kwargs, message):
    with pytest.raises(ConfigError) as err:
        LookaheadConfig(**kwargs)
    assert message in str(err.value)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"temperature": -1}, "temperature must be between 0 and 100, got -1"),
        ({"temperature": float("nan")}, "temperature must be a finite number"),
        ({"top_p": 0.0}, "top-p must be above 0"),
        ({"sample_seed": -5}, "sampling seed must be between 0"),
    ],
)
def test_sampling_messages(kwargs, message):
    with pytest.raises(ConfigError) as err:
        Sampling(**kwargs)
    assert message in str(err.value)


def test_public_bounds_are_tighter_ranges_over_the_same_fields():
    """The app's limits reuse the declarations: same labels, same message shape, narrower ranges."""
    with pytest.raises(SchemaError, match=r"window \(W\) must be between 1 and 32, got 40"):
        check_bounds(LookaheadConfig(window=40), {"window": (1, 32)})
    check_bounds(LookaheadConfig(window=32), {"window": (1, 32)})


def test_from_dict_round_trips_and_refuses_unknown_fields():
    config = LookaheadConfig(5, 3, 2, pool="output", tree=True, window_seed=4)
    assert LookaheadConfig.from_dict(config.to_dict()) == config
    with pytest.raises(ConfigError, match="unknown fields: 'seed'"):
        LookaheadConfig.from_dict({**config.to_dict(), "seed": 1})


def test_jacobi_is_a_one_level_window_without_candidates():
    config = jacobi_config(6)
    assert (config.window, config.ngram, config.guess, config.tokens_per_forward) == (6, 2, 0, 7)


def test_adaptive_window_is_as_wide_as_the_device_feeds_it_and_runs_only_if_it_pays():
    """A flat curve (a GPU on a big model) gets the whole window, a CPU's curve one column; a window whose n-grams
    win nothing is dropped where its tokens cost time, and kept where they are free."""
    config = LookaheadConfig(8, 4, 8, adaptive=True)
    flat = AdaptiveSizes(config, StepCost(((1, 1.0), (256, 1.03))), context=10_000, probe=10**6)
    cpu = AdaptiveSizes(config, StepCost(((1, 1.0), (4, 1.02), (8, 1.17), (16, 1.45))), context=10_000, probe=10**6)
    assert flat.window_width(3, 8) == 8 and cpu.window_width(3, 8) == 1
    for sizes in (flat, cpu):
        for _ in range(30):
            width, guess = sizes.choose(10, 3, 0)
            sizes.observe(Verdict((), -1, (1,)), 1 + width * 3)
    assert flat.choose(10, 3, 0)[0] == 8 and cpu.choose(10, 3, 0)[0] == 0
