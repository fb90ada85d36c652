"""The engine's queue: the runs asked of the engine and not yet ended, one per distinct request, in the order asked.

A class presses Run on the prompt on the screen at once. A request for the same run as one waiting or running
(`LiveRun.key`: the model, the prompt's tokens, W/N/G and the pool, the methods, the sampling with its seed, the
token budget) joins that run instead of making it again: greedy and seeded runs are deterministic, so it is the run
the asker would have had, and its timings are that one run's. Joining takes neither the engine nor a place in this
queue. A new run takes a place; at most `limits.ENGINE_WAITING` runs wait for the engine, and one more is refused
(`Busy`) with the seconds after which a place should be free. A run stays joinable until it ends or is told to stop
(its last watcher left).

The engine itself is `live.ENGINE`, one thread, which takes the runs in the order they were started here; this queue
is what the app knows of them: each run's place, the predicted time of the runs ahead of it (each run's own bound,
`LiveRun.promised_s`, from the expected wait: app/wait.py), and whom a run's askers are. The Run button's and
`/generate`'s events only follow the runs (app/events.py); none of them waits in Gradio's queue.

    queue = RunQueue(waiting=1)
    first, _, joined = queue.ask(run_a, "session-1", start)      # a new run, started: (run_a, _, False)
    again, _, joined = queue.ask(copy_of_a, "session-2", start)  # the same request: (run_a, _, True)
    queue.ask(run_b, "session-3", start)                         # waits: run_a has the engine (when it has)
    queue.ask(run_c, "session-4", start)                         # Busy(1, retry_s): run_b waits already

(tests/test_runqueue.py runs this example.)
"""

from __future__ import annotations

import math
import threading
import time

from . import limits


class Busy(Exception):
    """No place for a new run: `waiting` runs wait for the engine already; a place should be free in `retry_s`."""

    def __init__(self, waiting: int, retry_s: int):
        super().__init__(waiting, retry_s)
        self.waiting, self.retry_s = waiting, retry_s


def remaining_s(live, now: float | None = None) -> float | None:
    """What is left of a run's own bound (`promised_s`): all of it while it waits, what it has not spent yet while it
    runs (0 once it is past it); None where nothing was predicted."""
    if live.promised_s is None:
        return None
    if live._engine_since is None:
        return live.promised_s
    return max(0.0, live.promised_s - ((now or time.monotonic()) - live._engine_since))


class RunQueue:
    def __init__(self, waiting: int = limits.ENGINE_WAITING):
        self.most_waiting = waiting
        self._runs: list = []  # LiveRuns asked and not ended, in the order asked
        self._lock = threading.Lock()

    def _prune(self) -> None:
        self._runs = [r for r in self._runs if not r.ended]

    def ask(self, candidate, session: str, admit=None) -> tuple[object, str, bool]:
        """(the run, the asker's watcher token, whether it joined one): a run waiting or running with the same key
        as `candidate` (a `LiveRun` not started), joined; else `candidate` itself, given a place and handed to
        `admit` (which gives it its handle and starts it on the engine) before anyone else can join it. Busy when
        `most_waiting` runs wait already."""
        with self._lock:
            self._prune()
            for live in self._runs:
                if live.key == candidate.key and not live.stopping:
                    return live, live.join(session), True
            waiting = self._waiting()
            if len(waiting) >= self.most_waiting:
                raise Busy(len(waiting), self._retry_s())
            token = candidate.join(session)
            if admit is not None:
                admit(candidate)
            self._runs.append(candidate)
            return candidate, token, False

    def _waiting(self) -> list:
        """The runs waiting for the engine: those not started, less the first of them while no run has the engine
        (the engine thread is taking it: a class's first run is not counted as waiting for the few ms before)."""
        pending = [r for r in self._runs if not r.started and not r.stopping and not r.ended]
        if pending and not any(r.started and not r.ended for r in self._runs):
            return pending[1:]
        return pending

    def _retry_s(self) -> int:
        """When a place should be free: what the run on the engine has left of its bound (at least
        `limits.BUSY_RETRY_S`; the runs' budget where none is predicted)."""
        running = [r for r in self._runs if r.started and not r.ended]
        left = [remaining_s(r) for r in running]
        known = [s for s in left if s is not None]
        seconds = min(known) if known else (limits.RUN_BUDGET_S if running else 0.0)
        return max(limits.BUSY_RETRY_S, math.ceil(seconds))

    def ahead(self, live) -> tuple[int, float | None]:
        """(runs ahead of `live` on the engine, the predicted seconds before it starts: what the running one has
        left of its bound and the bounds of those waiting before it; None where any of them is not predicted)."""
        with self._lock:
            self._prune()
            before = []
            for r in self._runs:
                if r is live:
                    break
                if not r.stopping or r.started:
                    before.append(r)
        left = [remaining_s(r) for r in before if not r.ended]
        return len(left), (None if any(s is None for s in left) else sum(left))

    def runs(self) -> list:
        """The runs waiting or running now, in order."""
        with self._lock:
            self._prune()
            return list(self._runs)

    def waiting(self) -> int:
        with self._lock:
            self._prune()
            return len(self._waiting())


QUEUE = RunQueue()
