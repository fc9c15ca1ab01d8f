"""HTTP test peer for BridgeHTTP: statuses, echo, redirects, hangs, big bodies, slow answers, and counters.

Prints `READY <port>` once listening on 127.0.0.1 (port 0 unless --port). With --tls-cert/--tls-key it serves
HTTPS with that chain; `--tls-max 1.1` offers TLS 1.0 and 1.1 only (a legacy server a client must refuse).
Endpoints (any method):

  /status/{code}[?retry_after=V]  answers `code` with body "status <code>" (+ Retry-After: V; 3xx get Location)
  /redirect                       302 to /status/200 (clients must not follow it)
  /echo                           JSON {method, path, query, headers: [[name, value]...], body_hex}
  /hang                           never answers (until the client goes away)
  /big?size=N                     200 with N bytes of body
  /slow?ms=N                      waits N ms, then 200 "ok"
  /barrier?n=N[&name=X&timeout_ms=T]  holds each request until N requests named X are held at once, then
                                  answers them all 200 "met"; 504 "timeout" after T ms (default 10000)
  /stats                          JSON {connections, requests, max_concurrency, in_flight}
  /reset                          zeroes the counters

Counters skip /stats and /reset. `connections` counts distinct client (address, port) pairs, i.e. TCP
connections; `max_concurrency` is the most requests being handled at once.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import signal
import ssl
import warnings

from aiohttp import web


class Stats:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.peers: set = set()
        self.requests = 0
        self.in_flight = 0
        self.max_concurrency = 0


STATS = Stats()
UNCOUNTED = {"/stats", "/reset"}


@web.middleware
async def counting(request: web.Request, handler):
    if request.path in UNCOUNTED:
        return await handler(request)
    STATS.peers.add(request.transport.get_extra_info("peername") if request.transport else None)
    STATS.requests += 1
    STATS.in_flight += 1
    STATS.max_concurrency = max(STATS.max_concurrency, STATS.in_flight)
    try:
        return await handler(request)
    finally:
        STATS.in_flight -= 1


async def status(request: web.Request) -> web.Response:
    code = int(request.match_info["code"])
    headers = {}
    if "retry_after" in request.query:
        headers["Retry-After"] = request.query["retry_after"]
    if 300 <= code < 400:
        headers["Location"] = "/status/200"
    body = None if code in (204, 304) else f"status {code}"
    return web.Response(status=code, text=body, headers=headers)


async def redirect(request: web.Request) -> web.Response:
    return web.Response(status=302, headers={"Location": "/status/200"}, text="moved")


async def echo(request: web.Request) -> web.Response:
    body = await request.read()
    return web.json_response({
        "method": request.method,
        "path": request.path,
        "query": request.query_string,
        "headers": [[k, v] for k, v in request.headers.items()],
        "body_hex": body.hex(),
    })


async def hang(request: web.Request) -> web.Response:
    await asyncio.sleep(3600)
    return web.Response(text="late")


async def big(request: web.Request) -> web.Response:
    size = int(request.query.get("size", "1048576"))
    pattern = bytes(range(256))
    body = (pattern * (size // 256 + 1))[:size]
    return web.Response(body=body, content_type="application/octet-stream")


async def slow(request: web.Request) -> web.Response:
    await asyncio.sleep(int(request.query.get("ms", "100")) / 1000)
    return web.Response(text="ok")


BARRIERS: dict[str, tuple[list[int], asyncio.Event]] = {}


async def barrier(request: web.Request) -> web.Response:
    wanted = int(request.query["n"])
    name = request.query.get("name", "default")
    timeout = int(request.query.get("timeout_ms", "10000")) / 1000
    arrived, met = BARRIERS.setdefault(name, ([0], asyncio.Event()))
    arrived[0] += 1
    if arrived[0] >= wanted:
        met.set()
    try:
        await asyncio.wait_for(met.wait(), timeout)
        return web.Response(text="met")
    except asyncio.TimeoutError:
        return web.Response(status=504, text="timeout")


async def stats(request: web.Request) -> web.Response:
    return web.json_response({
        "connections": len(STATS.peers),
        "requests": STATS.requests,
        "max_concurrency": STATS.max_concurrency,
        "in_flight": STATS.in_flight,
    })


async def reset(request: web.Request) -> web.Response:
    STATS.reset()
    BARRIERS.clear()
    return web.json_response({"ok": True})


def unblock_signals() -> None:
    """A parent may start us with SIGTERM/SIGINT blocked (Foundation's Process on Linux passes its thread's
    signal mask on); unblock them so `stop()` ends us gracefully and children inherit a clean mask."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT})


async def main() -> None:
    unblock_signals()
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    parser.add_argument("--tls-max", choices=["1.1"])
    args = parser.parse_args()

    app = web.Application(middlewares=[counting], client_max_size=64 << 20)
    app.add_routes([
        web.route("*", "/status/{code}", status),
        web.route("*", "/redirect", redirect),
        web.route("*", "/echo", echo),
        web.route("*", "/hang", hang),
        web.route("*", "/big", big),
        web.route("*", "/slow", slow),
        web.route("*", "/barrier", barrier),
        web.route("*", "/stats", stats),
        web.route("*", "/reset", reset),
    ])
    context = None
    if args.tls_cert:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(args.tls_cert, args.tls_key)
        if args.tls_max == "1.1":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # that is the point of this server
                context.minimum_version = ssl.TLSVersion.TLSv1
                context.maximum_version = ssl.TLSVersion.TLSv1_1
            context.set_ciphers("DEFAULT:@SECLEVEL=0")  # OpenSSL 3 allows TLS < 1.2 only at level 0
    runner = web.AppRunner(app, access_log=None, handler_cancellation=True)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", args.port, ssl_context=context, backlog=1024)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    print(f"READY {port}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main())
