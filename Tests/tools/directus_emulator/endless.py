"""An endless socket message (docs/RELIABILITY.md, "Wire numbers and traps: audit"): once armed through
`POST /_emulator/endless` {"shape": "header"|"fragments", "rate": bytes per second (0: as fast as the peer reads)},
every open socket gets one data message that never ends, until the peer closes it:

- header: a text frame announcing 2^62 bytes of payload, then payload bytes;
- fragments: a text frame without FIN, then continuation frames without FIN (4 KiB each at speed, 1 byte each when
  paced), forever.

While a socket is fed nothing else is written to it (`Client.replaying`): a pong or a ping of the emulator's own would
be a frame inside the message (payload bytes for `header`, a protocol error between fragments). A socket opened later
is served as usual. `GET /_emulator/endless` tells, per fed socket, the bytes written and whether the peer went.
"""
from __future__ import annotations

import asyncio
import os
import socket
import time
from typing import Any, Awaitable, Callable

from aiohttp import web

from . import frames
from .control_support import ControlError, json_body, ok
from .rest_support import json_response
from .ws_client import OPEN, Client

SHAPES = ("header", "fragments")
CONTINUATION = 0x0
CHUNK = 64 << 10


def _send_forever(client: Client, shape: str, stream: dict[str, Any]) -> None:
    """Writes the message's rest until the peer goes (called on a worker thread)."""
    sock = client.transport.get_extra_info("socket") if client.transport is not None else None
    if sock is None:
        return
    piece = b"x" * CHUNK if shape == "header" else \
        (frames.header(CONTINUATION, 4096, fin=False) + b"x" * 4096) * (CHUNK // 4096)
    piece *= 16
    with socket.socket(fileno=os.dup(sock.fileno())) as duplicate:
        duplicate.settimeout(600)
        try:
            while True:
                duplicate.sendall(piece)
                stream["bytes"] += len(piece)
        except OSError:
            pass  # the peer went away


class EndlessMessages:
    """The fed sockets and their tasks."""

    def __init__(self, clients: Callable[[], list[Client]]) -> None:
        self.clients = clients
        self.streams: list[dict[str, Any]] = []
        self.tasks: set[asyncio.Task] = set()

    def routes(self) -> list[tuple[str, str, Callable[[web.Request], Awaitable[web.Response]]]]:
        return [("POST", "endless", self.arm), ("GET", "endless", self.status)]

    async def arm(self, request: web.Request) -> web.Response:
        body: dict[str, Any] = await json_body(request)
        shape = body.get("shape", "header")
        if shape not in SHAPES:
            raise ControlError(f"shape must be one of {SHAPES}")
        rate = float(body.get("rate", 0))
        fed = 0
        for client in self.clients():
            if client.state != OPEN or not client.writable:
                continue
            stream = {"client": client.id, "shape": shape, "rate": rate, "bytes": 0, "ended": False,
                      "started": time.monotonic(), "ended_after": None}
            self.streams.append(stream)
            client.replaying = True
            task = asyncio.get_running_loop().create_task(self._feed(client, stream, shape, rate))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
            fed += 1
        return ok({"sockets": fed})

    async def status(self, request: web.Request) -> web.Response:
        return json_response({"streams": self.streams})

    @staticmethod
    def _open(client: Client) -> bool:
        transport = client.transport
        return transport is not None and not transport.is_closing() and client.state == OPEN

    async def _feed(self, client: Client, stream: dict[str, Any], shape: str, rate: float) -> None:
        transport = client.transport
        try:
            if shape == "header":
                transport.write(frames.header(frames.TEXT, 1 << 62))
            else:
                transport.write(frames.header(frames.TEXT, 1, fin=False) + b"x")
            while self._open(client):
                if rate > 0:
                    await asyncio.sleep(1 / rate)
                    piece = b"x" if shape == "header" else frames.header(CONTINUATION, 1, fin=False) + b"x"
                    transport.write(piece)
                    stream["bytes"] += len(piece)
                    continue
                # From a thread, in C (blocking `sendall` on a duplicate of the socket, as blast.py's `direct`): the
                # event loop alone writes slower than the bridge reads past, and the socket would run dry.
                while self._open(client) and transport.get_write_buffer_size() > 0:
                    await asyncio.sleep(0.001)
                await asyncio.to_thread(_send_forever, client, shape, stream)
                break
        finally:
            stream["ended"] = True
            stream["ended_after"] = time.monotonic() - stream["started"]
