"""The gallery's captions, rendered from their runs and read against an independent reading of the same runs: every
number a caption prints is the run's, every claim word ("parses", "identical", "faster", a repetition loop) is the
predicate it names, and a caption that names a fact its run does not have is refused rather than printed."""

import ast
import re
import string

import pytest

from app import captions, gallery, speed
from app.render import payload

NAMES = gallery.names()


def fields(name: str) -> set[str]:
    return {f.split("!")[0] for _, f, _, _ in string.Formatter().parse(gallery.entry(name)["caption"]) if f}


def output_text(run) -> tuple[str, list[tuple[int, int]]]:
    """The answer's text and, per step, the [start, end) of the characters it wrote."""
    text, spans = "", []
    for step in run.parallel.steps:
        start = len(text)
        text += "".join(run.token_text.get(t, "") for t in step.accepted)
        spans.append((start, len(text)))
    return text, spans


@pytest.mark.parametrize("name", NAMES)
def test_every_caption_is_filled_from_its_own_run(name):
    """Would catch a caption printing a fact that is missing ("None", an empty quote, a placeholder left open) or a
    number that is not the run's: tokens per step, W/N/G, steps and tokens as the run has them."""
    run, used = gallery.load(name), fields(name)
    text = gallery.caption(name)
    assert "None" not in text and "{" not in text and "''" not in text, text
    if "compression" in used:
        assert f"{round(run.parallel.compression, 2)} tokens per step" in text
    for key, value in (("W", run.config.window), ("N", run.config.ngram), ("G", run.config.guess)):
        if key in used:
            assert f"{key}={value}" in text or f"{value}" in text
    if "identical" in used:
        assert ("identical to" in text) == (run.parallel.tokens == run.baseline.tokens)
    if "parses" in used:
        block = re.search(r"```(?:python|py)\s*\n(.*?)(?:```|\Z)", output_text(run)[0], re.S)
        assert block, "a caption says how the Python block parses: the answer has one"
        try:
            ast.parse(block.group(1))
            assert "its Python block parses" in text
        except SyntaxError:
            assert "does not parse" in text


def test_the_loop_caption_reads_the_loop_off_the_text():
    """The repetition run's caption: the repeated line is a whole line of the answer that many times, and "from
    step k on" is the step that wrote the first character of its first copy (found here by searching the text)."""
    name = gallery.by_role("repetition") or next(n for n in NAMES if "loop_step" in fields(n))
    run = gallery.load(name)
    text, spans = output_text(run)
    got = captions.repetition(run)
    lines = [line.strip() for line in text.split("\n")]
    assert got["loop_count"] == lines.count(got["loop_line"]) >= 3
    first = re.search(rf"^[ \t]*{re.escape(got['loop_line'])}[ \t]*$", text, re.M)
    at = first.start() + len(first.group(0)) - len(first.group(0).lstrip())
    step = next(i for i, (a, b) in enumerate(spans) if a <= at < b)
    assert got["loop_step"] == run.parallel.steps[step].index
    assert f"from step {got['loop_step']} on" in gallery.caption(name)


def test_a_caption_claiming_a_loop_refuses_a_run_without_one():
    """Would catch the repetition caption printed over a re-recording that has no loop ("from step None on ... ''
    0 times"): the caption is refused with a message naming the missing fact."""
    name = next(n for n in NAMES if "loop_step" in fields(n))
    plain = gallery.load(gallery.by_role("lookahead"))
    assert captions.repetition(plain)["loop_step"] is None
    with pytest.raises(ValueError, match="loop_step"):
        gallery.caption(name, run=plain)


@pytest.mark.parametrize("name", NAMES)
def test_faster_or_slower_only_when_every_measurement_agrees(name):
    """The verdict word, read again from the definition app.speed states: the recording's speed-up (its lanes'
    summed step times) and every bench row of the same prompt and setting, all beyond the measured band on one side
    of 1; otherwise "about as fast". The page's payload carries the same verdict (the page decides nothing)."""
    run = gallery.load(name)
    seconds = lambda m: sum(s.forward_s + s.overhead_s + s.draft_s for s in m.steps)  # noqa: E731
    values = [seconds(run.baseline) / seconds(run.parallel), *captions.bench_speedups(run)]
    noise = speed.band(run)["ratio"]
    expected = (
        "faster than greedy"
        if min(values) > noise
        else "slower than greedy"
        if max(values) < 1 / noise
        else "about as fast as greedy"
    )
    assert speed.against_greedy(values, noise) == expected
    assert payload.speed(run)["lanes"]["parallel"]["verdict"] == expected
    if "on_cpu" in fields(name):
        assert expected in gallery.caption(name)


def test_the_lessons_race_runs_the_papers_lookahead_and_a_hybrid_is_named_one():
    """Chapter 6 says lookahead's guesses come from the model itself, yet its race ran lookahead with prompt
    lookup's copies among its candidates (`--lookup 10`): 48 of 50 accepted draft tokens were copies. The race the
    lesson shows runs the paper's method (no copies, the window's n-grams only), and a caption over a hybrid lane
    (tests/fixtures/hybrid-race.json, that recording) names it one."""
    from lade_core import parse_run
    from lade_core.paths import ROOT

    race = gallery.load(gallery.by_role("race"))
    lookahead = [lane for lane in race.all_lanes if lane.method == "lookahead"]
    assert lookahead and all(lane.config.lookup == 0 and lane.config.pool == "paper" for lane in lookahead)
    assert not any(s.copied for lane in lookahead for s in lane.run.steps)
    assert "the paper's lookahead (its window's n-grams only)" in gallery.caption(gallery.by_role("race"))
    hybrid = parse_run((ROOT / "tests" / "fixtures" / "hybrid-race.json").read_bytes())
    assert captions.facts(hybrid)["main_name"] == "lookahead with prompt lookup's copies among its candidates"


def test_the_noise_band_is_the_runs_own_device_never_recordings_made_elsewhere():
    """Chapter 8 and the captions called differences under 17% noise, a spread between four greedy recordings of one
    prompt made at different times beside different partner lanes (a systematic effect, not noise), while the browser
    race used another machine's 4% as its floor. The band of a run is now measured on its own device: its greedy
    steps' drift and the floor its machine measured in the same process, the wider; nothing else moves it, and the
    caption names that machine and says which spread set it."""
    from dataclasses import replace

    for name in NAMES:
        run = gallery.load(name)
        judged = speed.band(run)
        own, floor = speed.own_spread(run), run.machine.noise
        assert run.machine.recorded and floor >= 1, name  # every gallery run recorded its machine's floor
        assert judged["ratio"] == max(floor, own["ratio"] if own else 1.0), name
        assert {p["source"] for p in judged["parts"]} <= {"this run", "this run's device"}, name
        calmer = replace(run, machine=replace(run.machine, noise=1.0))
        assert speed.band(calmer)["ratio"] == (own["ratio"] if own else 1.0), name  # the floor alone moved it
        if "on_cpu" in fields(name):
            caption = gallery.caption(name)
            assert run.machine.description in caption and speed.band_words(judged) in caption, name


def test_a_race_whose_own_clock_drifted_is_judged_by_its_own_spread():
    """A live race on a loaded machine: the band of a live race comes from that race's own steps. Greedy's mean step
    time in the first half of its decoding steps against the second half is the drift of the clock during that race;
    where it is wider than its device's floor, it sets the band, the verdict calls a margin inside it "about as fast",
    and the words name it."""
    from dataclasses import replace

    race = gallery.load(gallery.by_role("race"))
    steps = race.baseline.steps
    half = 1 + (len(steps) - 1) // 2  # the second half ran 40% slower: the machine got busy mid-race
    slowed = (*steps[:half], *(s.but(forward_s=1.4 * s.forward_s) for s in steps[half:]))
    run = replace(race, baseline=replace(race.baseline, steps=slowed))
    on_file, judged, own = run.machine.noise, speed.band(run), speed.own_spread(run)["ratio"]
    assert judged["ratio"] == own > 1.3 > on_file
    assert "this run's own greedy steps differed by" in speed.band_words(judged)
    assert speed.within(1.0, 0.99 * own, judged["ratio"]) and not speed.within(1.0, 1.01 * on_file, on_file)
    short = replace(race, baseline=replace(race.baseline, steps=steps[:4]))
    assert speed.own_spread(short) is None  # three decoding steps cannot be halved
