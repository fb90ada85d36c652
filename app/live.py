"""A live run: `record_run` (the race of the methods on one clock) on the engine's one worker thread, pulled by the
page as it goes, and watched by everyone who asked for it.

The worker puts each step into the run's record as it makes it. `LiveRun.follow()` is what each asker's event
iterates (the Run button's, `/generate`'s): it yields whenever the record grew or the run's watchers or place moved,
at most every `min_interval` seconds, without holding anything of the engine's; the page, told the run's handle,
pulls the steps it lacks (`pull(since)`, through the store). When the worker ends, however it ends, the finished run
replaces the live one under the same handle (`on_done`), so a run that Stop cut short is still there to draw and
download.

**Watchers.** A run is asked by one or more askers (a request identical to one waiting or running joins it:
app/runqueue.py); each follower `join`s it (a token per follower, counted by session) and `leave`s it when its event
ends (Stop, a closed tab, a cancelled API job, the run's end). The last one to leave stops the run at its next step;
one asker leaving leaves the run to the others.

Every run executes on ONE long-lived thread (`ENGINE`): runs never overlap on the CPU, a stopped run's last step
finishes before the next run starts, and the allocator keeps one arena for all of them instead of one per thread
(a new thread per wide run kept hundreds of MB each), and hands freed memory back after each run (`memory.trim`).
Stopping: `stop()` (the last watcher leaving) sets the flag the engine polls between steps; a run whose record
nobody reads for `abandon_after` seconds once it has the engine stops too: for the Run button's race that is the
page's pulls (a job posted and never drawn is not kept running), for the API the follower itself. A run given a
`budget_s` ends at its first step past that many seconds on the engine, its lanes' stop_reason "budget"
(`out_of_budget`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import secrets
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from lade_core import Lane, MethodRun, MethodSpec, RunTrace, Sampling, record_run
from lade_core.config import METHOD_NAMES
from lade_core.measure.here import machine_record
from lade_core.record import RunRequest, make_trace, run_ids
from lade_core.schema import to_data

from . import limits
from .memory import trim
from .render.payload import Deriver, LiveAnswer, empty_derived
from .wait import Race, duration, overrun_words

ENGINE = ThreadPoolExecutor(max_workers=limits.ENGINE_SLOTS, thread_name_prefix="lade-engine")


def page_lane(engine_lane: str) -> str:
    """The page's id of a lane `record_run` names: "parallel", "baseline", "lanes[0]" -> "lane0"."""
    return engine_lane.replace("lanes[", "lane").rstrip("]")


_sessions: dict[str, LiveRun] = {}
_sessions_lock = threading.Lock()


class LiveRun:
    """A race of `methods` (one `MethodSpec` or up to three, the main one first; a `LookaheadConfig` is lookahead
    with it) against the baseline, recording as it goes."""

    def __init__(
        self,
        lm,
        prompt: str,
        methods,
        max_new_tokens: int,
        sampling: Sampling | None = None,
        min_interval: float = 0.3,
        abandon_after: float = limits.RUN_UNREAD_S,
        budget_s: float | None = None,
    ):
        specs = methods if isinstance(methods, (list, tuple)) else [methods]
        self.specs = [s if isinstance(s, MethodSpec) else MethodSpec(config=s) for s in specs]
        self.lm, self.prompt, self.max_new_tokens = lm, prompt, max_new_tokens
        self.config = self.specs[0].config
        self.sampling = sampling or Sampling()
        self.min_interval, self.abandon_after, self.budget_s = min_interval, abandon_after, budget_s
        self._engine_since: float | None = None  # when the run got the engine
        self._engine_until: float | None = None  # when it gave it back
        self.prompt_ids = tuple(lm.encode_prompt(prompt))
        self.lanes = ["parallel", *(f"lane{i}" for i in range(len(self.specs) - 1)), "baseline"]
        self.steps: dict[str, list] = {lane: [] for lane in self.lanes}
        self.result: RunTrace | None = None
        self.error: Exception | None = None
        self.on_done = None  # called with the finished RunTrace, from the engine's thread
        self.machine = None  # where it runs (`trace.Machine`), recorded when it starts on the engine
        self.promise: Race | None = None  # the expected wait's bound for this race alone, when it was asked
        self._load_until = -1.0  # the 1-minute load when it gave the engine back (-1: not measured)
        self.handle: str | None = None  # where the store keeps it, and the client whose share it counts in
        self.client: str | None = None
        self._stop = threading.Event()
        self._ended = threading.Event()
        self._record_lock = threading.Lock()  # the steps and derived rows, read by pulls while the follower appends
        self._derived: list[dict] = []
        self._deriver: Deriver | None = None
        self._seen = time.monotonic()
        self._watchers: dict[str, str] = {}  # a follower's token -> its session
        self._watch_lock = threading.Lock()
        # what makes two requests the same run (greedy and seeded runs are deterministic), and nothing else: the
        # model, the prompt's tokens, the methods with their W, N, G and pool policy, the sampling with its seed and
        # the token budget
        methods = tuple((s.method, s.config, s.draft) for s in self.specs)
        self.key = (getattr(lm, "name", None), tuple(self.prompt_ids), methods, self.sampling, max_new_tokens)

    # -- watchers ------------------------------------------------------------------------------------------------
    def join(self, session: str) -> str:
        """A new follower of this run from `session`: its token, to `leave` with."""
        token = secrets.token_hex(8)
        with self._watch_lock:
            self._watchers[token] = session
        return token

    def leave(self, token: str | None = None, session: str | None = None) -> None:
        """A follower (`token`) or every follower of `session` leaves; the last one to leave stops the run at its
        next step."""
        with self._watch_lock:
            if token is not None:
                self._watchers.pop(token, None)
            if session is not None:
                for t in [t for t, s in self._watchers.items() if s == session]:
                    del self._watchers[t]
            last = not self._watchers
        if last:
            self.stop()

    @property
    def watchers(self) -> int:
        """How many askers (sessions) follow this run now."""
        with self._watch_lock:
            return len(set(self._watchers.values()))

    def watched_by(self, session: str) -> bool:
        with self._watch_lock:
            return session in self._watchers.values()

    @property
    def started(self) -> bool:
        """Whether it has had the engine (it may have ended since)."""
        return self._engine_since is not None

    @property
    def ended(self) -> bool:
        return self._ended.is_set()

    @property
    def stopping(self) -> bool:
        """Whether it was told to stop (its last watcher left): no new asker may join it."""
        return self._stop.is_set()

    def recorded(self) -> int:
        """The steps recorded so far, every lane together."""
        return sum(len(steps) for steps in self.steps.values())

    # -- running -------------------------------------------------------------------------------------------------
    def start(self, engine_lock: threading.Lock | None = None) -> None:
        ENGINE.submit(self._work, engine_lock or threading.Lock())

    def stop(self) -> None:
        self._stop.set()

    def wait(self, timeout: float) -> bool:
        """Wait until the worker has ended; True if it has."""
        return self._ended.wait(timeout)

    def _should_stop(self) -> bool | str:
        # waiting for the engine is not being unread: a page pulls when its race moves, and a waiting one does not
        abandoned = self._engine_since is not None and time.monotonic() - self._seen > self.abandon_after
        if self._stop.is_set() or abandoned:
            return True
        spent = time.monotonic() - (self._engine_since or time.monotonic())
        return "budget" if self.budget_s is not None and spent > self.budget_s else False

    def _work(self, engine_lock: threading.Lock) -> None:
        try:
            if self._should_stop():
                raise RuntimeError("stopped before it started")
            with engine_lock:
                self.machine = machine_record(self.lm)  # the process's curve (measured at start-up), the load now
                self._seen = self._engine_since = time.monotonic()
                run = record_run(
                    self.lm,
                    self.prompt,
                    self.specs,
                    self.max_new_tokens,
                    self.sampling,
                    on_step=lambda lane, step: self._append(page_lane(lane), step),
                    should_stop=self._should_stop,
                    machine=self.machine,
                )
                self._engine_until = time.monotonic()
                self._load_until = os.getloadavg()[0] if hasattr(os, "getloadavg") else -1.0
            self.result = dataclasses.replace(run, title="live")
            if self.on_done:
                self.on_done(run)
        except Exception as exc:  # handed to the followers, which report it
            self.error = exc
        finally:
            trim()
            self._ended.set()

    async def follow(self, pulled: bool = False, moved=None):
        """Yield (None) whenever the run moved: new steps, a watcher more or fewer, or `moved()` (its place in the
        queue) changed; at most every `min_interval` s, and once more when it has ended; the exception the worker
        met, if any, is raised here. Holds nothing of the engine's: any number may follow one run. `pulled`: a page
        reads this run by pulling it, so only its pulls keep the run alive (else following does)."""
        said = None
        while True:
            if not pulled:
                self._seen = time.monotonic()
            if self._ended.is_set():
                if self.error is not None:
                    raise self.error
                yield
                return
            mark = (self.recorded(), self.watchers, moved() if moved else None)
            if mark != said:
                said = mark
                yield
            await asyncio.sleep(self.min_interval)

    def _append(self, lane: str, step) -> None:
        with self._record_lock:
            if self._deriver is None:
                self._deriver = Deriver(self.partial())
            self.steps[lane].append(step)
            if lane == "parallel":
                self._derived.append(self._deriver.step(step))

    def _ended_by(self, reason: str) -> bool:
        run = self.result
        return run is not None and any(
            m.stop_reason == reason for m in (run.parallel, run.baseline, *(lane.run for lane in run.lanes))
        )

    @property
    def cancelled(self) -> bool:
        """Whether the run ended because it was stopped (Stop, a new run, nobody reading it)."""
        return self._ended_by("cancelled")

    @property
    def out_of_budget(self) -> bool:
        """Whether the run ended because it spent its `budget_s` on the engine."""
        return self._ended_by("budget")

    # -- reading -------------------------------------------------------------------------------------------------
    @property
    def promised_s(self) -> float | None:
        """What the expected wait said this race alone would take on the engine (at most the budget); None: not
        predicted."""
        return None if self.promise is None else self.promise.engine_s

    def spent_s(self) -> float:
        """Its time on the engine so far (all of it once it has ended)."""
        return (self._engine_until or time.monotonic()) - self._engine_since if self._engine_since else 0.0

    def overrun(self) -> str:
        """Once it has ended: why it took longer than the expected wait promised, read off its record
        (`wait.overrun_words`); "" where it kept the promise, had none, or has not ended."""
        if self.promise is None or self.result is None:
            return ""
        return overrun_words(self.promise, self.result, self.spent_s(), self._load_until)

    def status(self) -> str:
        """Where each lane stands, and the race's rule."""
        names = [METHOD_NAMES[s.method] for s in self.specs] + ["greedy" if self.sampling.greedy else "sampling"]
        where = ", ".join(
            f"{name} at step {max(len(self.steps[lane]) - 1, 0)}" for name, lane in zip(names, self.lanes)
        )
        promised, spent, said = self.promised_s, self.spent_s(), ""
        if promised is not None and spent > promised:
            said = (
                f" It has now taken {duration(spent)} on the engine, longer than the {duration(promised)} the expected "
                f"wait promised; why is read off its record when it ends."
            )
        elif promised is not None:
            said = f" The expected wait promised it up to about {duration(promised)} on the engine."
        return f"Live race: {where}. The lane that has spent the least time so far makes the next step.{said}"

    def partial(self) -> RunTrace:
        """The run so far, every lane marked "running"."""
        runs = {}
        for lane, steps in self.steps.items():
            tokens = tuple(t for s in steps for t in s.accepted)
            runs[lane] = MethodRun(tokens, tuple(steps), sum(s.seconds for s in steps), "running")
        request = RunRequest(self.prompt, self.prompt_ids, self.max_new_tokens, self.sampling, "live")
        raced = [Lane(spec.method, spec.config, spec.draft, runs[lane]) for spec, lane in zip(self.specs, self.lanes)]
        return make_trace(self.lm, request, raced, runs["baseline"], self.machine)

    def pull(self, since) -> LiveAnswer:
        """What a page that has `since` ({lane: steps, "layouts": n}, or None for nothing) lacks of the record: the
        whole run so far as a payload, or {"delta": new steps per lane, their derived rows, new layouts, texts}."""
        self._seen = time.monotonic()
        with self._record_lock:
            if not isinstance(since, dict):
                run = self.partial()
                derived = {
                    **empty_derived(),
                    "steps": list(self._derived),
                    "layouts": list(self._deriver.layouts) if self._deriver else [],
                }
                return {"payload": {"trace": to_data(run), "derived": derived}, "live": True}
            counts = {lane: _count(since.get(lane), len(self.steps[lane])) for lane in self.lanes}
            layouts = self._deriver.layouts if self._deriver else []
            fresh = {lane: self.steps[lane][counts[lane] :] for lane in self.lanes}
            delta = {
                "lanes": {lane: [to_data(s) for s in steps] for lane, steps in fresh.items()},
                "derived": self._derived[counts["parallel"] :],
                "layouts": layouts[_count(since.get("layouts"), len(layouts)) :],
                "status": self.status(),
            }
        ids = set().union(
            *(
                run_ids(MethodRun(tuple(t for s in steps for t in s.accepted), tuple(steps), 0.0))
                for steps in fresh.values()
            )
        )
        delta["token_text"] = {str(k): v for k, v in self.lm.token_texts(sorted(ids)).items()}
        return {"delta": delta, "live": True}


def _count(value, most: int) -> int:
    """A count the page sent, as an index into a list of `most` items (anything that is not a count: 0)."""
    return min(value, most) if type(value) is int and value >= 0 else 0


def register(session: str, live: LiveRun) -> None:
    """Remember the session's live run; the session leaves the one it had before (which stops if nobody else
    watches it)."""
    with _sessions_lock:
        old = _sessions.get(session)
        _sessions[session] = live
    if old is not None and old is not live:
        old.leave(session=session)


def session_run(session: str) -> LiveRun | None:
    with _sessions_lock:
        return _sessions.get(session)


def stop_session(session: str) -> LiveRun | None:
    """The session leaves its live run, if any (which stops at its next step if nobody else watches it); the run."""
    with _sessions_lock:
        live = _sessions.pop(session, None)
    if live is not None:
        live.leave(session=session)
    return live


def forget(session: str, live: LiveRun) -> None:
    with _sessions_lock:
        if _sessions.get(session) is live:
            del _sessions[session]
