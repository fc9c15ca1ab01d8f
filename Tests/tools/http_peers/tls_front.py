"""A TLS front: terminates https/wss on 127.0.0.1 and pipes the plain bytes to a local port, like the reverse
proxy a production Directus or webhook receiver sits behind.

    python Tests/tools/http_peers/tls_front.py --target PORT --tls-cert PEM --tls-key KEY

Prints `READY <port>` once it listens. Every accepted connection gets its own connection to 127.0.0.1:PORT; the
bytes go through unchanged both ways (HTTP, WebSocket upgrades and frames alike), and when either side ends, the
other is closed. A client that refuses the certificate is counted, and `GET /_front/stats` on the plain-http
`--stats-port` (printed as `STATS <port>` after READY) reports `{"accepted", "handshake_failures", "piped"}`.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import signal
import ssl
import sys


class Front:
    def __init__(self, target: int, context: ssl.SSLContext):
        self.target = target
        self.context = context
        self.accepted = 0
        self.handshake_failures = 0
        self.piped = 0

    async def accept(self, raw_reader: asyncio.StreamReader, raw_writer: asyncio.StreamWriter) -> None:
        """A plain TCP connection: the TLS handshake is done here so that a refusal is seen and counted."""
        self.accepted += 1
        try:
            await raw_writer.start_tls(self.context)
        except (ssl.SSLError, ConnectionError, OSError):
            self.handshake_failures += 1
            raw_writer.transport.abort()
            return
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            raw_writer.transport.abort()
            return
        self.piped += 1
        await asyncio.gather(self.pipe(raw_reader, upstream_writer), self.pipe(upstream_reader, raw_writer))

    @staticmethod
    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError, ssl.SSLError):
            pass
        finally:
            writer.transport.abort()  # the other side ended: so does this one (no half-open pipes)

    async def stats(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        body = json.dumps({"accepted": self.accepted, "handshake_failures": self.handshake_failures,
                           "piped": self.piped}).encode()
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n"
                     + f"content-length: {len(body)}\r\n\r\n".encode() + body)
        await writer.drain()
        writer.close()


async def main() -> None:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--target", type=int, required=True, help="the local port to pipe to")
    parser.add_argument("--tls-cert", required=True)
    parser.add_argument("--tls-key", required=True)
    args = parser.parse_args()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(args.tls_cert, args.tls_key)
    front = Front(args.target, context)
    server = await asyncio.start_server(front.accept, "127.0.0.1", 0)
    stats = await asyncio.start_server(front.stats, "127.0.0.1", 0)
    print(f"READY {server.sockets[0].getsockname()[1]}", flush=True)
    print(f"STATS {stats.sockets[0].getsockname()[1]}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
