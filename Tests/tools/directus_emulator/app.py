"""The emulator: wires the database, auth, REST, socket and control layers; owns the listening socket."""
from __future__ import annotations

import asyncio
import copy
import logging
import socket
from typing import Any, Awaitable, Callable

from aiohttp import web

from . import errors, seed
from .auth import Auth
from .hostile_answers import HostileAnswers
from .database import Database
from .instances import InstanceSet
from .reader import Reader
from .rest_items import ItemRoutes
from .rest_support import accountability_for, error_response
from .rest_system import SystemRoutes
from .rest_utils import UtilsRoutes
from .settings import Settings
from .stats import Stats
from .websocket import WebSocketServer
from .writes import ORIGIN, ItemEvent, Writer

log = logging.getLogger("emulator")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_NO_AUTH = ("/server/ping", "/_emulator/")


class Emulator:
    """One Directus-compatible server. `start` binds; `restart` plays a Directus restart; `stop` ends it."""

    def __init__(self, settings: Settings, seed_name: str = "default"):
        self.settings = settings
        self.startup_settings = copy.deepcopy(settings)
        self.seed_name = seed_name
        self.stats = Stats()
        self.db = Database()
        seed.load(self.db, seed_name, settings.activity_access)
        self.auth = Auth(self.db, settings)
        self.reader = Reader(self.db, lambda: self.settings.query_limit_default, lambda: self.settings.limit_cap,
                             lambda: self.settings.query_limit_max, lambda: self.settings.limit_refusal_names)
        self.writer = Writer(self.db)
        self.ws = self._socket_server()  # instance 0's sockets
        self.instances = InstanceSet(self.ws, self._socket_server, lambda: self.settings.messenger)
        self.lost_events: dict[str, int] = {}  # action → how many of the next such events never reach a socket
        self.writer.listeners.append(self._publish)
        self.host = "127.0.0.1"
        self.port = 0
        self.runner: web.AppRunner | None = None
        self.server: asyncio.AbstractServer | None = None
        self.down = False
        from .control import Control  # late import: control needs the whole emulator
        self.control = Control(self)
        self.hostile_answers = HostileAnswers()

    def _publish(self, event: ItemEvent) -> None:
        """Directus's action hook → bus → sockets, where an event can be lost after its write committed
        (docs/directus-protocol.md §14.1)."""
        if self.lost_events.get(event.action, 0) > 0:
            self.lost_events[event.action] -= 1
            self.stats.events_lost += 1
            return
        self.instances.dispatch(event)

    def _socket_server(self) -> WebSocketServer:
        return WebSocketServer(self.db, self.auth, self.reader, self.settings, self.stats)

    # Data -------------------------------------------------------------------------------------------------

    def reset(self, seed_name: str | None = None) -> None:
        """Back to the seed and one instance: data, sessions, settings, stats; every socket is dropped."""
        self.instances.shrink()
        self.ws.drop_all("reset", reset=True)
        self.seed_name = seed_name or self.seed_name
        self.settings.update(self.startup_settings.as_dict())
        self.db.__init__()
        seed.load(self.db, self.seed_name, self.settings.activity_access)
        self.auth.sessions.clear()
        self.writer.commit_delays.clear()
        self.lost_events.clear()
        self.writer.activity_reserved = 0
        self.stats.__init__()
        self.ws.heartbeat.restart()

    def apply_settings(self, changes: dict[str, Any]) -> None:
        self.settings.update(changes)
        if "activity_access" in changes:
            for role_id, policy in self.db.policies.items():
                if role_id is not None and not policy.admin:
                    policy.set_activity_access(self.settings.activity_access)
        if {"heartbeat_enabled", "heartbeat_period"} & changes.keys():
            for server in self.instances.servers():
                server.heartbeat.restart()

    def drop_all(self, reason: str, reset: bool = True) -> int:
        """Ends every socket of every instance without a close frame (peers see 1006)."""
        return sum(server.drop_all(reason, reset) for server in self.instances.servers())

    async def add_instances(self, count: int) -> list[int]:
        """Runs `count` instances on this database (§14.2); answers every instance's port, instance 0 first."""
        await self.instances.grow(count, self.host, self._serve)
        return [instance.port or self.port for instance in self.instances]

    # HTTP -------------------------------------------------------------------------------------------------

    def make_app(self) -> web.Application:
        app = web.Application(middlewares=[self._errors, self._upgrades, self._authenticate,
                                           self.hostile_answers.middleware],
                              client_max_size=self.settings.max_payload)
        SystemRoutes(self.db, self.auth, self.reader, self.settings).register(app)
        ItemRoutes(self.reader, self.writer, lambda: self.settings.sorted_page_delay_ms).register(app)
        UtilsRoutes(self.db, self.writer).register(app)
        self.control.register(app)
        return app

    @web.middleware
    async def _errors(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        self.stats.http_requests += 1
        try:
            return await handler(request)
        except errors.DirectusError as error:
            return error_response(error)
        except (web.HTTPNotFound, web.HTTPMethodNotAllowed):
            return error_response(errors.route_not_found(request.path))
        except web.HTTPException:
            raise
        except Exception:  # noqa: BLE001 — Directus answers INTERNAL_SERVER_ERROR; the traceback goes to stderr
            log.exception("unhandled error in %s %s", request.method, request.path)
            return error_response(errors.DirectusError("INTERNAL_SERVER_ERROR", 500,
                                                       "An unexpected error occurred."))

    @web.middleware
    async def _upgrades(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        instance = self.instances.for_request(request)
        ORIGIN.set(instance.index)  # writes made by this request start their events on this instance
        wants_socket = request.headers.get("Upgrade", "").lower() == "websocket"
        if wants_socket and self.settings.websockets_enabled and not request.path.startswith("/_emulator/"):
            if request.path == self.settings.websocket_path:  # exact compare, query ignored (§1.1)
                return await instance.ws.handle(request)
            return await instance.ws.hang(request)
        return await handler(request)

    @web.middleware
    async def _authenticate(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if not request.path.startswith(_NO_AUTH):
            # Every route after the auth middleware sees a bad token, even /auth/refresh (§8.2).
            request["accountability"] = accountability_for(request, self.auth)
        return await handler(request)

    # Listening --------------------------------------------------------------------------------------------

    async def start(self, host: str, port: int) -> int:
        self.host = host
        self.runner = web.AppRunner(self.make_app(), handle_signals=False, access_log=None)
        await self.runner.setup()
        sock = self._bind(port)
        self.port = sock.getsockname()[1]
        await self._listen(sock)
        return self.port

    def _bind(self, port: int) -> socket.socket:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, port))
        sock.setblocking(False)
        return sock

    async def _listen(self, sock: socket.socket) -> None:
        self.server = await self._serve(sock)

    async def _serve(self, sock: socket.socket) -> asyncio.AbstractServer:
        assert self.runner is not None and self.runner.server is not None
        loop = asyncio.get_running_loop()
        return await loop.create_server(self.runner.server, sock=sock, backlog=512)

    def _drop_http(self) -> None:
        if self.runner is not None and self.runner.server is not None:
            for handler in self.runner.server.connections:
                if handler.transport is not None:
                    handler.transport.abort()

    async def restart(self, down_ms: float) -> None:
        """A Directus restart: sockets terminated (1006), connections refused for `down_ms`, data kept."""
        if self.down:
            return
        self.down = True
        try:
            if self.server is not None:
                self.server.close()
            self.ws.drop_all("restart", reset=False)  # instance 0 only: the others keep running
            self._drop_http()
            # Keep the port bound but not listening: connects are refused, and nobody else can take it.
            sock = self._bind(self.port)
            await asyncio.sleep(down_ms / 1000)
            await self._listen(sock)
        finally:
            self.down = False

    async def stop(self) -> None:
        """SIGTERM: like Directus's `terminate()` — every socket destroyed at once (§7.1)."""
        self.control.stop_background()
        if self.server is not None:
            self.server.close()
        self.instances.shrink("server_shutdown")
        self.ws.drop_all("server_shutdown", reset=False)
        self._drop_http()
        if self.runner is not None:
            try:
                await asyncio.wait_for(self.runner.cleanup(), 1.0)
            except (asyncio.TimeoutError, Exception):  # noqa: BLE001 — shutting down anyway
                pass
