"""An HTTP proxy the operator chose (`directus.proxy`), for tests: it opens `CONNECT host:port` tunnels to 127.0.0.1
or ::1 only and records what went through them.

For each tunnel it prints `TUNNEL <host:port> user=<user or -> first=<first line the client sent inside>`, once the
client's first line has come through (`first=` is the request line for plain HTTP, `TLS` for a TLS handshake), and
`REFUSED <status> <host:port>` when it refused one. A request that is not CONNECT is answered 405.

Modes (`--mode`):
- `tunnel` (default): tunnels; with `--require USER:PASSWORD` answers 407 without those Basic credentials.
- `refuse`: answers every CONNECT with `--status` (default 403).
- `endless-header`: answers `HTTP/1.1 200 Connection established` and then header lines forever.
- `huge-line`: answers with a status line that never ends.
- `silent`: reads the request and never answers.
The hostile modes print `WROTE <bytes>` when the client went away.

Prints `READY <port>` once listening on 127.0.0.1.
"""
from __future__ import annotations

import argparse
import asyncio
import base64
import signal

ALLOWED_HOSTS = {"127.0.0.1", "::1", "localhost"}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="tunnel",
                        choices=["tunnel", "refuse", "endless-header", "huge-line", "silent"])
    parser.add_argument("--status", type=int, default=403)
    parser.add_argument("--require", default="")
    return parser.parse_args()


ARGS = parse_args()


def target_of(request_line: str) -> tuple[str, int] | None:
    parts = request_line.split(" ")
    if len(parts) != 3 or parts[0] != "CONNECT":
        return None
    authority = parts[1]
    host, _, port = authority.rpartition(":")
    host = host.strip("[]")
    if not port.isdigit():
        return None
    return host, int(port)


def user_of(head: bytes) -> str | None:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"proxy-authorization":
            scheme, _, token = value.strip().partition(b" ")
            if scheme.lower() != b"basic":
                return None
            try:
                return base64.b64decode(token, validate=True).decode("utf-8")
            except ValueError:
                return None
    return None


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, first: asyncio.Future | None) -> None:
    try:
        while data := await reader.read(65536):
            if first is not None and not first.done():
                first.set_result(data)
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        if first is not None and not first.done():
            first.set_result(b"")
        writer.close()


async def hostile(writer: asyncio.StreamWriter, mode: str) -> None:
    written = 0
    try:
        if mode == "silent":
            await asyncio.sleep(3600)
        head = b"HTTP/1.1 200 Connection established\r\n" if mode == "endless-header" else b"HTTP/1.1 200 "
        writer.write(head)
        written += len(head)
        piece = b"X-Filler: " + b"a" * 1000 + b"\r\n" if mode == "endless-header" else b"a" * 4096
        while True:
            writer.write(piece)
            written += len(piece)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        print(f"WROTE {written}", flush=True)
        writer.close()


async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        writer.close()
        return
    request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
    target = target_of(request_line)
    if target is None:
        writer.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        writer.close()
        return
    shown = f"{target[0]}:{target[1]}"
    if ARGS.mode in ("endless-header", "huge-line", "silent"):
        await hostile(writer, ARGS.mode)
        return
    user = user_of(head)
    status = None
    if ARGS.mode == "refuse":
        status = ARGS.status
    elif ARGS.require and user != ARGS.require:
        status = 407
    elif target[0] not in ALLOWED_HOSTS:
        status = 403
    if status is not None:
        print(f"REFUSED {status} {shown}", flush=True)
        extra = b'Proxy-Authenticate: Basic realm="test"\r\n' if status == 407 else b""
        writer.write(b"HTTP/1.1 %d Refused by test proxy\r\n%sContent-Length: 0\r\nConnection: close\r\n\r\n"
                     % (status, extra))
        await writer.drain()
        writer.close()
        return
    try:
        upstream_reader, upstream_writer = await asyncio.open_connection(target[0], target[1])
    except OSError:
        print(f"REFUSED 502 {shown}", flush=True)
        writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        writer.close()
        return
    writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
    await writer.drain()
    first: asyncio.Future = asyncio.get_running_loop().create_future()
    outbound = asyncio.ensure_future(pipe(reader, upstream_writer, first))
    inbound = asyncio.ensure_future(pipe(upstream_reader, writer, None))
    data = await first
    if data[:1] == b"\x16":
        line = "TLS"
    else:
        line = data.split(b"\r\n", 1)[0].decode("latin-1")
    name = user.split(":", 1)[0] if user else "-"
    print(f"TUNNEL {shown} user={name} first={line}", flush=True)
    await asyncio.gather(outbound, inbound, return_exceptions=True)


async def main() -> None:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT})
    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    print(f"READY {server.sockets[0].getsockname()[1]}", flush=True)
    await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
