"""Server-to-client WebSocket frames written straight to the transport (RFC 6455 §5.2, never masked).

The emulator writes every frame itself so it controls what Directus does differently from a polite server:
close frames without a status code (docs/directus-protocol.md §7.1: peers see 1005), TCP drops without any frame (1006),
hostile frames.
"""
from __future__ import annotations

import asyncio
import socket
import struct

TEXT, BINARY, CLOSE, PING, PONG = 0x1, 0x2, 0x8, 0x9, 0xA

CLOSE_WITHOUT_CODE = b"\x88\x00"


def header(opcode: int, length: int, fin: bool = True) -> bytes:
    first = (0x80 if fin else 0) | opcode
    if length < 126:
        return bytes((first, length))
    if length < 65536:
        return struct.pack("!BBH", first, 126, length)
    return struct.pack("!BBQ", first, 127, length)


def encode(opcode: int, payload: bytes) -> bytes:
    return header(opcode, len(payload)) + payload


def text(payload: str | bytes) -> bytes:
    data = payload.encode("utf-8") if isinstance(payload, str) else payload
    return header(TEXT, len(data)) + data


def close(code: int | None) -> bytes:
    """A close frame; `None` (or 1005, "no status received") gives an empty body, as the ws library sends."""
    if code is None or code == 1005:
        return CLOSE_WITHOUT_CODE
    return encode(CLOSE, struct.pack("!H", code))


def drop(transport: asyncio.BaseTransport | None, reset: bool = True) -> None:
    """Ends the TCP connection at once without a close frame: RST when `reset` (SO_LINGER 0), else FIN.

    Either way unsent data is discarded, like Node's `socket.destroy()` in Directus's `terminate()` (§7.1).
    """
    if transport is None:
        return
    if reset:
        sock = transport.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass
    transport.abort()
