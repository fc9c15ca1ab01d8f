"""Several Directus instances on one database, as behind a load balancer (docs/directus-protocol.md §14.2).

Every instance has its own listening port, its own socket clients, subscriptions and heartbeat; they share the
data, sessions and settings. Directus hands each write's events to its messenger: with Redis (`messenger: redis`)
every instance hears them and tells its own sockets; with the default in-process bus (`messenger: local`) only
the instance that handled the write does. Instance 0 is the one the emulator starts with.
"""
from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Callable

from aiohttp import web

from .websocket import WebSocketServer
from .writes import ItemEvent


@dataclass
class Instance:
    """One Directus process: its sockets and, for the extra ones, its own listening socket."""

    index: int
    ws: WebSocketServer
    port: int = 0
    listener: object | None = None  # asyncio.AbstractServer for instances after the first


class InstanceSet:
    """The instances of one emulator; `dispatch` is the Writer listener that routes events by messenger."""

    def __init__(self, first: WebSocketServer, make_server: Callable[[], WebSocketServer],
                 messenger: Callable[[], str]):
        self.instances = [Instance(0, first)]
        self._make_server = make_server
        self._messenger = messenger

    def __iter__(self):
        return iter(self.instances)

    def servers(self) -> list[WebSocketServer]:
        return [instance.ws for instance in self.instances]

    def by_port(self, port: int | None) -> Instance:
        for instance in self.instances[1:]:
            if instance.port == port:
                return instance
        return self.instances[0]

    def for_request(self, request: web.Request) -> Instance:
        transport = request.transport
        sockname = transport.get_extra_info("sockname") if transport is not None else None
        return self.by_port(sockname[1] if sockname else None)

    def get(self, index: int) -> Instance:
        if not 0 <= index < len(self.instances):
            raise ValueError(f"no instance {index}; there are {len(self.instances)}")
        return self.instances[index]

    def dispatch(self, event: ItemEvent) -> None:
        """Redis messenger: every instance's sockets; in-process bus: only the instance that handled the write."""
        if self._messenger() == "redis":
            targets = self.instances
        else:
            targets = [self.instances[event.instance]] if event.instance < len(self.instances) else []
        for instance in targets:
            instance.ws.subscriptions.dispatch(event)

    async def grow(self, count: int, host: str, serve: Callable[[socket.socket], object]) -> None:
        """Starts instances until there are `count` (each on a free port of `host`)."""
        while len(self.instances) < count:
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, 0))
            sock.setblocking(False)
            instance = Instance(len(self.instances), self._make_server(), sock.getsockname()[1])
            instance.listener = await serve(sock)
            self.instances.append(instance)

    def shrink(self, reason: str = "reset") -> None:
        """Back to the first instance: the others stop listening and drop their sockets."""
        for instance in self.instances[1:]:
            if instance.listener is not None:
                instance.listener.close()
            instance.ws.drop_all(reason, reset=True)
            instance.ws.heartbeat.stop()
        del self.instances[1:]
