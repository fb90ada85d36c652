"""A live run: `record_run` in a worker thread, its steps streamed through a queue as growing partial traces.

The Gradio event is a generator: it iterates `LiveRun.snapshots()`, which yields (partial RunTrace, step) at most
every `min_interval` seconds while the engine works, then the finished run (with done=True). Stopping: `stop()` (the Stop button,
a new run from the same session, or the generator being closed) sets the flag the engine polls between steps;
a consumer that stops pulling for `abandon_after` seconds (a closed browser tab) also stops the engine.
"""

from __future__ import annotations

import queue
import threading
import time

from lade_core import LookaheadConfig, MethodRun, RunTrace, Sampling, record_run
from lade_core.record import run_ids

_DONE = object()
_sessions: dict[str, "LiveRun"] = {}
_sessions_lock = threading.Lock()


class LiveRun:
    def __init__(self, lm, prompt: str, config: LookaheadConfig, max_new_tokens: int,
                 min_interval: float = 0.35, abandon_after: float = 60.0, lock: threading.Lock | None = None,
                 sampling: Sampling | None = None):
        self.lm, self.prompt, self.config, self.max_new_tokens = lm, prompt, config, max_new_tokens
        self.sampling = sampling or Sampling()  # temperature 0: greedy
        self.min_interval, self.abandon_after = min_interval, abandon_after
        self._lock = lock or threading.Lock()  # held while the engine runs; pass the process's to serialise runs
        self.prompt_ids = tuple(lm.encode_prompt(prompt))
        self._queue: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._last_pull = time.monotonic()
        self._steps: dict[str, list] = {"lookahead": [], "greedy": []}

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
            run = record_run(self.lm, self.prompt, self.config, self.max_new_tokens, sampling=self.sampling,
                             on_step=lambda method, step: self._queue.put((method, step)), should_stop=self._should_stop)
            self._queue.put((_DONE, run))
        except Exception as exc:  # handed to the consumer, which reports it
            self._queue.put((_DONE, exc))
        finally:
            self._lock.release()

    def partial(self) -> tuple[RunTrace, int]:
        """The run so far and the clock step of its newest step."""
        methods = {}
        for name, steps in self._steps.items():
            tokens = tuple(t for s in steps for t in s.accepted)
            methods[name] = MethodRun(tokens, tuple(steps), sum(s.forward_s + s.overhead_s for s in steps), "running")
        ids = set(self.prompt_ids).union(*(run_ids(m) for m in methods.values()))
        run = RunTrace(self.prompt, self.prompt_ids, self.lm.name, str(self.lm.device),
                       str(self.lm.dtype).removeprefix("torch."), self.config, self.sampling, self.max_new_tokens,
                       methods["lookahead"], methods["greedy"], self.lm.token_texts(sorted(ids)), "live")
        phase = "greedy" if self._steps["greedy"] else "lookahead"
        return run, max(len(self._steps[phase]) - 1, 0)

    def snapshots(self):
        """Yield (run, step, done): partial runs while the engine works, then the finished one. Raises its error."""
        worker = threading.Thread(target=self._work, name="lade-live-run", daemon=True)
        worker.start()
        last_yield = 0.0
        try:
            while True:
                self._last_pull = time.monotonic()
                try:
                    method, item = self._queue.get(timeout=self.min_interval)
                except queue.Empty:
                    method = None
                if method is _DONE:
                    if isinstance(item, Exception):
                        raise item
                    yield item, max(len(item.lookahead.steps), len(item.greedy.steps)) - 1, True
                    return
                if method is not None:
                    self._steps[method].append(item)
                if method is not None and time.monotonic() - last_yield >= self.min_interval:
                    yield (*self.partial(), False)
                    last_yield = time.monotonic()
        finally:
            # No join: Gradio closes a cancelled generator on its event loop, which must not wait for a model step.
            # The engine lock keeps the next run from overlapping this worker's last step.
            self.stop()


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
