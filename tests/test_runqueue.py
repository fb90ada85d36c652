"""Identical requests, one run (app/runqueue.py, app/live.py's watchers), without a model: a fake engine that writes
one token a step for as long as it is not told to stop, on the app's own engine thread.

What a class pressing Run on one prompt needs of the queue: the second asker of the same run joins it (it takes no
place), a different request waits its turn, one more than the queue holds is told when to try again; one asker's
leaving (Stop, a closed tab, a cancelled API job) leaves the run to the others, and the last one's stops it at its
next step. On the landed code none of this existed: each request made its own run (a fresh `LiveRun` per request,
stopped by its own follower's end), so the class's 30 identical races ran one after another.
"""

import dataclasses
import threading
import time
import types

import pytest

from app import events, live, runqueue
from app.live import LiveRun
from lade_core import LookaheadConfig, MethodSpec, Sampling
from lade_core.config import DraftConfig
from lade_core.trace import Machine, MethodRun, StepTrace

STEP_S = 0.02  # the fake engine's step


class FakeLM(types.SimpleNamespace):
    def __init__(self):
        super().__init__(
            name="fake",
            device=types.SimpleNamespace(type="cpu"),
            dtype="torch.float32",
            vocab_size=10,
            max_positions=4096,
        )

    def encode_prompt(self, prompt):
        return [ord(c) % 10 for c in prompt]

    def token_texts(self, ids):
        return {i: str(i) for i in ids}


@dataclasses.dataclass
class FakeRun:
    parallel: MethodRun
    baseline: MethodRun
    lanes: tuple = ()
    title: str = ""


@pytest.fixture
def engine(monkeypatch):
    """The engine as a fake: each lane writes token 1 a step (prefill first), `STEP_S` a step, until told to stop;
    `gate` holds every run at its start until set."""
    gate = threading.Event()
    gate.set()

    def record_run(lm, prompt, specs, max_new, sampling, on_step, should_stop, machine):
        gate.wait(30)
        runs = {}
        for lane in ("parallel", "baseline"):
            on_step(lane, StepTrace(0, "prefill", 1, 2, (1,), 0.001, 0.0))
        made, reason = 1, "length"
        while made < max_new:
            stop = should_stop()
            if stop:
                reason = "cancelled" if stop is True else stop
                break
            time.sleep(STEP_S)
            for lane in ("parallel", "baseline"):
                on_step(lane, StepTrace(made, "autoregressive", made + 1, 1, (1,), 0.001, 0.0))
            made += 1
        for lane in ("parallel", "baseline"):
            runs[lane] = MethodRun((1,) * made, (), 0.0, reason)
        return FakeRun(runs["parallel"], runs["baseline"])

    monkeypatch.setattr(live, "record_run", record_run)
    monkeypatch.setattr(live, "machine_record", lambda lm: Machine(description="a fake engine"))
    monkeypatch.setattr(live.LiveRun, "_append", lambda self, lane, step: self.steps[lane].append(step))
    yield gate
    gate.set()  # a test that failed while holding the engine leaves it free for the next


def run_of(prompt: str = "a", max_new: int = 400, seed: int | None = None) -> LiveRun:
    sampling = Sampling(temperature=0.7, top_p=0.9, sample_seed=seed) if seed is not None else None
    return LiveRun(FakeLM(), prompt, LookaheadConfig(5, 4, 5), max_new, sampling=sampling, budget_s=60.0)


def start(run: LiveRun) -> None:
    run.start()


def wait_for(condition, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_an_identical_request_joins_the_run_a_new_one_waits_and_one_more_is_told_when_to_try_again(engine):
    """The module's worked example (app/runqueue.py): the same request joins the run waiting or running (the same
    object, one watcher more, no place taken); another request waits behind the run on the engine; with the queue's
    one place taken, one more request is refused with the seconds after which to try again."""
    queue = runqueue.RunQueue(waiting=1)
    first = run_of()
    got, _, joined = queue.ask(first, "s1", start)
    assert got is first and not joined
    wait_for(lambda: first.started)
    again, token, joined = queue.ask(run_of(), "s2", start)
    assert again is first and joined and first.watchers == 2 and queue.waiting() == 0
    other, _, joined = queue.ask(run_of("b"), "s3", start)
    assert other is not first and not joined and queue.waiting() == 1
    assert queue.ahead(other)[0] == 1  # the run on the engine is ahead of it
    with pytest.raises(runqueue.Busy) as full:
        queue.ask(run_of("c"), "s4", start)
    assert full.value.waiting == 1 and full.value.retry_s >= 5
    for run in (first, other):
        run.stop()
        run.wait(10)


def test_the_run_the_idle_engine_is_taking_is_not_counted_as_waiting(engine):
    """A class's first run, handed to the idle engine, is not counted as waiting before the engine's thread has
    marked it started: with one place, a second distinct run still waits and a third is refused (before: the second
    was refused when the two arrived together)."""
    engine.clear()  # the engine thread holds every run at its start
    queue = runqueue.RunQueue(waiting=1)
    # handed to the engine, and the engine's thread has not marked it yet (held there for the test, not by timing)
    first, _, _ = queue.ask(run_of("a"), "s1", lambda run: None)
    second, _, joined = queue.ask(run_of("b"), "s2", start)
    assert not first.started and not joined and queue.waiting() == 1
    with pytest.raises(runqueue.Busy):
        queue.ask(run_of("c"), "s3", start)
    engine.set()
    first.stop()
    second.stop()
    second.wait(10)


def test_sampled_runs_join_only_with_the_same_seed(engine):
    """Sampling with its seed is part of what a run is: the same seed joins, another seed is another run."""
    queue = runqueue.RunQueue(waiting=4)
    first, _, _ = queue.ask(run_of(seed=1), "s1", start)
    same, _, joined = queue.ask(run_of(seed=1), "s2", start)
    other, _, joined_other = queue.ask(run_of(seed=2), "s3", start)
    assert same is first and joined and other is not first and not joined_other
    for run in (first, other):
        run.stop()
        run.wait(10)


def test_the_join_key_is_the_issues_list_and_nothing_else():
    """What makes two requests one run is exactly: the model, the prompt's tokens, the methods with W, N, G and the
    pool policy, the sampling with its seed, the token budget. Each changed alone is another run; the server's time
    budget (the same for every run) is not part of it."""
    base = run_of()
    assert base.key == (
        "fake",
        tuple(base.prompt_ids),
        (("lookahead", LookaheadConfig(5, 4, 5), DraftConfig()),),
        base.sampling,
        400,
    )
    another = FakeLM()
    another.name = "other"
    other_lm = LiveRun(another, "a", LookaheadConfig(5, 4, 5), 400)
    others = [
        other_lm,
        run_of("b"),
        LiveRun(FakeLM(), "a", LookaheadConfig(4, 4, 5), 400),
        LiveRun(FakeLM(), "a", LookaheadConfig(5, 4, 5, pool="output"), 400),
        LiveRun(
            FakeLM(),
            "a",
            [MethodSpec("lookahead", LookaheadConfig(5, 4, 5)), MethodSpec("pld", draft=DraftConfig())],
            400,
        ),
        run_of(seed=1),
        run_of(max_new=399),
    ]
    assert all(o.key != base.key for o in others)
    assert LiveRun(FakeLM(), "a", LookaheadConfig(5, 4, 5), 400, budget_s=5.0).key == base.key


def test_one_askers_leaving_leaves_the_run_to_the_others_and_the_last_ones_stops_it_at_its_next_step(engine):
    """Two askers follow one run. The first leaves (its Stop, a closed tab): the run goes on, writing steps. The
    second leaves: the run stops at its next step, its lanes "cancelled"."""
    queue = runqueue.RunQueue(waiting=4)
    run, first, _ = queue.ask(run_of(), "s1", start)
    _, second, joined = queue.ask(run_of(), "s2", start)
    assert joined
    wait_for(lambda: len(run.steps["parallel"]) >= 3)
    run.leave(first)
    assert not run.stopping and run.watchers == 1
    at = len(run.steps["parallel"])
    time.sleep(10 * STEP_S)
    assert len(run.steps["parallel"]) > at + 3, "the others' run stopped with the first asker"
    run.leave(second)
    at = len(run.steps["parallel"])
    assert run.wait(5)
    assert len(run.steps["parallel"]) <= at + 1 and run.cancelled  # at its next step
    assert queue.ask(run_of(), "s3", start)[2] is False  # an ended run is not joined: a new one is made
    queue.runs()[0].stop()


def test_a_run_told_to_stop_is_never_joined_and_frees_its_place(engine):
    """A run whose last asker left while it waited takes no place and is not joined: the next identical request
    makes a new run."""
    engine.clear()  # every run waits at its start
    queue = runqueue.RunQueue(waiting=1)
    blocker, _, _ = queue.ask(run_of("x"), "s0", start)
    wait_for(lambda: blocker.started)  # it has the engine, held at its start
    waiting, token, _ = queue.ask(run_of(), "s1", start)
    waiting.leave(token)
    assert waiting.stopping and queue.waiting() <= 1
    fresh, _, joined = queue.ask(run_of(), "s2", start)
    assert fresh is not waiting and not joined
    engine.set()
    for run in (blocker, fresh):
        run.stop()
        run.wait(10)


def test_a_session_leaving_its_run_for_another_leaves_the_first_to_its_other_watchers(engine):
    """A session's new run (`live.register`) or Stop (`live.stop_session`) leaves its old run, which goes on for
    whoever else watches it, and stops when nobody does."""
    queue = runqueue.RunQueue(waiting=4)
    shared, _, _ = queue.ask(run_of(), "page-a", start)
    queue.ask(run_of(), "page-b", start)
    live.register("page-a", shared)
    live.register("page-b", shared)
    mine, _, _ = queue.ask(run_of("mine"), "page-a", start)
    live.register("page-a", mine)
    assert not shared.stopping and shared.watchers == 1
    live.stop_session("page-b")
    assert shared.stopping
    live.stop_session("page-a")
    assert mine.stopping
    for run in (shared, mine):
        run.wait(10)


def test_the_expected_wait_counts_a_runs_followers_once(engine, monkeypatch):
    """The sidebar's wait reads the engine's jobs in Gradio's queue: thirty students following one run are one run
    ahead, not thirty (`events.engine_jobs`); a job whose run has ended is none."""
    queue = runqueue.RunQueue(waiting=4)
    shared, _, _ = queue.ask(run_of(), "s0", start)
    ended = run_of("done")
    ended._ended.set()
    follow = object()
    job = lambda session: types.SimpleNamespace(  # noqa: E731
        fn=types.SimpleNamespace(fn=follow), session_hash=session, data=None
    )
    sessions = {f"s{i}": shared for i in range(30)} | {"late": ended}
    monkeypatch.setattr(events, "session_run", sessions.get)
    jobs = [job(f"s{i}") for i in range(30)] + [job("late"), job("new")]
    kept = events.engine_jobs(jobs, (follow,))
    assert [j.session_hash for j in kept] == ["s0", "new"]
    shared.stop()
    shared.wait(10)


def test_a_live_runs_answers_are_the_declared_live_answer(engine):
    """Issue 52: a live run's answer at its address (the whole run so far, or what a page lacks since the steps it
    has) was typed by hand in the page; it is `LiveAnswer` with its `LiveDelta` (app/render/payload.py), and what
    `LiveRun.pull` answers fits the generated schema."""
    from test_contract import conforms

    run = run_of(max_new=40)
    run.start()
    wait_for(lambda: len(run.steps["parallel"]) >= 4)
    whole, since = run.pull(None), run.pull({"parallel": 2, "baseline": 1, "layouts": 0})
    run.stop()
    run.wait(10)
    assert "payload" in whole and "delta" in since and since["delta"]["lanes"]["parallel"]
    assert conforms(whole, "LiveAnswer") == [] and conforms(since, "LiveAnswer") == []
    assert conforms({**since, "delta": {**since["delta"], "status": None}}, "LiveAnswer") != []
