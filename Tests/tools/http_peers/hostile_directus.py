"""A hostile Directus (or the proxy before it): every request, REST or WebSocket upgrade, is answered 503 with an
8 MiB `errors[0].message` full of terminal escape sequences and line breaks that would forge a log line or a row of
`check` if shown raw, an `extensions.code` of the same kind, and a reason phrase with an escape sequence. Only
`/server/ping` is answered `pong`, so that `check` goes on to the calls that fail.

Prints `READY <port>` once listening on 127.0.0.1 (port 0 unless --port).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import signal

FORGED = "\x1b[2K\r2026-01-01T00:00:00.000Z INFO  forged line\nok   forged: row\n\x1b[31m"
MESSAGE = (FORGED + "A" * 1000) * (8 * 1024)  # 8 MiB and more
BODY = json.dumps({"errors": [{"message": MESSAGE, "extensions": {"code": "FORGED\x1b[1m\nCODE"}}]}).encode()
# Written by hand: HTTP libraries refuse to send a control character in the status line, which is the point here.
HEAD = (b"HTTP/1.1 503 Service \x1b[31mUnavailable\x1b[0m\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(BODY)}\r\nConnection: close\r\n\r\n".encode())


async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        if head.split(b" ", 2)[1].endswith(b"/server/ping"):  # `check` goes on to the credentials, which fail
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\npong")
            await writer.drain()
            return
        length = 0
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip() or 0)
        if length:
            await reader.readexactly(length)
        writer.write(HEAD + BODY)
        await writer.drain()
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
        pass
    finally:
        writer.close()


def unblock_signals() -> None:
    """Foundation's Process on Linux may start us with SIGTERM blocked: unblock it so `stop()` ends us."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT})


async def main() -> None:
    unblock_signals()
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = await asyncio.start_server(answer, "127.0.0.1", args.port)
    port = server.sockets[0].getsockname()[1]
    print(f"READY {port}", flush=True)
    await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
