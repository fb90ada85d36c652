"""A live run: `record_run` (the race of both methods on one clock) in a worker thread, streamed to the page as it goes.

The Gradio event is a generator over `LiveRun.messages()`: first the run's skeleton, then, at most every
`min_interval` seconds, the steps made since the last message (with their engine-derived view data), then the finished
run. Stopping: `stop()` (the Stop button, a new run from the same session, the generator being closed) sets the flag
the engine polls between steps; a consumer that stops pulling for `abandon_after` seconds (a closed tab) also stops it.
"""

from __future__ import annotations

import queue
import threading
import time

from lade_core import LookaheadConfig, MethodRun, RunTrace, Sampling, StepCost, record_run
from lade_core.record import make_trace, run_ids
from lade_core.schema import to_data

from .render.payload import Deriver, empty_derived, payload
from .stage import message, open_message

LIVE = "live"  # the name the page knows a live run by
_DONE = object()
_sessions: dict[str, "LiveRun"] = {}
_sessions_lock = threading.Lock()


class LiveRun:
    def __init__(self, lm, prompt: str, config: LookaheadConfig, max_new_tokens: int, sampling: Sampling | None = None,
                 lock: threading.Lock | None = None, step_cost: StepCost | None = None, min_interval: float = 0.3,
                 abandon_after: float = 60.0):
        self.lm, self.prompt, self.config, self.max_new_tokens = lm, prompt, config, max_new_tokens
        self.sampling = sampling or Sampling()
        self.step_cost, self.min_interval, self.abandon_after = step_cost, min_interval, abandon_after
        self._lock = lock or threading.Lock()  # held while the engine runs; pass the process's to serialise runs
        self.prompt_ids = tuple(lm.encode_prompt(prompt))
        self._queue: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._last_pull = time.monotonic()
        self.steps: dict[str, list] = {"parallel": [], "baseline": []}
        self.result: RunTrace | None = None

    def stop(self) -> None:
        self._stop.set()

    def _should_stop(self) -> bool:
        return self._stop.is_set() or time.monotonic() - self._last_pull > self.abandon_after

    def _work(self) -> None:
        # Wait for the previous run's worker to leave the engine (a stopped run ends after its current step).
        while not self._lock.acquire(timeout=0.1):
            if self._should_stop():
                self._queue.put((_DONE, RuntimeError("stopped before it started")))
                return
        try:
            run = record_run(self.lm, self.prompt, self.config, self.max_new_tokens, self.sampling, title=LIVE,
                             on_step=lambda lane, step: self._queue.put((lane, step)), should_stop=self._should_stop,
                             step_cost=self.step_cost)
            self._queue.put((_DONE, run))
        except Exception as exc:  # handed to the consumer, which reports it
            self._queue.put((_DONE, exc))
        finally:
            self._lock.release()

    def partial(self) -> RunTrace:
        """The run so far, both lanes marked "running"."""
        lanes = {}
        for lane, steps in self.steps.items():
            tokens = tuple(t for s in steps for t in s.accepted)
            lanes[lane] = MethodRun(tokens, tuple(steps), sum(s.forward_s + s.overhead_s for s in steps), "running")
        return make_trace(self.lm, self.prompt, self.prompt_ids, "lookahead", self.config, self.sampling,
                          self.max_new_tokens, lanes["parallel"], lanes["baseline"], LIVE)

    def status(self) -> str:
        p, b = len(self.steps["parallel"]), len(self.steps["baseline"])
        return (f"Live race: lookahead at step {max(p - 1, 0)}, greedy at step {max(b - 1, 0)}; the method that has "
                f"spent less time makes the next step.")

    def messages(self):
        """Yield the page's messages: the skeleton, the new steps as they come, then the finished run."""
        worker = threading.Thread(target=self._work, name="lade-live-run", daemon=True)
        worker.start()
        skeleton = self.partial()
        deriver, sent_ids = Deriver(skeleton), set(skeleton.token_text)
        start = {"trace": to_data(skeleton), "derived": empty_derived()}
        yield message("live", runs={LIVE: start}, current=LIVE, step=0, mode="explorer", notice="",
                      status=self.status())
        fresh: dict[str, list] = {"parallel": [], "baseline": []}
        last = 0.0
        try:
            while True:
                self._last_pull = time.monotonic()
                try:
                    lane, item = self._queue.get(timeout=self.min_interval)
                except queue.Empty:
                    lane = None
                if lane is _DONE:
                    if isinstance(item, Exception):
                        raise item
                    self.result = item
                    yield open_message(LIVE, payload(item), "last", notice="", status=self.status())
                    return
                if lane is not None:
                    self.steps[lane].append(item)
                    fresh[lane].append(item)
                if any(fresh.values()) and time.monotonic() - last >= self.min_interval:
                    yield self._delta(fresh, deriver, sent_ids)
                    fresh, last = {"parallel": [], "baseline": []}, time.monotonic()
        finally:
            # No join: Gradio closes a cancelled generator on its event loop, which must not wait for a model step.
            # The engine lock keeps the next run from overlapping this worker's last step.
            self.stop()

    def _delta(self, fresh: dict, deriver: Deriver, sent_ids: set) -> dict:
        layouts_before = len(deriver.layouts)
        lanes = {}
        for lane, steps in fresh.items():
            part = {"steps": [to_data(s) for s in steps], "stop_reason": "running"}
            if lane == "parallel":
                part["derived"] = [deriver.step(s) for s in steps]
            lanes[lane] = part
        ids = set().union(*(run_ids(MethodRun(tuple(t for s in steps for t in s.accepted), tuple(steps), 0.0))
                            for steps in fresh.values())) - sent_ids
        sent_ids |= ids
        texts = {str(k): v for k, v in self.lm.token_texts(sorted(ids)).items()}
        return message("steps", name=LIVE, lanes=lanes, layouts=deriver.layouts[layouts_before:], token_text=texts,
                       status=self.status())


def register(session: str, live: LiveRun) -> None:
    """Remember the session's live run, stopping the one it had before."""
    with _sessions_lock:
        old = _sessions.get(session)
        _sessions[session] = live
    if old is not None:
        old.stop()


def stop_session(session: str) -> bool:
    """Stop the session's live run, if any; True if there was one."""
    with _sessions_lock:
        live = _sessions.pop(session, None)
    if live is not None:
        live.stop()
    return live is not None


def forget(session: str, live: LiveRun) -> None:
    with _sessions_lock:
        if _sessions.get(session) is live:
            del _sessions[session]
