"""Request bodies in flight: admitted before a byte of them is read, and read against a clock.

A body is held whole in memory (the guard reads an event's, the `runs` route a trace file's) and uvicorn neither
bounds how many arrive at once nor times one that stalls: 40 connections each holding back the last byte of an 8 MiB
body cost +317 to +408 MB, and much of it stayed after they closed. So, before any of a body is read:

- it is counted at its Content-Length (or, stated none, at the most its route takes) against `BODY_BYTES_IN_FLIGHT`
  for the whole server, until its request is answered (the bytes are held that long): past it, 503 with a retry time;
- a client may have `BODIES_PER_CLIENT` bodies still arriving: one more, 429 (a body that has arrived whole no longer
  counts here, so a page's burst of small events is never refused);
- once admitted, it is read by `Reader`: a body with no byte for `BODY_IDLE_S`, or not whole after `BODY_S`, is
  refused with 408 (`Stalled`), one over its route's limit with 413 (`TooLarge`).

Left out: the requests without a body (every GET), which hold no memory of the client's. `app.guard` uses these for
every POST; the limits are declared in `app.limits`.
"""

from __future__ import annotations

import asyncio
import time

from . import limits


class TooLarge(Exception):
    """A body past the most its route takes."""


class Stalled(Exception):
    """A body that stopped arriving (no byte for the idle time) or took longer than the whole body may."""


class Bodies:
    """The bodies the server is receiving or holding: bytes reserved in all, bodies still arriving per client."""

    def __init__(self, total_bytes: int = limits.BODY_BYTES_IN_FLIGHT, per_client: int = limits.BODIES_PER_CLIENT):
        self.total_bytes, self.per_client = total_bytes, per_client
        self.held = 0
        self.arriving: dict[str, int] = {}

    def admit(self, client: str | None, size: int) -> tuple[int, str] | None:
        """None, with `size` bytes reserved and the body counted as arriving for `client` (None: not counted per
        client); else (status, why) it is refused."""
        if client is not None and self.arriving.get(client, 0) >= self.per_client:
            return 429, (
                f"You already have {self.per_client} request bodies arriving at this server (at most "
                f"{self.per_client} at once per visitor): let them finish and try again."
            )
        if self.held + size > self.total_bytes:
            return 503, "The server is receiving as much as it holds at once; try again in a few seconds."
        self.held += size
        if client is not None:
            self.arriving[client] = self.arriving.get(client, 0) + 1
        return None

    def arrived(self, client: str | None) -> None:
        """The body has arrived whole (or its client went away): it no longer counts as arriving."""
        if client is not None and client in self.arriving:
            self.arriving[client] -= 1
            if self.arriving[client] <= 0:
                del self.arriving[client]

    def release(self, size: int) -> None:
        """The request is answered: its bytes are no longer held."""
        self.held -= size


class Reader:
    """An ASGI `receive` that reads a body against the clock and its limit (Stalled, TooLarge), tells `on_arrived`
    once the body is whole, and after that passes every message on untimed (a stream's wait for the client to go)."""

    def __init__(
        self, receive, limit: int, on_arrived, idle_s: float = limits.BODY_IDLE_S, total_s: float = limits.BODY_S
    ):
        self._receive, self.limit, self.on_arrived, self.idle_s = receive, limit, on_arrived, idle_s
        self.deadline, self.size, self.done = time.monotonic() + total_s, 0, False

    def close(self) -> None:
        """The body is whole, refused or abandoned: tell `on_arrived`, once."""
        if not self.done:
            self.done = True
            self.on_arrived()

    async def receive(self):
        if self.done:
            return await self._receive()
        left = min(self.idle_s, self.deadline - time.monotonic())
        try:
            if left <= 0:
                raise TimeoutError
            message = await asyncio.wait_for(self._receive(), left)
        except TimeoutError:
            self.close()
            raise Stalled(self.size) from None
        if message["type"] != "http.request":  # the client went away
            self.close()
            return message
        self.size += len(message.get("body", b""))
        if self.size > self.limit:
            self.close()
            raise TooLarge(self.size)
        if not message.get("more_body", False):
            self.close()
        return message
