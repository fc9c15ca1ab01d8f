"""A Python equivalent of `createWebSocketConn` from Directus's `tests/blackbox/common/transport.ts`.

Directus's black-box WebSocket tests (ported in test_emulator_directus_blackbox.py) observe the server only through
that helper, so the port keeps its rules:

* on open it sends the configured `auth` message (email+password, access_token or refresh_token);
* it answers every server `{"type":"ping"}` with `{"type":"pong"}` unless `respond_to_ping` is off, and such
  pings are not recorded;
* the first `auth` reply after its own auth message is swallowed (it completes the "open" state);
* every other message is filed under its `uid` when the uid is truthy (JavaScript object keys, so `1` and `"1"`
  are one list), else in the default list;
* "OPEN" means the socket is open and, when an auth message was sent, its reply arrived;
* reads wait up to 5 s (`waitTimeout`), polling as the original does.
"""
from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import websockets

CONNECTING, OPEN, CLOSED = "CONNECTING", "OPEN", "CLOSED"
WAIT_TIMEOUT = 5.0  # transport.ts defaults.waitTimeout (ms 5000)
POLL = 0.005        # transport.ts polls every 5 ms


def _key(uid: Any) -> str | None:
    """The bucket a uid files into: JavaScript's truthiness and String(uid) for object keys."""
    if uid is None or uid is False or uid == "" or uid == 0:
        return None
    if isinstance(uid, float) and uid.is_integer():
        return str(int(uid))
    return str(uid)


class BlackboxSocket:
    """One connection, read in the background from `start()` until it closes."""

    def __init__(self, url: str, auth: dict[str, str] | None = None, respond_to_ping: bool = True):
        self.url = url
        self.auth = auth
        self.respond_to_ping = respond_to_ping
        self.state = CONNECTING
        self.ever_opened = False
        self.auth_completed = False
        self.default: list[dict[str, Any]] = []
        self.by_uid: dict[str, list[dict[str, Any]]] = {}
        self.read_default = 0
        self.read_by_uid: dict[str, int] = {}
        self.ws: Any = None
        self.task: asyncio.Task | None = None

    def start(self) -> "BlackboxSocket":
        self.task = asyncio.get_running_loop().create_task(self._run())
        return self

    async def _run(self) -> None:
        try:
            self.ws = await websockets.connect(self.url, ping_interval=None, max_size=None, open_timeout=5)
        except (OSError, websockets.InvalidHandshake, asyncio.TimeoutError):
            self.state = CLOSED  # a refused upgrade: the browser WebSocket goes from CONNECTING to CLOSED
            return
        self.state = OPEN
        self.ever_opened = True
        try:
            if self.auth is not None:
                await self.ws.send(json.dumps({"type": "auth", **self.auth}))
            async for raw in self.ws:
                self._received(json.loads(raw))
        except websockets.ConnectionClosed:
            pass
        finally:
            self.state = CLOSED

    def _received(self, message: dict[str, Any]) -> None:
        if self.respond_to_ping and message.get("type") == "ping":
            asyncio.get_running_loop().create_task(self._send({"type": "pong"}))
            return
        if self.auth is not None and not self.auth_completed and message.get("type") == "auth":
            self.auth_completed = True
            return
        self._bucket(message.get("uid")).append(message)

    def _bucket(self, uid: Any) -> list[dict[str, Any]]:
        key = _key(uid)
        return self.default if key is None else self.by_uid.setdefault(key, [])

    async def _send(self, message: dict[str, Any]) -> None:
        try:
            await self.ws.send(json.dumps(message))
        except websockets.ConnectionClosed:
            pass

    def _reached(self, state: str) -> bool:
        if self.state != state:
            return False
        return state != OPEN or self.auth is None or self.auth_completed

    async def wait_for_state(self, state: str, timeout: float = WAIT_TIMEOUT) -> None:
        """`waitForState`: raises when the state is not reached within `timeout`."""
        deadline = time.monotonic() + timeout
        while not self._reached(state):
            if time.monotonic() >= deadline:
                raise AssertionError(f"WebSocket failed to achieve the {state} state")
            await asyncio.sleep(POLL)

    async def wait_connected(self, timeout: float = WAIT_TIMEOUT) -> None:
        """Until the upgrade is answered: open, or closed without opening (refused)."""
        deadline = time.monotonic() + timeout
        while self.state == CONNECTING and time.monotonic() < deadline:
            await asyncio.sleep(POLL)

    async def send_message(self, message: dict[str, Any]) -> None:
        """`sendMessage`: waits for OPEN, then sends (keys whose value is None are left out, like undefined)."""
        await self.wait_for_state(OPEN)
        await self.ws.send(json.dumps({k: v for k, v in message.items() if v is not None}))

    async def get_messages(self, count: int, uid: Any = None, timeout: float = WAIT_TIMEOUT) -> list[dict[str, Any]]:
        """`getMessages`: the next `count` unread messages of that uid (or of the default list)."""
        key = _key(uid)
        target = self.default if key is None else self.by_uid.setdefault(key, [])
        start = self.read_default if key is None else self.read_by_uid.get(key, 0)
        end = start + count
        if key is None:
            self.read_default = end
        else:
            self.read_by_uid[key] = end
        await self.wait_for_state(OPEN)
        deadline = time.monotonic() + timeout
        while len(target) < end:
            if time.monotonic() >= deadline:
                raise AssertionError(f"Missing message for {uid!r} (received {len(target) - start}/{count})")
            await asyncio.sleep(POLL)
        return target[start:end]

    def message_count(self, uid: Any = None) -> int:
        """`getMessageCount`: every message filed under that uid (or in the default list), read or not."""
        key = _key(uid)
        return len(self.default) if key is None else len(self.by_uid.get(key, []))

    async def subscribe(self, collection: str, uid: Any = None, event: str | None = None) -> dict[str, Any]:
        """`subscribe`: sends it and returns the first reply of that uid; an error reply fails."""
        await self.send_message({"type": "subscribe", "collection": collection, "uid": uid, "event": event})
        reply = (await self.get_messages(1, uid))[0]
        assert reply.get("status") != "error", f'Unable to subscribe to "{collection}": {reply}'
        return reply

    async def unsubscribe(self, uid: Any = None) -> None:
        """`unsubscribe`: sends it and waits for the acknowledgement of that uid."""
        await self.send_message({"type": "unsubscribe", "uid": uid})
        reply = (await self.get_messages(1, uid))[0]
        assert reply.get("status") != "error", f"Unable to unsubscribe {uid!r}: {reply}"

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self.task is not None:
            await asyncio.wait([self.task], timeout=2)
