"""The runs the page pulls by handle (app/store.py) and the few bytes the server sends the stage (app/stage.py),
without a model, a server or a browser: the store is bounded by entries and by bytes, least recently used first
out; a dropped or unknown handle answers with a message; gallery runs need no entry; the same run always gets the
same handle; live handles are unguessable; and every value a handler gives the stage stays under 1 KB, whatever
link it was given (so what Gradio keeps per session does not grow with the run; a posted file: tests/test_routes.py).
"""

import asyncio
import concurrent.futures
import dataclasses
import json
import threading
import time
import types

import pytest
from hostile_cases import base_doc, dumps

from app import events, gallery, stage, zerogpu
from app.store import Gone, RunStore, pack, payload_of
from lade_core import parse_run

VALUE_BYTES = 1024
SMALL = parse_run(dumps(base_doc("greedy")))  # a recorded run cut to its first steps: cheap to derive


def variant(title: str):
    """The small run under another title: a different run (another handle), the same size."""
    return dataclasses.replace(SMALL, title=title)


def stand_in(title: str, size: int = 1000) -> dict:
    """A stand-in payload of `size` bytes that compress poorly (the store's bounds count compressed bytes)."""
    return {"trace": {"title": title}, "derived": {"pad": bytes(range(256)).hex() * (size // 512 + 1)}}


def add(store, run, size: int = 1000) -> str:
    """Keep `run` with a stand-in payload (the store's bounds do not read payloads)."""
    return store.add_run(run, stand_in(run.title, size))


def test_the_store_keeps_at_most_max_entries_dropping_the_least_recently_used():
    store = RunStore(max_entries=3)
    runs = [variant(f"run {i}") for i in range(4)]
    handles = [add(store, r) for r in runs[:3]]
    store.get(handles[0])  # a pull is a use: handle 0 is now the most recently used
    fourth = add(store, runs[3])
    assert len(store) == 3
    with pytest.raises(KeyError):
        store.get(handles[1])  # the least recently used left first
    for handle in (handles[0], handles[2], fourth):
        assert payload_of(store.get(handle))["trace"]["title"].startswith("run ")


def test_held_says_how_full_the_store_is_and_how_long_ago_its_next_out_was_opened(monkeypatch):
    """What a copied link may say of a run (lade-page.js `heldWords`): held or not, the bounds, and once the store is
    full, the seconds since the run it would drop next was last opened; asking is not opening."""
    import app.store as store_module

    now = [1000.0]
    monkeypatch.setattr(store_module.time, "monotonic", lambda: now[0])
    store = RunStore(max_entries=3)  # no owner named: the shares do not apply
    first = add(store, variant("run a"))
    said = store.held(first)
    assert said["held"] and not said["gallery"] and said["runs"] == 1 and said["next_out_opened_s"] is None
    assert (said["most_runs"], said["client_runs"], said["most_mib"], said["client_mib"]) == (3, 1, 48, 6)
    now[0] += 60
    add(store, variant("run b"))
    now[0] += 60
    add(store, variant("run c"))
    now[0] += 30
    assert store.held(first)["next_out_opened_s"] == 150  # full: run a, added 150 s ago, goes next
    assert store.held(first)["next_out_opened_s"] == 150  # asking did not make it recent
    store.get(first)  # opening it does: run b is next out, added 90 s ago
    assert store.held(first)["next_out_opened_s"] == 90
    assert store.held("u-" + "0" * 20)["held"] is False
    assert store.held(gallery.names()[0])["held"] and store.held(gallery.names()[0])["gallery"]


def test_the_store_keeps_at_most_max_bytes():
    """Entries leave, oldest first, until the payloads fit the byte bound; the count follows each entry's size."""
    one = len(pack(stand_in("a")))
    store = RunStore(max_entries=100, max_bytes=int(2.5 * one))
    handles = [add(store, variant(t)) for t in "abcd"]
    assert len(store) == 2 and store.bytes <= 2.5 * one
    assert [h in store._entries for h in handles] == [False, False, True, True]
    assert store.bytes == sum(size for _, size in store._entries.values())


def test_a_dropped_handle_answers_with_a_message():
    """A run the server no longer holds is Gone (the route answers a sentence: tests/test_routes.py); so is a
    handle that never existed, or one that is not a string at all."""
    store = RunStore(max_entries=1)
    first = add(store, variant("first"))
    add(store, variant("second"))
    for handle in (first, "u-0000", "live-nothing", None, 5, ["x"], {"a": 1}):
        with pytest.raises(Gone):
            store.get(handle)


def test_a_gallery_handle_needs_no_entry():
    store = RunStore(max_entries=1)
    for name in (gallery.by_role("lookahead"), gallery.by_role("jacobi")):
        assert payload_of(store.get(name))["trace"]["title"] == gallery.load(name).title
    assert len(store) == 0 and store.bytes == 0


def test_the_same_run_gets_the_same_handle_and_one_entry():
    store = RunStore()
    run = variant("same")
    first = store.add_run(run)  # the real payload once: store.run reads the run back from it
    size = store.bytes
    assert store.add_run(variant("same")) == first
    assert len(store) == 1 and store.bytes == size
    assert add(store, variant("other")) != first
    assert first.startswith("u-") and store.run(first) == run


def test_a_live_run_is_pulled_then_kept_whole_when_it_finishes():
    """A live handle is random (one session cannot guess another's race); pulls reach the live run with what the
    page has; once finished, the same handle answers the whole payload."""
    pulls = []
    live = types.SimpleNamespace(pull=lambda since: pulls.append(since) or {"delta": {"n": len(pulls)}})
    store = RunStore()
    handle = store.add_live(live)
    assert handle.startswith("live-") and handle != store.add_live(live) and len(handle) >= 16
    assert store.get(handle, {"parallel": 3}) == {"delta": {"n": 1}} and pulls == [{"parallel": 3}]
    store.finish(handle, SMALL)
    assert payload_of(store.get(handle, {"parallel": 3}))["trace"]["title"] == SMALL.title and len(pulls) == 1


def value_bytes(value) -> int:
    """What the stage's value costs on the wire, non-ASCII escaped (the larger of the two ways to send it)."""
    assert isinstance(value, str), value
    json.loads(value)
    return max(len(value.encode("utf-8")), len(json.dumps(value)))


def test_every_stage_value_is_small():
    """The stage's value names what to show, never the run: the largest each builder can make stays under 1 KB."""
    handle = "u-" + "f" * 20
    values = [
        stage.show(handle, "last", "explorer", 8, {"view": "trajectory-view"}, "Live run stopped."),
        stage.show("chat-sleep-adaptive-W7N4G7", 99999, "lesson", 8, {"lesson": True}),
        stage.lesson(8, True, "There is no chapter “" + "é" * 40 + "…” (chapters 1 to 8); showing chapter 1."),
        stage.live("live-" + "x" * 16, "Live race: lookahead at step 511, greedy at step 511.", True),
        stage.notice("No live runs here: " + "x" * 300),
    ]
    for value in values:
        assert value_bytes(value) < VALUE_BYTES, value


@pytest.mark.parametrize("name", ["", None, "x" * 5000, "<img src=x>", "code-fib-W7N4G7"])
def test_the_gallery_menu_gives_the_stage_a_small_value(name):
    """A choice opens the run by name; leaving the menu without one changes nothing (it used to say "No gallery
    run is called None."); a name the gallery lacks gets a short plain-text notice."""
    out = events.open_gallery(name)
    if isinstance(out, str):
        assert value_bytes(out) < VALUE_BYTES
    if not name:
        assert isinstance(out, dict) and out.get("__type__") == "update" and len(out) == 1
    elif name in gallery.names():
        assert json.loads(out)["run"] == name
    else:
        notice = json.loads(out)["notice"]
        assert notice == "No gallery run has that name; the gallery menu lists them."  # nothing of it echoed
        assert len(notice) < 120


def collect(generator) -> list:
    """What an event's async generator yields (`events.run_live`), run to its end."""

    async def drain():
        return [value async for value in generator]

    # in a thread of its own: a browser test earlier in this process may hold this thread's event loop (Playwright)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, drain()).result()


def test_a_zerogpu_run_is_sent_by_handle(monkeypatch):
    """ZeroGPU computes the whole run in one call; the page still gets only its handle."""
    run = SMALL
    fake_lm = types.SimpleNamespace(name="fake", encode_prompt=lambda prompt: [1, 2, 3], max_positions=8192)
    monkeypatch.setattr(events.MODEL, "get", lambda: fake_lm)
    monkeypatch.setattr(zerogpu, "available", lambda: True)
    monkeypatch.setattr(zerogpu, "record_on_gpu", lambda *args: run)
    request = types.SimpleNamespace(session_hash="store-test")
    outputs = collect(events.run_live("Write fib", 5, 3, 4, 24, "paper", 0.0, 1.0, 0, ["lookahead"], request))
    assert len(outputs) == 1 and value_bytes(outputs[0][0]) < VALUE_BYTES
    message = json.loads(outputs[0][0])
    assert message["run"].startswith("live-") and payload_of(events.STORE.get(message["run"]))


def test_one_client_cannot_empty_the_store_for_everyone():
    """Issue 39, finding 2: 260 small uploads from one client in 20 s evicted every other visitor's run. A client's
    runs count against its share (1/limits.STORE_SHARE of the runs and of the bytes): past it its own least recently
    used go, never another client's; a run two clients added is neither's alone; a run with no owner counts only in the
    whole."""
    store = RunStore(max_entries=16, max_bytes=10**9, share=4)  # a client's share: 4 runs
    visitor = add_as(store, variant("the visitor's run"), "10.0.0.1")
    both = add_as(store, variant("a shared file"), "10.0.0.1")
    add_as(store, variant("a shared file"), "10.0.0.2")
    flood = [add_as(store, variant(f"flood {i}"), "10.0.0.2") for i in range(260)]
    assert payload_of(store.get(visitor))["trace"]["title"] == "the visitor's run"
    assert both in store._entries
    assert [h in store._entries for h in flood[-5:]] == [False, True, True, True, True]  # the flood's last 4
    assert len(store) == 6
    one = len(pack(stand_in("a", 4000)))
    by_bytes = RunStore(max_entries=100, max_bytes=10 * one, share=4)  # a share: 2.5 payloads, so 2
    kept = add_as(by_bytes, variant("kept"), "10.0.0.1", 4000)
    for i in range(20):
        add_as(by_bytes, variant(f"big {i}"), "10.0.0.2", 4000)
    assert kept in by_bytes._entries and len(by_bytes) == 3


def add_as(store, run, client: str, size: int = 1000) -> str:
    return store.add_run(run, stand_in(run.title, size), owner=client)


def test_a_flood_from_many_clients_drops_its_own_runs_and_keeps_runs_opened_recently():
    """Issue 54, item 6: each client's share held, but 27 addresses, each within its share, evicted every other
    visitor's run in 1 s (the store dropped its least recently used run whoever held it). At the store's bounds the
    run that goes is the least recently used of the client holding the most, a run held by whoever last added or
    opened it: a visitor's run and a lecturer's run its students opened stay; the flood's runs go."""
    store = RunStore(max_entries=16, max_bytes=10**9, share=4)
    visitor = add_as(store, variant("the visitor's run"), "10.0.0.1")
    lecture = add_as(store, variant("the lecture's run"), "10.0.0.2")
    for student in range(3):
        store.get(lecture, client=f"10.0.1.{student}")  # opened: held by its last reader
    floods = [[add_as(store, variant(f"flood {k} {i}"), f"10.0.2.{k}") for i in range(4)] for k in range(8)]
    assert visitor in store._entries and lecture in store._entries
    assert len(store) == 16 and all(any(h in store._entries for h in flood) for flood in floods)
    by_bytes = RunStore(max_entries=100, max_bytes=6 * len(pack(stand_in("a", 4000))), share=2)
    kept = add_as(by_bytes, variant("kept"), "10.0.0.1", 4000)
    for k in range(6):
        for i in range(3):
            add_as(by_bytes, variant(f"big {k} {i}"), f"10.0.3.{k}", 4000)
    assert kept in by_bytes._entries


def test_a_content_hash_names_no_run_here():
    """Issue 54, observation: `held.json` answered whether any given content hash was held (the handle was the
    run's sha256), an oracle for what others opened; a handle is keyed by this server's secret now, still one per
    run (the same run posted twice is one entry)."""
    import hashlib

    store = RunStore()
    run = variant("opened by someone")
    handle = store.add_run(run, stand_in(run.title))
    guessed = "u-" + hashlib.sha256(run.to_json().encode("utf-8")).hexdigest()[:20]
    assert guessed != handle and store.held(guessed)["held"] is False and store.held(handle)["held"] is True
    with pytest.raises(Gone):
        store.get(guessed)
    assert store.add_run(variant("opened by someone"), stand_in(run.title)) == handle and len(store) == 1


def test_a_cancelled_run_is_not_kept_whole_for_settling(monkeypatch):
    """Issue 54, observation: a cancelled live run stayed whole in `events._ended` (the last run of each of up to
    300 sessions, about 0.5 GiB) until the page settled it, and an API client never does; the session keeps the
    run's handle and a weak reference, so a run the app let go of is freed, and the store keeps what it recorded."""
    import gc
    import weakref

    fake_lm = types.SimpleNamespace(name="fake", encode_prompt=lambda prompt: [1, 2, 3], max_positions=8192)
    monkeypatch.setattr(events.MODEL, "get", lambda: fake_lm)
    monkeypatch.setattr(zerogpu, "available", lambda: True)  # nothing starts on the engine
    live = events.start_run("Write fib", 5, 3, 4, 24, "paper", "ended-test").live
    ref, handle = weakref.ref(live), live.handle
    events.forget("ended-test", live)  # cancelled: the job's generator let go of it, the store holds its record
    events.STORE.finish(handle, SMALL, None)
    del live
    gc.collect()
    assert ref() is None, gc.get_referrers(ref())
    settled = events.settle_run(types.SimpleNamespace(session_hash="ended-test"))
    assert json.loads(settled)["run"] == handle and json.loads(settled)["notice"] == "Live run stopped."


# -- a persistent folder (issue 50): runs kept on disk, within the bounds memory has ------------------------------
def store_ops(store) -> list[str]:
    """One sequence of adds and opens from several clients, past every bound (entries, bytes, a client's share);
    the handles it made."""
    made = [add_as(store, variant(f"visitor {i}"), f"10.0.0.{i % 3}", 3000) for i in range(9)]
    store.get(made[-1], client="10.0.9.9")  # opened by a reader: held by it now
    made += [add_as(store, variant(f"flood {i}"), "10.0.5.5", 3000) for i in range(12)]
    made.append(store.add_run(variant("nobody's"), stand_in("nobody's", 3000)))
    return made


def on_disk(folder) -> tuple[int, int]:
    import sqlite3

    with sqlite3.connect(folder / "runs.sqlite3") as db:
        return db.execute("SELECT count(*), coalesce(sum(size), 0) FROM runs").fetchone()


def test_a_persistent_store_keeps_runs_across_a_restart_within_the_memory_bounds(tmp_path):
    """With a folder the store keeps its finished runs on disk: the same runs as a store in memory after the same
    adds and opens (the bounds and share rules are one code path), never more rows or bytes on disk than the bounds,
    and after a restart (a new store on the same folder) every link still opens its run, the same file still gets
    the same handle (the key is kept beside it, readable by its owner alone) and the store says a restart keeps
    runs; in memory it says none survives. On the landed code a store had no folder to keep runs in."""
    import stat

    bounds = {"max_entries": 12, "max_bytes": 8 * len(pack(stand_in("a", 3000))), "share": 3}
    memory, disk = RunStore(**bounds), RunStore(**bounds)
    disk.persist(tmp_path)
    kept = lambda store, made: [i for i, h in enumerate(made) if h in store._entries]  # noqa: E731
    in_memory, made = store_ops(memory), store_ops(disk)  # each store its own key: its own handles
    assert kept(disk, made) == kept(memory, in_memory) and len(kept(disk, made)) < len(made)  # some dropped
    held = [made[i] for i in kept(disk, made)]
    assert on_disk(tmp_path) == (len(disk), disk.bytes) and len(disk) <= 12 and disk.bytes <= bounds["max_bytes"]
    assert memory.held(in_memory[-1])["persistent"] is False and disk.held(held[0])["persistent"] is True
    assert stat.S_IMODE((tmp_path / "store.key").stat().st_mode) == 0o600
    del disk
    again = RunStore(**bounds)
    again.persist(tmp_path)  # the server restarted
    assert sorted(again._entries) == sorted(held) and again.bytes == memory.bytes
    for handle in held:
        assert payload_of(again.get(handle))["trace"]["title"].startswith(("visitor", "flood", "nobody"))
    assert again.add_run(variant("visitor 8"), stand_in("visitor 8", 3000)) == made[8]
    first, second = RunStore(), RunStore()
    first.persist(tmp_path / "real")
    real = first.add_run(SMALL)
    second.persist(tmp_path / "real")
    assert second.run(real).parallel.tokens == SMALL.parallel.tokens  # a trace comes back from disk for downloads
    smaller = RunStore(max_entries=4, max_bytes=bounds["max_bytes"], share=3)
    smaller.persist(tmp_path)  # restarted with smaller bounds: the excess goes, on disk too
    assert len(smaller) == 4 and on_disk(tmp_path)[0] == 4


def test_the_gallery_is_derived_at_start_lesson_first_and_one_runs_derivation_never_holds_up_another(monkeypatch):
    """Issue 56: 100 readers over 10 s waited up to 1.73 s (p95) for the lesson's two runs: the first reader derived
    the lesson's run (0.4 to 2.8 s of CPU here) while every other reader of any gallery run waited on one lock. The
    app now derives every gallery run in the background as it starts, the lesson's first (`warm_gallery`), and each
    run under its own lock: a reader of a run already derived never waits for another's."""
    from app import store

    names = gallery.names()
    lesson, slow = names[3], names[0]
    order, started, release = [], threading.Event(), threading.Event()

    def derive(run):
        order.append(run.title)
        if len(order) == 1:
            started.set()
            release.wait(10)  # the first derivation takes long
        return {"trace": {}, "derived": {}}

    monkeypatch.setattr(store, "_gallery_packed", {})
    monkeypatch.setattr(store, "payload", derive)
    monkeypatch.setattr(store.gallery, "load", lambda name: types.SimpleNamespace(title=name))
    first = threading.Thread(target=store.gallery_packed, args=(slow,), daemon=True)
    first.start()
    assert started.wait(10)
    t0 = time.perf_counter()
    store.gallery_packed(lesson)  # another run, while the first is still being derived
    assert time.perf_counter() - t0 < 1.0, "a reader waited for another run's derivation"
    release.set()
    first.join(10)
    order.clear()
    monkeypatch.setattr(store, "_gallery_packed", {})
    store.warm_gallery([lesson]).join(30)
    assert order[0] == lesson and sorted(order) == sorted(names) and set(store._gallery_packed) == set(names)
