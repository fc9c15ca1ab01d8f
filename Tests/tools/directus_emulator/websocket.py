"""The `/websocket` endpoint (docs/directus-protocol.md §1, §2.1, §3): upgrade decisions, the read loop and message
routing."""
from __future__ import annotations

import asyncio
import time
from typing import Any

from aiohttp import WSMsgType, web

from . import errors, jsonutil
from .auth import Auth
from .heartbeat import Heartbeat
from .reader import Reader
from .settings import Settings
from .stats import Stats
from .subscriptions import Subscriptions, validation_error
from .database import Database
from .ws_auth import SocketAuth
from .ws_client import AUTHENTICATING, HANDSHAKE, OPEN, Client


class WebSocketServer:
    """All socket clients. `clients` are the established ones (Directus's controller list)."""

    def __init__(self, db: Database, auth: Auth, reader: Reader, settings: Settings, stats: Stats):
        self.settings = settings
        self.stats = stats
        self.auth = auth
        self.connections: set[Client] = set()   # every upgraded socket, handshake phase included
        self.clients: set[Client] = set()       # established sockets
        self.heartbeat = Heartbeat(settings, stats, lambda: self.clients)
        self.subscriptions = Subscriptions(db, reader, stats, lambda: self.clients)
        self.socket_auth = SocketAuth(auth, settings, stats, self._established)
        self.refuse_until = 0.0
        self.refuse_count = 0                 # the next N upgrades are refused (besides refuse_until)
        self.refuse_status = 503

    # Upgrade (§2.1) ---------------------------------------------------------------------------------------

    async def handle(self, request: web.Request) -> web.StreamResponse:
        settings = self.settings
        if self.refuse_count > 0 or time.monotonic() < self.refuse_until:
            self.refuse_count = max(0, self.refuse_count - 1)
            self.stats.upgrades_rejected["refused"] += 1
            return web.Response(status=self.refuse_status, text="Service Unavailable\n")
        if settings.conn_limit is not None and len(self.clients) >= settings.conn_limit:
            self.stats.upgrades_rejected["conn_limit"] += 1
            return self._raw_reject(request, b"HTTP/1.1 403 Forbidden\r\n\r\n")
        token = request.query.get("access_token") or request.cookies.get("directus_session_token")
        accountability = expires = None
        if settings.auth_mode == "strict" or token:
            # Token path in any mode; failure is a raw 401 before the upgrade, no `auth ok` on success.
            try:
                if not token:
                    raise errors.invalid_credentials()
                accountability, expires = self.auth.verify(token)
            except errors.DirectusError:
                self.stats.upgrades_rejected["unauthorized"] += 1
                return self._raw_reject(request, b"HTTP/1.1 401 Unauthorized\r\n\r\n")

        ws = web.WebSocketResponse(autoping=False, autoclose=False, heartbeat=None, compress=False,
                                   max_msg_size=settings.max_payload)
        await ws.prepare(request)
        client = Client(ws, request, self._closed, lambda: settings.silent)
        self.connections.add(client)
        self.stats.connections_total += 1
        if accountability is not None:
            self.socket_auth.accept(client, accountability, expires)
        elif settings.auth_mode == "handshake":
            self.socket_auth.start_handshake(client)
        else:
            self.socket_auth.accept(client, self.auth.public(), None)  # public: no message is sent
        try:
            await self._read_loop(client)
        finally:
            client.finished()
            self._forget(client)
        return ws

    @staticmethod
    def _raw_reject(request: web.Request, response: bytes) -> web.StreamResponse:
        # Directus writes a bare status line on the socket and destroys it (§2.1, §2.4).
        transport = request.transport
        if transport is not None:
            transport.write(response)
            transport.close()
        raise asyncio.CancelledError  # nothing more may be written on this connection

    async def hang(self, request: web.Request) -> web.StreamResponse:
        """An upgrade to any other path is never answered (§1.1): wait until the peer gives up."""
        self.stats.upgrades_rejected["wrong_path"] += 1
        transport = request.transport
        while transport is not None and not transport.is_closing():
            await asyncio.sleep(0.2)
        raise asyncio.CancelledError

    # Reading ----------------------------------------------------------------------------------------------

    async def _read_loop(self, client: Client) -> None:
        ws = client.ws
        while True:
            message = await ws.receive()
            kind = message.type
            if kind in (WSMsgType.TEXT, WSMsgType.BINARY):
                # Binary frames are parsed like text (Directus calls toString() on every message).
                self.stats.messages_received += 1
                self._frame(client, message.data)
            elif kind == WSMsgType.PING:
                self.stats.protocol_pings += 1  # autoPong is off: never answered (§4, §13.3)
            elif kind == WSMsgType.PONG:
                continue
            elif kind == WSMsgType.CLOSE:
                client.peer_closed(message.data if isinstance(message.data, int) and message.data else None)
                return
            else:  # CLOSING, CLOSED, ERROR (the library already sent 1002/1007/1009 for protocol errors)
                if kind == WSMsgType.ERROR:
                    client.mark_closing("protocol_error")
                return

    def _frame(self, client: Client, data: Any) -> None:
        if client.state == HANDSHAKE:
            self.socket_auth.first_frame(client, self._parse(data))
            return
        if client.state == AUTHENTICATING:
            self.stats.dropped_before_auth += 1  # no listener yet (§2.2, §13.1)
            return
        if client.state != OPEN:
            return
        if self._rate_limited(client):
            return
        message = self._parse(data)
        if message is _INVALID:
            client.send(errors.ws_error("server", "INVALID_PAYLOAD", errors.UNPARSABLE_TEXT))
            return
        if message is None:
            return  # `null.type` throws inside Directus: logged, nothing sent (§3.1 unhandled exceptions)
        if isinstance(message, dict) and message.get("type") == "auth":
            self.socket_auth.auth_frame(client, message)
            return
        problem = self._schema_problem(message)
        if problem:
            client.send(validation_error(problem).ws_message("server"))
            return
        self.heartbeat.alive(client)
        kind = message["type"]
        if kind == "ping":
            self.stats.client_pings += 1
            if self.settings.heartbeat_enabled:  # the responder lives in the heartbeat handler (§4)
                pong: dict[str, Any] = {"type": "pong"}
                if "uid" in message:
                    pong["uid"] = message["uid"]
                client.send(pong)
        elif kind == "pong":
            self.stats.client_pongs += 1
        elif kind == "subscribe":
            self.subscriptions.subscribe(client, message)
        elif kind == "unsubscribe":
            self.subscriptions.unsubscribe(client, message)
        # Any other type is silently ignored (§3.2 step 6).

    @staticmethod
    def _parse(data: Any) -> Any:
        try:
            return jsonutil.loads(data)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return _INVALID

    @staticmethod
    def _schema_problem(message: Any) -> str | None:
        if not isinstance(message, dict):
            return "Expected object, received " + ("array" if isinstance(message, list) else type(message).__name__)
        if not isinstance(message.get("type"), str):
            return 'Required at "type"' if "type" not in message else 'Expected string at "type"'
        if "uid" in message:
            uid = message["uid"]
            if isinstance(uid, bool) or not isinstance(uid, (str, int, float)):
                return 'Expected string or number at "uid"'
        return None

    def _rate_limited(self, client: Client) -> bool:
        points = self.settings.rate_limit_points
        if points <= 0:
            return False
        now = time.monotonic()
        window = self.settings.rate_limit_duration
        if now - client.rate_window_start >= window:
            client.rate_window_start, client.rate_count = now, 0
        client.rate_count += 1
        if client.rate_count <= points:
            return False
        self.stats.rate_limited += 1
        retry_ms = int((client.rate_window_start + window - now) * 1000)
        client.send(errors.ws_error("server", "REQUESTS_EXCEEDED", f"Too many messages, retry after {retry_ms}ms."))
        return True

    # Bookkeeping -----------------------------------------------------------------------------------------------

    def _established(self, client: Client) -> None:
        self.clients.add(client)
        self.heartbeat.client_added()

    def _closed(self, client: Client, reason: str) -> None:
        self.stats.closes[reason] += 1
        if reason == "client":
            code = client.peer_close_code
            self.stats.client_close_codes["none" if code is None else str(code)] += 1
        self._forget(client)

    def _forget(self, client: Client) -> None:
        self.connections.discard(client)
        if client in self.clients:
            self.clients.discard(client)
            self.heartbeat.client_removed(client)

    def drop_all(self, reason: str, reset: bool = True) -> int:
        """Ends every socket without a close frame (peers see 1006)."""
        doomed = list(self.connections)
        for client in doomed:
            client.drop(reason, reset)
        return len(doomed)


_INVALID = object()
