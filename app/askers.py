"""A run's askers: how many may follow runs at once, and what each is told. A run is followed by everyone who asked for
it (the Run button's and `/generate`'s events; an identical request joins the run waiting or running:
app/runqueue.py), and each follower is told where the run stands: its place in the engine's queue and the predicted
time of the runs ahead of it (each run's own bound from the expected wait, app/wait.py), then its lanes, and that it
is shared ("you and 12 others are watching this run"). A request there is no room for is refused with one sentence
naming the seconds after which to try again (`Busy`), and the page offers the same race in the visitor's own browser
beside the refusal or a long wait (`offer`, drawn by app/static/lade-handoff.js).
"""

from __future__ import annotations

import itertools
import json
import threading
from contextlib import contextmanager

import gradio as gr

from . import limits, runqueue
from .live import LiveRun
from .logs import refusal
from .runqueue import QUEUE
from .wait import duration


class Busy(gr.Error):
    """A refusal for want of room (the engine's queue, the followers), with the seconds after which to try again."""

    def __init__(self, message: str, retry_s: int):
        super().__init__(message, print_exception=False)
        self.retry_s = retry_s


def busy_text(full: runqueue.Busy) -> str:
    """The one sentence a request is refused with when the engine's queue is full."""
    return (
        f"The engine's queue is full: {full.waiting} runs are waiting for this server's one engine (at most "
        f"{QUEUE.most_waiting}), so try again in {full.retry_s} s."
    )


# Followers at once (the Run button's and /generate's events, which Gradio does not limit: `limits.FOLLOWERS`).
_followers = 0
_followers_lock = threading.Lock()


@contextmanager
def following():
    """One follower more while inside; `Busy` past `limits.FOLLOWERS`."""
    global _followers
    with _followers_lock:
        if _followers >= limits.FOLLOWERS:
            refusal(f"refused: a run past {limits.FOLLOWERS} followers at once")
            raise Busy(
                f"This server is following {_followers} races for visitors now (at most {limits.FOLLOWERS}), so "
                f"try again in {limits.BUSY_RETRY_S} s.",
                limits.BUSY_RETRY_S,
            )
        _followers += 1
    try:
        yield
    finally:
        with _followers_lock:
            _followers -= 1


def watching(live: LiveRun) -> str:
    """The sentence saying a run is shared, for one of its watchers ("" when it has one)."""
    others = live.watchers - 1
    if others < 1:
        return ""
    return (
        f" You and {others} other{'s' * (others != 1)} are watching this run: everyone who asked for this same "
        f"race follows one run, and its times are its own."
    )


def place_text(live: LiveRun) -> str:
    """Where a run that waits for the engine stands: the runs ahead of it and their predicted time, then its own."""
    ahead, seconds = QUEUE.ahead(live)
    own = f"up to about {duration(live.promised_s)}" if live.promised_s is not None else "its time not predicted"
    if not ahead:
        return f"Next on the engine: no run is ahead of this one; this race {own}."
    before = (
        f"up to about {duration(seconds)} before it starts (each run's bound from the expected wait)"
        if seconds is not None
        else f"their time not predicted (each at most {limits.RUN_BUDGET_S:g} s)"
    )
    return (
        f"Waiting for the engine: {ahead} run{'s' * (ahead != 1)} ahead of this one, {before}; then this race, {own}."
    )


def status_of(live: LiveRun) -> str:
    """The race's status line for one of its watchers: its place while it waits, then its lanes; shared or not."""
    if live.started or live.ended:
        return live.status() + watching(live)
    return place_text(live) + watching(live)


def long_wait(live: LiveRun) -> bool:
    """Whether a run waits long enough for the page to offer the race in the visitor's browser beside it."""
    if live.started or live.ended:
        return False
    _, seconds = QUEUE.ahead(live)
    return seconds is None or seconds > limits.LONG_WAIT_S


_offers = itertools.count(1)  # each offer a new value, so that the page redraws the same sentence sent twice
NO_OFFER = json.dumps({"text": ""})


def offer(text: str, settings: tuple) -> str:
    """The sidebar's offer (app/static/lade-handoff.js draws it): a sentence, and the race as asked for the panel
    "Race it in your browser" (its prompt, W, N, G and new tokens; what that race cannot take is said)."""
    prompt, window, ngram, guess, max_new, pool, temperature, top_p, seed, methods = settings
    differs = []
    if methods not in (None, ["lookahead"], ("lookahead",)):
        differs.append("it races lookahead alone against greedy decoding")
    if isinstance(temperature, int | float) and temperature > 0:
        differs.append("it decodes greedily")
    note = f" (The race in your browser is the same prompt and W, N, G; {' and '.join(differs)}.)" if differs else ""
    race = {"prompt": prompt, "window": window, "ngram": ngram, "guess": guess, "max_new_tokens": max_new}
    return json.dumps({"text": text + note, "race": race, "n": next(_offers)}, ensure_ascii=False)
