"""Helpers for the emulator's own pytest suite (and for anyone scripting the emulator from Python)."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

import aiohttp
import websockets
from websockets.asyncio.client import ClientConnection

SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "server.py")
ADMIN = {"email": "admin@example.com", "password": "admin-password"}
READER = {"email": "reader@example.com", "password": "reader-password"}
ADMIN_TOKEN = "admin-static-token"
READER_TOKEN = "reader-static-token"


class EmulatorProcess:
    """The emulator as a subprocess on a random port (the way the Swift tests start it)."""

    def __init__(self, *arguments: str, wait: bool = True):
        # stderr goes to a file: an unread pipe would fill up and block the server.
        self.stderr = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen(
            [sys.executable, "-u", SERVER, "--port", "0", "--log-level", "info", *arguments],
            stdout=subprocess.PIPE, stderr=self.stderr, text=True,
        )
        if wait:
            self.ready()

    @classmethod
    def start_many(cls, *argument_lists: tuple[str, ...]) -> list["EmulatorProcess"]:
        """Several emulators started side by side (each start-up takes a while on a busy machine)."""
        processes = [cls(*arguments, wait=False) for arguments in argument_lists]
        for process in processes:
            process.ready()
        return processes

    def ready(self) -> None:
        """Waits for `READY <port>`."""
        line = self.process.stdout.readline().strip()
        if not line.startswith("READY "):
            self.process.kill()
            raise RuntimeError(f"emulator did not start: {line!r} {self.log()}")
        self.port = int(line.split()[1])
        self.http = f"http://127.0.0.1:{self.port}"
        self.ws = f"ws://127.0.0.1:{self.port}/websocket"

    def log(self) -> str:
        """Everything the server wrote on stderr so far."""
        self.stderr.seek(0)
        return self.stderr.read()

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


class Api:
    """A small async client: REST calls with an optional token, control calls, sockets."""

    def __init__(self, emulator: EmulatorProcess, session: aiohttp.ClientSession):
        self.emulator = emulator
        self.session = session

    async def call(self, method: str, path: str, token: str | None = None, json_body: Any = None,
                   **params: Any) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        url = path if path.startswith("http") else self.emulator.http + path  # absolute: another instance
        async with self.session.request(method, url, headers=headers, json=json_body,
                                        params=params or None) as response:
            text = await response.text()
            try:
                body = json.loads(text) if text else None
            except ValueError:
                body = text
            return response.status, body

    async def control(self, path: str, body: dict[str, Any] | None = None, method: str = "POST") -> Any:
        status, result = await self.call(method, "/_emulator/" + path, json_body=body if method == "POST" else None)
        assert status == 200, (path, status, result)
        return result

    async def stats(self) -> dict[str, Any]:
        return await self.control("stats", method="GET")

    async def login(self, credentials: dict[str, str] = ADMIN) -> dict[str, Any]:
        status, body = await self.call("POST", "/auth/login", json_body=credentials)
        assert status == 200, body
        return body["data"]

    async def socket(self, query: str = "", **options: Any) -> ClientConnection:
        options.setdefault("ping_interval", None)  # the client library's own protocol pings would go unanswered
        options.setdefault("max_size", None)
        return await websockets.connect(self.emulator.ws + query, **options)

    async def socket_at(self, path: str, **options: Any) -> ClientConnection:
        options.setdefault("ping_interval", None)
        return await websockets.connect(f"ws://127.0.0.1:{self.emulator.port}{path}", **options)

    async def socket_at_port(self, port: int, **options: Any) -> ClientConnection:
        """A socket to another instance of this emulator (docs/directus-protocol.md §14.2)."""
        options.setdefault("ping_interval", None)
        return await websockets.connect(f"ws://127.0.0.1:{port}/websocket", **options)

    async def authed_socket(self, token: str = ADMIN_TOKEN) -> ClientConnection:
        ws = await self.socket()
        await ws.send(json.dumps({"type": "auth", "access_token": token}))
        assert await receive(ws) == {"type": "auth", "status": "ok"}
        return ws


async def receive(ws: ClientConnection, timeout: float = 2.0) -> Any:
    return json.loads(await asyncio.wait_for(ws.recv(), timeout))


async def silent(ws: ClientConnection, seconds: float) -> bool:
    """True when nothing arrives within `seconds`."""
    try:
        await asyncio.wait_for(ws.recv(), seconds)
    except asyncio.TimeoutError:
        return True
    return False


async def closed_code(ws: ClientConnection, timeout: float = 3.0) -> int | None:
    """Reads until the connection ends; the close code the client saw (1005 no code, 1006 abnormal)."""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            await asyncio.wait_for(ws.recv(), max(0.01, deadline - time.monotonic()))
    except websockets.ConnectionClosed:
        return ws.close_code
    except asyncio.TimeoutError:
        return None
    return None


async def subscribe(ws: ClientConnection, collection: str, uid: Any = None, **extra: Any) -> Any:
    message: dict[str, Any] = {"type": "subscribe", "collection": collection, **extra}
    if uid is not None:
        message["uid"] = uid
    await ws.send(json.dumps(message))
    return await receive(ws)


def make_runner(emulator: EmulatorProcess):
    """`run(check)` resets the emulator, then runs `await check(api)` in a fresh event loop."""
    def run(check) -> None:
        async def main() -> None:
            async with aiohttp.ClientSession() as session:
                api = Api(emulator, session)
                await api.control("reset")
                await check(api)
        asyncio.run(main())
    return run
