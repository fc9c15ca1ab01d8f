"""A proxy nobody chose: it prints `PROXIED <request line>` for every request that reaches it (a `CONNECT host:port`
tunnel or an absolute-form `GET http://…`) and answers 502 without forwarding anything. A client that honours
`http_proxy`, `HTTPS_PROXY` or `ALL_PROXY` from its environment without being told to shows up here (issue 23,
item 10, docs/RELIABILITY.md "Threat model").

Prints `READY <port>` once listening on 127.0.0.1.
"""
from __future__ import annotations

import asyncio
import signal


async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        print(f"PROXIED {line}", flush=True)
        writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        pass
    finally:
        writer.close()


async def main() -> None:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT})
    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    print(f"READY {server.sockets[0].getsockname()[1]}", flush=True)
    await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
