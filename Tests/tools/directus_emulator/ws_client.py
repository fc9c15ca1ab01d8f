"""One socket connection: its state, accountability, subscriptions and how frames leave it."""
from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass
from typing import Any, Callable

from aiohttp import web

from . import frames, jsonutil
from .permissions import Accountability
from .query import Query

_ids = itertools.count(1)

# Connection states. `handshake`: waiting for the first frame (docs/directus-protocol.md §2.2); `authenticating`: the
# first frame is being checked and anything else that arrives is lost; `open`: established (in the controller's client
# list).
HANDSHAKE, AUTHENTICATING, OPEN, CLOSING, CLOSED = "handshake", "authenticating", "open", "closing", "closed"

CLOSE_GRACE_SECONDS = 2.0  # how long a server-initiated close waits for the peer's close frame


@dataclass
class Subscription:
    """A registered subscription (§5.2): uid stored as String(uid), item as String(item)."""

    uid: str | None
    collection: str
    event: str | None
    item: str | None
    query: Query
    raw_query: Any

    def describe(self) -> dict[str, Any]:
        return {"uid": self.uid, "collection": self.collection, "event": self.event, "item": self.item,
                "query": self.raw_query}


class Client:
    """A WebSocket peer. Frames are written to the transport directly (see frames.py)."""

    def __init__(self, ws: web.WebSocketResponse, request: web.Request, on_close: Callable[["Client", str], None],
                 muted: Callable[[], bool] = lambda: False):
        self.id = next(_ids)
        self.muted = muted  # the `silent` setting: nothing leaves, nothing is closed, while it holds
        self.ws = ws
        self.transport = request.transport
        self.ip = request.remote
        self.user_agent = request.headers.get("User-Agent")
        self.origin = request.headers.get("Origin")
        self.connected_at = time.time()
        self.state = HANDSHAKE
        self.peer_close_code: int | None = None  # the code of a close frame the client sent
        self.accountability: Accountability | None = None
        self.expires_at_ms: float | None = None
        self.subscriptions: list[Subscription] = []
        self.expiry_timer: asyncio.TimerHandle | None = None
        self.reauth_deadline: asyncio.TimerHandle | None = None  # set between TOKEN_EXPIRED and AUTH_TIMEOUT
        self.handshake_timer: asyncio.TimerHandle | None = None
        self.rate_window_start = 0.0
        self.rate_count = 0
        self.close_reason: str | None = None
        self._on_close = on_close
        self._grace: asyncio.TimerHandle | None = None
        self.replaying = False  # a direct blast owns the socket's writes (blast.py): nothing else may be written

    @property
    def writable(self) -> bool:
        return self.state in (HANDSHAKE, AUTHENTICATING, OPEN) and self.transport is not None \
            and not self.transport.is_closing() and not self.muted() and not self.replaying

    def send(self, message: dict[str, Any]) -> None:
        if self.writable:
            self.transport.write(frames.text(jsonutil.dumpb(message)))

    def send_bytes(self, data: bytes) -> None:
        if self.writable:
            self.transport.write(data)

    def close(self, reason: str) -> None:
        """Directus's `client.close()`: a close frame without a status code (§7.1), then wait for the peer's."""
        if self.state in (CLOSING, CLOSED) or self.muted():
            return
        self.send_bytes(frames.CLOSE_WITHOUT_CODE)
        self.mark_closing(reason)
        loop = asyncio.get_running_loop()
        self._grace = loop.call_later(CLOSE_GRACE_SECONDS, lambda: frames.drop(self.transport, reset=False))

    def drop(self, reason: str, reset: bool = True) -> None:
        """Ends the TCP connection without a close frame (peer sees 1006)."""
        if self.state == CLOSED:
            return
        self.mark_closing(reason)
        frames.drop(self.transport, reset)

    def peer_closed(self, code: int | None) -> None:
        """The peer sent a close frame: answer it (unless we started the close) and end the connection."""
        self.peer_close_code = code
        if self.state not in (CLOSING, CLOSED):
            self.send_bytes(frames.close(code))
            self.mark_closing("client")
        if self.transport is not None:
            self.transport.close()

    def finished(self) -> None:
        """The connection is gone (called once by the endpoint when its read loop ends)."""
        if self.state != CLOSED:
            self.mark_closing("connection_lost")
        self.state = CLOSED
        self.cancel_timers()
        if self._grace is not None:
            self._grace.cancel()

    def cancel_timers(self) -> None:
        for timer in (self.expiry_timer, self.reauth_deadline, self.handshake_timer):
            if timer is not None:
                timer.cancel()
        self.expiry_timer = self.reauth_deadline = self.handshake_timer = None

    def mark_closing(self, reason: str) -> None:
        """Records why the connection ends (first reason wins) and stops its timers."""
        if self.close_reason is None:
            self.close_reason = reason
            self._on_close(self, reason)
        if self.state != CLOSED:
            self.state = CLOSING
        self.cancel_timers()

    def describe(self) -> dict[str, Any]:
        acc = self.accountability
        return {
            "id": self.id,
            "state": self.state,
            "user": acc.user if acc else None,
            "public": bool(acc and acc.public),
            "expires_at_ms": self.expires_at_ms,
            "subscriptions": [s.describe() for s in self.subscriptions],
        }
