"""A TCP proxy before an MQTT broker that reports each connection's CONNECT and can cut every connection, for the
MQTT client's reconnect tests.

    python mqtt_cutting_proxy.py --target PORT

Prints `READY <port>` (the proxy's port), then `CONTROL <port>`: a connection to the control port closes every
connection the proxy pipes (the client sees its broker connection lost, the broker sees the client go) and is then
closed itself. For each piped connection, once its CONNECT packet has passed, prints one JSON line
{"connect": N, "protocol": level, "clean_start": bool, "session_expiry": seconds, or null when the CONNECT carries
no Session Expiry Interval (MQTT 5: the session then ends with the connection)}.
"""
from __future__ import annotations

import argparse
import asyncio
import json

# MQTT 5 CONNECT properties this parser steps over: identifier -> fixed size, or a kind of variable size.
FIXED = {0x11: 4, 0x21: 2, 0x27: 4, 0x22: 2, 0x19: 1, 0x17: 1}
STRING, PAIR, BINARY = 0x15, 0x26, 0x16
SESSION_EXPIRY = 0x11


def varint(data: bytes, at: int) -> tuple[int, int] | None:
    """An MQTT variable byte integer at `at`: (value, next offset), None when incomplete."""
    value, shift = 0, 0
    for index in range(at, min(at + 4, len(data))):
        value |= (data[index] & 0x7F) << shift
        if data[index] & 0x80 == 0:
            return value, index + 1
        shift += 7
    return None


def parse_connect(packet: bytes) -> dict:
    """What the report says of a whole CONNECT packet (fixed header included)."""
    _, at = varint(packet, 1)
    name_length = int.from_bytes(packet[at:at + 2], "big")
    at += 2 + name_length
    level, flags = packet[at], packet[at + 1]
    at += 4  # level, flags, keep-alive
    expiry = None
    if level == 5:
        length, at = varint(packet, at)
        end = at + length
        while at < end:
            identifier = packet[at]
            at += 1
            if identifier == SESSION_EXPIRY:
                expiry = int.from_bytes(packet[at:at + 4], "big")
            if identifier in FIXED:
                at += FIXED[identifier]
            elif identifier in (STRING, BINARY):
                at += 2 + int.from_bytes(packet[at:at + 2], "big")
            elif identifier == PAIR:
                at += 2 + int.from_bytes(packet[at:at + 2], "big")
                at += 2 + int.from_bytes(packet[at:at + 2], "big")
            else:
                break  # a property this report does not need; the rest is not read
    return {"protocol": level, "clean_start": bool(flags & 0x02), "session_expiry": expiry}


class Proxy:
    def __init__(self, target: int) -> None:
        self.target = target
        self.writers: set[asyncio.StreamWriter] = set()
        self.connections = 0

    async def client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            broker_reader, broker_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.close()
            return
        self.writers.update((writer, broker_writer))
        self.connections += 1
        number = self.connections
        try:
            await asyncio.gather(self.pipe(reader, broker_writer, number), self.pipe(broker_reader, writer, None))
        finally:
            for each in (writer, broker_writer):
                self.writers.discard(each)
                each.close()

    async def pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, connect: int | None) -> None:
        """Copies until either side ends; the client's side reports its CONNECT (`connect` is its number)."""
        pending = b""
        try:
            while data := await reader.read(65536):
                if connect is not None:
                    pending += data
                    header = varint(pending, 1) if len(pending) > 1 else None
                    if header and len(pending) >= header[1] + header[0]:
                        report = {"connect": connect, **parse_connect(pending[:header[1] + header[0]])}
                        print(json.dumps(report), flush=True)
                        connect, pending = None, b""
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    async def cut(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for each in list(self.writers):
            each.transport.abort()
        self.writers.clear()
        writer.close()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", type=int, required=True)
    args = parser.parse_args()
    proxy = Proxy(args.target)
    server = await asyncio.start_server(proxy.client, "127.0.0.1", 0)
    control = await asyncio.start_server(proxy.cut, "127.0.0.1", 0)
    print(f"READY {server.sockets[0].getsockname()[1]}", flush=True)
    print(f"CONTROL {control.sockets[0].getsockname()[1]}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main())
