"""Hostile answers to REST reads (issue 23, item 3, docs/RELIABILITY.md "Threat model"): once armed through
`POST /_emulator/hostile-answers` {"path": "/activity", "shape": "wide"|"deep"|"long"|"bulky", "bytes": N}, every GET of
that path is answered 200 with N bytes of one JSON shape that holds far more than any request asks for:

- wide: {"data":[{},{},…]}, about N/3 empty items whatever `limit` the request gave;
- deep: {"data":[[[[…]]]]}, nested about N/2 levels deep;
- long: {"data":[{"id":1,"values":[0,0,…]}]}, one item holding about N/2 numbers;
- bulky: {"data":[{"id":1}],"meta":{"padding":["xx…",…]}}, one small item beside about N/40 strings of 36 bytes:
  fewer values than the bridge's bound (one million), so it is read, not refused.

A JSON tree of such an answer takes several times its bytes (about 20 times for `wide`). `{"path": null}` disarms; `GET
/_emulator/hostile-answers` tells how many hostile answers were sent.
"""
from __future__ import annotations

from typing import Any, Awaitable, Callable

from aiohttp import web

from .control_support import json_body

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
SHAPES = ("wide", "deep", "long", "bulky")


def hostile_body(shape: str, size: int) -> bytes:
    """`size` bytes (give or take a few) of `shape`."""
    if shape == "wide":
        count = max(1, (size - 12) // 3)
        return b'{"data":[' + b"{}," * (count - 1) + b"{}]}"
    if shape == "deep":
        depth = max(1, (size - 12) // 2)
        return b'{"data":' + b"[" * depth + b"]" * depth + b"}"
    if shape == "long":
        count = max(1, (size - 40) // 2)
        return b'{"data":[{"id":1,"values":[' + b"0," * (count - 1) + b"0]}]}"
    if shape == "bulky":
        count = max(1, (size - 40) // 40)
        text = b'"' + b"x" * 36 + b'"'
        return b'{"data":[{"id":1}],"meta":{"padding":[' + b",".join([text] * count) + b"]}}"
    raise ValueError(f"shape must be one of {SHAPES}")


class HostileAnswers:
    """The armed path and shape, the cached body, and the middleware that answers with it."""

    def __init__(self) -> None:
        self.path: str | None = None
        self.body = b""
        self.sent = 0

    def routes(self) -> list[tuple[str, str, Callable[[web.Request], Awaitable[web.Response]]]]:
        return [("POST", "hostile-answers", self.arm), ("GET", "hostile-answers", self.status)]

    async def arm(self, request: web.Request) -> web.Response:
        body: dict[str, Any] = await json_body(request)
        path = body.get("path")
        if path is None:
            self.path, self.body = None, b""
        else:
            size = int(body.get("bytes", 63 << 20))
            if not 0 < size <= 256 << 20:
                raise ValueError("bytes must be 1 to 256 MiB")
            self.body = hostile_body(str(body.get("shape", "wide")), size)
            self.path = str(path)
        self.sent = 0
        return web.json_response({"path": self.path, "bytes": len(self.body)})

    async def status(self, request: web.Request) -> web.Response:
        return web.json_response({"path": self.path, "sent": self.sent})

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if self.path is not None and request.method == "GET" and request.path == self.path:
            self.sent += 1
            return web.Response(body=self.body, content_type="application/json")
        return await handler(request)
