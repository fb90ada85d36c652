"""Runs the page pulls by handle: the one place the server keeps a run's view data, shared by every session.

A handle names a run: a gallery run by its name; any other run (an uploaded trace, a finished live or ZeroGPU run)
by a keyed hash of its content (`u-...`: the same run always gets the same handle in this process, but a handle cannot
be computed from a file without this server's key, so asking whether one is held says nothing of what others opened);
a live run still being recorded by a random token (`live-...`, unguessable, so one session cannot read another's
race). The page reads a handle at its address, `runs/<handle>.json` (app/routes.py), and gets the run's payload, or,
for a live run, the steps it does not have yet. The component value the server sends carries only the handle, so what
a session costs the server does not depend on what its client does with it.

A finished run is kept as its payload's JSON text, zlib-compressed (a run's view data is 3.8 MB of JSON at the
largest public settings, about ten times that as Python objects, and a tenth of it compressed), and is answered as
that text (`payload_text`, which the route sends as it is). Bounds (`limits`): at most `STORE_RUNS` runs and
`STORE_BYTES` of compressed payloads; a live run counts at its size when it finishes. A handle that was dropped
answers with a message saying so. Which run goes, the share rules (a client is counted as the guard counts it,
`guard.counted_client`: its address, an IPv6 address by its /64):

1. **Share**: the runs a client added count against at most 1/`STORE_SHARE` of both bounds; past its share its own
   least recently used runs go, never another client's. A run added by a second client stays its first owner's;
   with no owner named it is in no share.
2. **At the store's bounds**, the run that goes is the least recently used of the client that holds the most runs
   (the most bytes, when the bytes are past their bound), where a run is held by the client that last added *or
   opened* it: so a flood from many addresses, each within its share, drops its own runs first, and a run someone
   opened recently (a lecture's link, opened by each student) is held by a reader with few runs and stays.

No run is promised a fixed time: a promise would have to refuse new runs once the store is full of young ones, which
lets a flood lock every other visitor out (what the shares prevent). What a link can say instead is `held`: how full
the store is and, when full, how long ago the run it would drop next was last opened, and whether a restart keeps it
(the page says it when a link to a live or opened run is copied).

**Memory or disk.** By default the store is in memory, and a restart of the server drops every run. Where a folder is
configured (`persist`: `python app.py --runs-dir DIR`, or `LADE_RUNS_DIR`; a Space's persistent `/data`), finished
runs are kept there in an SQLite database (the standard library's `sqlite3`, written through as the store changes:
each run's compressed payload, its size, owner, holder and when it was last used), within exactly the same bounds
and share rules as in memory, and read back when the server starts; the handles' key is kept beside it (`store.key`,
readable by the server's user alone), so a link made before a restart names the same run after it. A live run still
recording is not kept on disk (a restart ends it).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import sqlite3
import threading
import time
import zlib
from collections import OrderedDict
from pathlib import Path

from lade_core import RunTrace
from lade_core.schema import build

from . import gallery, limits
from .render.payload import Held, as_text, payload

DATABASE, KEY = "runs.sqlite3", "store.key"  # in a persistent folder (`RunStore.persist`)


class _OnDisk:
    """An entry whose payload is in the database, read when asked for."""


ON_DISK = _OnDisk()


class Gone(KeyError):
    """A handle that names no run this server holds (never made, or dropped to keep the store bounded)."""


def pack(data: dict) -> bytes:
    """A payload as compressed JSON text."""
    return zlib.compress(as_text(data).encode("utf-8"), 6)


def unpack(blob: bytes) -> str:
    return zlib.decompress(blob).decode("utf-8")


class RunStore:
    def __init__(
        self, max_entries: int = limits.STORE_RUNS, max_bytes: int = limits.STORE_BYTES, share: int = limits.STORE_SHARE
    ):
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self.client_entries, self.client_bytes = max(1, max_entries // share), max_bytes // share
        self._entries: OrderedDict[str, tuple[object, int]] = (
            OrderedDict()
        )  # handle -> (packed payload or live run, bytes)
        self._owners: dict[str, str | None] = {}  # handle -> the client that added it first (None: none named)
        self._holders: dict[str, str | None] = {}  # handle -> the client that last added or opened it
        self._key = secrets.token_bytes(32)  # this process's: a content handle cannot be computed without it
        self._used: dict[str, float] = {}  # handle -> when it was last added or opened (`_now`)
        self._bytes = 0
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None  # where finished runs are kept across restarts (`persist`)

    def _now(self) -> float:
        """The store's clock: the wall's where runs outlive the process, else monotonic."""
        return time.time() if self._db is not None else time.monotonic()

    def persist(self, folder: Path) -> None:
        """Keep finished runs in `folder` from now on (the module's docstring), and hold again the runs kept there
        before, least recently used first out, within this store's bounds (a store made with smaller bounds drops the
        excess as it would in memory). Call before the first run is added."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(folder / DATABASE, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute(
            "CREATE TABLE IF NOT EXISTS runs (handle TEXT PRIMARY KEY, payload BLOB NOT NULL, size INTEGER NOT NULL,"
            " owner TEXT, holder TEXT, used REAL NOT NULL)"
        )
        with self._lock:
            self._key, self._db = _kept_key(folder / KEY), db
            rows = db.execute("SELECT handle, size, owner, holder, used FROM runs ORDER BY used").fetchall()
            for handle, size, owner, holder, used in rows:
                self._entries[handle] = (ON_DISK, size)
                self._owners[handle], self._holders[handle], self._used[handle] = owner, holder, used
                self._bytes += size
            while len(self._entries) > 1 and (len(self._entries) > self.max_entries or self._bytes > self.max_bytes):
                self._drop(self._next_out(by_bytes=len(self._entries) <= self.max_entries))

    @property
    def persistent(self) -> bool:
        return self._db is not None

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def bytes(self) -> int:
        return self._bytes

    def _put(self, handle: str, item, size: int, owner: str | None = None) -> None:
        adder = owner  # holds the run now; `owner` stays the first adder's
        with self._lock:
            if handle in self._entries:
                self._bytes -= self._entries.pop(handle)[1]
                owner = self._owners.get(handle, owner)  # the run stays its first owner's: a second client's
                # copy must not make it nobody's (and so outside every share)
            self._holders[handle] = adder if adder is not None else self._holders.get(handle)
            self._owners[handle] = owner
            self._used[handle] = self._now()
            if self._db is not None and isinstance(item, bytes):  # written through: the database is the store
                self._db.execute(
                    "INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?, ?)",
                    (handle, item, size, owner, self._holders[handle], self._used[handle]),
                )
                item = ON_DISK
            self._entries[handle] = (item, size)
            self._bytes += size
            if owner is not None:
                self._within_share(owner, handle)
            while len(self._entries) > 1 and (len(self._entries) > self.max_entries or self._bytes > self.max_bytes):
                self._drop(self._next_out(by_bytes=len(self._entries) <= self.max_entries))

    def _next_out(self, by_bytes: bool = False) -> str:
        """The run that goes next: the least recently used of the client holding the most runs (or bytes)."""
        held: dict[str | None, list] = {}
        for handle, (_, size) in self._entries.items():  # least recently used first
            mine = held.setdefault(self._holders.get(handle), [0, 0, handle])
            mine[0], mine[1] = mine[0] + 1, mine[1] + size
        return max(held.values(), key=lambda h: (h[1] if by_bytes else h[0], -self._used[h[2]]))[2]

    def _within_share(self, owner: str, newest: str) -> None:
        """Drop `owner`'s least recently used runs (never `newest`) while its runs pass its share."""
        mine = [h for h in self._entries if self._owners.get(h) == owner]  # least recently used first
        count, held = len(mine), sum(self._entries[h][1] for h in mine)
        for handle in mine:
            if handle == newest or (count <= self.client_entries and held <= self.client_bytes):
                break
            count, held = count - 1, held - self._entries[handle][1]
            self._drop(handle)

    def _drop(self, handle: str) -> None:
        self._bytes -= self._entries.pop(handle)[1]
        if self._db is not None:
            self._db.execute("DELETE FROM runs WHERE handle = ?", (handle,))
        self._owners.pop(handle, None)
        self._holders.pop(handle, None)
        self._used.pop(handle, None)

    def add_run(self, run: RunTrace, data: dict | None = None, owner: str | None = None) -> str:
        """Keep a finished run's payload, in `owner`'s share; its handle (the same run always gets the same handle)."""
        text = run.to_json()
        handle = "u-" + hmac.new(self._key, text.encode("utf-8"), hashlib.sha256).hexdigest()[:20]
        blob = pack(data if data is not None else payload(run))
        self._put(handle, blob, len(blob), owner)
        return handle

    def add_live(self, live, owner: str | None = None) -> str:
        """Keep a live run (anything with `pull(since)`) while it records, in `owner`'s share; `finish` swaps in its
        payload."""
        handle = "live-" + secrets.token_urlsafe(12)
        self._put(handle, live, 0, owner)
        return handle

    def finish(self, handle: str, run: RunTrace, owner: str | None = None) -> None:
        """A live run ended: keep its whole payload under the same handle, in `owner`'s share (its live run's)."""
        blob = pack(payload(run))
        self._put(handle, blob, len(blob), owner)

    def get(self, handle: str, since=None, client: str | None = None) -> dict:
        """{"payload_text": JSON} for a whole run, or {"delta": ...} of a live run's steps after `since` (steps per
        lane the page has); Gone if there is no such run. Opened by `client`, who holds it now (None: as it was)."""
        if not isinstance(handle, str):
            raise Gone(handle)
        if handle in gallery.names():
            return {"payload_text": unpack(gallery_packed(handle))}
        with self._lock:
            entry = self._entries.get(handle)
            if entry is None:
                raise Gone(handle)
            self._entries.move_to_end(handle)
            self._used[handle] = self._now()
            if client is not None:
                self._holders[handle] = client
            item = self._stored(handle) if entry[0] is ON_DISK else entry[0]
        if isinstance(item, bytes):
            return {"payload_text": unpack(item)}
        return item.pull(since)

    def _stored(self, handle: str) -> bytes:
        """A run's payload from the database, its use recorded there (under the lock)."""
        db = self._db
        assert db is not None
        db.execute(
            "UPDATE runs SET used = ?, holder = ? WHERE handle = ?",
            (self._used[handle], self._holders.get(handle), handle),
        )
        return db.execute("SELECT payload FROM runs WHERE handle = ?", (handle,)).fetchone()[0]

    def held(self, handle: str) -> Held:
        """Whether the store holds `handle` (a gallery run always), how many runs it holds and its bounds (the whole
        store's and one client's), and, once a new run may drop one (the count at its bound, or the bytes within one
        client's share of theirs), how many seconds ago the run it would drop next was last opened (None before).
        Asking does not count as opening."""
        with self._lock:
            full = len(self._entries) >= self.max_entries or self._bytes > self.max_bytes - self.client_bytes
            first = self._next_out(by_bytes=len(self._entries) < self.max_entries) if full and self._entries else None
            return {
                "held": handle in gallery.names() or handle in self._entries,
                "gallery": handle in gallery.names(),
                "persistent": self._db is not None,  # whether a restart of the server keeps it
                "runs": len(self._entries),
                "most_runs": self.max_entries,
                "most_mib": round(self.max_bytes / 2**20),
                "client_runs": self.client_entries,
                "client_mib": round(self.client_bytes / 2**20),
                "next_out_opened_s": round(self._now() - self._used[first]) if full and first else None,
            }

    def run(self, handle: str) -> RunTrace | None:
        """The RunTrace behind a handle, for downloads: a gallery run, a finished run, or a live run so far."""
        if handle in gallery.names():
            return gallery.load(handle)
        with self._lock:
            entry = self._entries.get(handle)
            if entry is not None and entry[0] is ON_DISK:
                entry = (self._db.execute("SELECT payload FROM runs WHERE handle = ?", (handle,)).fetchone()[0], 0)
        if entry is None:
            return None
        item = entry[0]
        return build(RunTrace, json.loads(unpack(item))["trace"], "run") if isinstance(item, bytes) else item.partial()


def _kept_key(path: Path) -> bytes:
    """The handles' key kept at `path` (made there the first time, readable by this user alone)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        key = path.read_bytes()
        if len(key) != 32:
            raise ValueError(f"{path}: a store's key is 32 bytes, this file has {len(key)}") from None
        return key
    key = secrets.token_bytes(32)
    with os.fdopen(fd, "wb") as f:
        f.write(key)
    return key


_gallery_packed: dict[str, bytes] = {}
_gallery_locks: dict[str, threading.Lock] = {}
_gallery_lock = threading.Lock()


def gallery_packed(name: str) -> bytes:
    """A gallery run's payload, derived once per process and kept compressed (KeyError for a name not in the
    gallery). Each run is derived under its own lock: a reader of one never waits for another's derivation."""
    packed = _gallery_packed.get(name)
    if packed is not None:
        return packed
    if name not in gallery.names():
        raise KeyError(name)
    with _gallery_lock:
        lock = _gallery_locks.setdefault(name, threading.Lock())
    with lock:
        if name not in _gallery_packed:
            _gallery_packed[name] = pack(payload(gallery.load(name)))
        return _gallery_packed[name]


def warm_gallery(first: list[str]) -> threading.Thread:
    """Derive every gallery run's payload in a background thread, `first` first (the lesson's runs), so that no
    visitor waits for one: a class opening the lesson at once had waited for its first reader's derivation (the
    lesson's run, about 0.4 to 2.8 s of CPU on this 2-core host: 1.73 s at p95 over 100 readers in 10 s)."""

    def derive() -> None:
        for name in dict.fromkeys([*first, *gallery.names()]):
            try:
                gallery_packed(name)
            except Exception:  # a gallery run that cannot be derived is refused when it is opened, with its reason
                continue

    thread = threading.Thread(target=derive, name="lade-gallery-warm", daemon=True)
    thread.start()
    return thread


def payload_of(answer: dict) -> dict | None:
    """The payload in an answer of `RunStore.get` (as text or, from a live run so far, as data), as data."""
    if "payload_text" in answer:
        return json.loads(answer["payload_text"])
    return answer.get("payload")


STORE = RunStore()
