"""WebSocket peers for the conformance tests of the Swift client (Tests/BridgeWebSocketTests).

    python peer.py echo [--host 127.0.0.1] [--cert server.pem --key server.key]
    python peer.py raw  [--host 127.0.0.1]

Both bind a random port and print `READY <port>` (the PythonServer protocol of Tests/BridgeTestSupport).

`echo` is the `websockets` library (an independent, widely used implementation): it echoes every message,
answers pings, and runs the close handshake. Two text commands change that:
  `__request__`            replies with the upgrade request (path and headers) as JSON;
  `__close__ CODE REASON`  closes the connection with CODE and REASON.

`raw` speaks the protocol by hand over asyncio streams, so it can break it on purpose. `/answer?hex=...` answers
the upgrade with any bytes (hostile handshake answers). Otherwise the request path picks
a scenario (see SCENARIOS below), the query its parameters; `id=` tags the result lines. After its scenario,
the server reads the client's frames, checks that each is masked, and prints `RESULT <id> <what>` lines:
  `RESULT <id> close <code> <reason>`, `RESULT <id> close none` (empty close payload), `RESULT <id> eof`,
  `RESULT <id> unmasked` (a client frame without mask: a client bug).
It answers a client close with a close (unless `noreply=1`) and then closes TCP.
"""
from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import json
import os
import ssl
import struct
import sys
import urllib.parse

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def log(line: str) -> None:
    print(line, flush=True)


async def exit_when_orphaned() -> None:
    """Ends the process when the test process that started it is gone (no leaked servers)."""
    parent = os.getppid()
    while True:
        await asyncio.sleep(0.5)
        if os.getppid() != parent:
            os._exit(0)


# MARK: - echo (the websockets library)


async def run_echo(host: str, cert: str | None, key: str | None) -> None:
    from websockets.asyncio.server import serve
    from websockets.exceptions import ConnectionClosed

    async def handler(connection):
        try:
            async for message in connection:
                if message == "__request__":
                    request = connection.request
                    await connection.send(json.dumps({"path": request.path, "headers": list(request.headers.raw_items())}))
                elif isinstance(message, str) and message.startswith("__close__"):
                    _, code, reason = (message.split(" ", 2) + ["", ""])[:3]
                    await connection.close(int(code), reason)
                else:
                    await connection.send(message)
        except ConnectionClosed:
            pass

    context = None
    if cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
    async with serve(handler, host, 0, ssl=context, max_size=None, compression=None, ping_interval=None) as server:
        port = server.sockets[0].getsockname()[1]
        log(f"READY {port}")
        await exit_when_orphaned()


# MARK: - raw frames (an independent encoder: server frames are unmasked)


def frame(opcode: int, payload: bytes = b"", fin: bool = True, rsv: int = 0, mask: bytes | None = None) -> bytes:
    first = (0x80 if fin else 0) | (rsv << 4) | opcode
    length = len(payload)
    mask_bit = 0x80 if mask is not None else 0
    if length < 126:
        header = struct.pack("!BB", first, mask_bit | length)
    elif length < 65536:
        header = struct.pack("!BBH", first, mask_bit | 126, length)
    else:
        header = struct.pack("!BBQ", first, mask_bit | 127, length)
    if mask is not None:
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        header += mask
    return header + payload


def close_frame(code: int | None, reason: bytes = b"") -> bytes:
    return frame(0x8, b"" if code is None else struct.pack("!H", code) + reason)


async def read_client_frame(reader: asyncio.StreamReader):
    """One client frame: (fin, opcode, payload, masked)."""
    first, second = await reader.readexactly(2)
    length = second & 0x7F
    if length == 126:
        (length,) = struct.unpack("!H", await reader.readexactly(2))
    elif length == 127:
        (length,) = struct.unpack("!Q", await reader.readexactly(8))
    masked = bool(second & 0x80)
    mask = await reader.readexactly(4) if masked else b"\0\0\0\0"
    payload = bytearray(await reader.readexactly(length))
    for i in range(length):
        payload[i] ^= mask[i % 4]
    return bool(first & 0x80), first & 0x0F, bytes(payload), masked


class Session:
    def __init__(self, reader, writer, params):
        self.reader, self.writer, self.params = reader, writer, params
        self.id = params.get("id", "-")

    def param(self, name: str, default: str = "") -> str:
        return self.params.get(name, default)

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def next_frame(self):
        fin, opcode, payload, masked = await read_client_frame(self.reader)
        if not masked:
            log(f"RESULT {self.id} unmasked")
        return fin, opcode, payload

    async def expect_pong(self, payload: bytes) -> bool:
        _, opcode, received = await self.next_frame()
        return opcode == 0xA and received == payload

    async def finish(self) -> None:
        """Reads client frames until its close (answered unless noreply=1) or end of stream; logs the result."""
        try:
            while True:
                _, opcode, payload = await self.next_frame()
                if opcode == 0x8:
                    if len(payload) >= 2:
                        (code,) = struct.unpack("!H", payload[:2])
                        log(f"RESULT {self.id} close {code} {payload[2:].decode('utf-8', 'replace')}")
                    else:
                        log(f"RESULT {self.id} close none")
                    if self.param("noreply") != "1":
                        await self.send(frame(0x8, payload))
                    elif self.param("hold") == "1":
                        while await self.reader.read(65536):  # keep TCP open until the client drops it
                            pass
                    break
                if opcode == 0x1 and self.param("echo") == "1":
                    await self.send(frame(0x1, payload))
        except (asyncio.IncompleteReadError, ConnectionError):
            log(f"RESULT {self.id} eof")
        self.writer.close()


async def scenario_frames(s: Session) -> None:
    """Sends `hex` (raw bytes chosen by the test), then reads the client's answer."""
    await s.send(bytes.fromhex(s.param("hex")))
    if s.param("then") == "drop":
        s.writer.close()
        return
    await s.finish()


async def scenario_fragments(s: Session) -> None:
    """A message of `size` bytes in `count` fragments with a ping between fragments; then `pongs-ok N`."""
    count, size = int(s.param("count", "2")), int(s.param("size", "10"))
    opcode = 0x2 if s.param("binary") == "1" else 0x1
    text = s.param("text")
    body = text.encode() if text else bytes((i * 7 + 3) % 94 + 32 for i in range(size))
    cuts = [len(body) * i // count for i in range(count + 1)]
    pings = s.param("pings", "1") == "1"
    for i in range(count):
        piece = body[cuts[i]:cuts[i + 1]]
        await s.send(frame(opcode if i == 0 else 0x0, piece, fin=(i == count - 1)))
        if pings and i < count - 1:
            await s.send(frame(0x9, f"p{i}".encode()))
    good = 0
    if pings:
        for i in range(count - 1):
            good += await s.expect_pong(f"p{i}".encode())
    await s.send(frame(0x1, f"pongs-ok {good}".encode()))
    await s.finish()


async def scenario_ping(s: Session) -> None:
    """A ping with `size` bytes; replies `pong-ok` when the client's pong echoes it."""
    payload = bytes(i % 256 for i in range(int(s.param("size", "0"))))
    for _ in range(int(s.param("count", "1"))):
        await s.send(frame(0x9, payload))
    ok = True
    for _ in range(int(s.param("count", "1"))):
        ok = ok and await s.expect_pong(payload)
    await s.send(frame(0x1, b"pong-ok" if ok else b"pong-bad"))
    await s.finish()


async def scenario_close(s: Session) -> None:
    """Sends a close frame: `code` and `reason`, or `payload` (hex) verbatim, or an empty one."""
    if "payload" in s.params:
        await s.send(frame(0x8, bytes.fromhex(s.param("payload"))))
    elif "code" in s.params:
        await s.send(close_frame(int(s.param("code")), s.param("reason").encode()))
    else:
        await s.send(close_frame(None))
    await s.finish()


async def scenario_drop(s: Session) -> None:
    """Closes TCP without a close frame: at once, or in the middle of a frame (`midframe=1`)."""
    if s.param("midframe") == "1":
        await s.send(frame(0x1, b"x" * 100)[:50])
    await asyncio.sleep(float(s.param("delay", "0")))
    s.writer.transport.abort()


async def scenario_silent(s: Session) -> None:
    """Never sends anything and never answers a close (tests timeouts)."""
    s.params.setdefault("noreply", "1")
    s.params.setdefault("hold", "1")
    await s.finish()


async def scenario_stream(s: Session) -> None:
    """`count` text messages of `size` bytes, then waits for the client."""
    for i in range(int(s.param("count", "1"))):
        await s.send(frame(0x1, f"{i:08d}".encode() + b"m" * max(0, int(s.param("size", "8")) - 8)))
    await s.finish()


SCENARIOS = {
    "/frames": scenario_frames,
    "/fragments": scenario_fragments,
    "/ping": scenario_ping,
    "/close": scenario_close,
    "/drop": scenario_drop,
    "/silent": scenario_silent,
    "/stream": scenario_stream,
}


def http_response(status: str, headers: list[tuple[str, str]], body: bytes = b"") -> bytes:
    lines = [f"HTTP/1.1 {status}"] + [f"{k}: {v}" for k, v in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def handle_raw(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        writer.close()
        return
    lines = head.decode("latin-1").split("\r\n")
    target = lines[0].split(" ")[1]
    headers = [tuple(x.strip() for x in line.split(":", 1)) for line in lines[1:] if ":" in line]
    url = urllib.parse.urlsplit(target)
    params = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
    key = dict((k.lower(), v) for k, v in headers).get("sec-websocket-key", "")
    accept = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()

    if url.path == "/reject":
        status = params.get("status", "403")
        body = params.get("body", "").encode()
        if params.get("chunked") == "1":
            chunks = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 5]), body[i:i + 5]) for i in range(0, len(body), 5))
            writer.write(http_response(f"{status} Nope", [("Transfer-Encoding", "chunked")], chunks + b"0\r\n\r\n"))
        else:
            writer.write(http_response(f"{status} Nope", [("Content-Length", str(len(body)))], body))
        await writer.drain()
        writer.close()
        return
    if url.path == "/answer":
        # Any answer, byte for byte (`hex`), then up to `flood` KiB (at most 64 MiB) of `flood_byte` (default "f": an
        # endless chunk size), stopping early when the client closes or stops reading for 2 s: the peer is shared
        # by the whole test run and must not spend it writing to a client that has given up.
        writer.write(bytes.fromhex(params.get("hex", "")))
        flood = min(int(params.get("flood", "0")), 64 << 10)
        filler = params.get("flood_byte", "f").encode() * 1024
        sent = 0
        try:
            while sent < flood:
                writer.write(filler)
                await asyncio.wait_for(writer.drain(), 2)
                sent += 1
        except (ConnectionError, asyncio.TimeoutError):
            pass
        log(f"RESULT {params.get('id', '')} flooded {sent}")
        writer.close()
        return
    if url.path == "/not-http":
        writer.write(b"SSH-2.0-OpenSSH_9.2\r\n\r\n")
        await writer.drain()
        writer.close()
        return
    upgrade = [("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Accept", accept)]
    if url.path == "/bad-accept":
        upgrade[2] = ("Sec-WebSocket-Accept", base64.b64encode(b"x" * 20).decode())
    if url.path == "/extension":
        upgrade.append(("Sec-WebSocket-Extensions", "permessage-deflate"))
    if url.path == "/no-upgrade":
        upgrade = upgrade[2:]
    response = http_response("101 Switching Protocols", upgrade)
    if url.path == "/request":
        # The request head as JSON in a text frame sent in the same write as the 101 (tests early frames too).
        described = json.dumps({"target": target, "headers": headers}).encode()
        writer.write(response + frame(0x1, described))
        await writer.drain()
        await Session(reader, writer, params).finish()
        return
    writer.write(response)
    await writer.drain()
    scenario = SCENARIOS.get(url.path)
    session = Session(reader, writer, params)
    try:
        if scenario is None:
            await session.finish()
        else:
            await scenario(session)
    except (ConnectionError, asyncio.IncompleteReadError):
        log(f"RESULT {session.id} eof")
        writer.close()


async def run_raw(host: str) -> None:
    server = await asyncio.start_server(handle_raw, host, 0, limit=1 << 20)
    port = server.sockets[0].getsockname()[1]
    log(f"READY {port}")
    await exit_when_orphaned()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["echo", "raw"])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--cert")
    parser.add_argument("--key")
    args = parser.parse_args()
    try:
        if args.mode == "echo":
            asyncio.run(run_echo(args.host, args.cert, args.key))
        else:
            asyncio.run(run_raw(args.host))
    except KeyboardInterrupt:
        sys.exit(0)
