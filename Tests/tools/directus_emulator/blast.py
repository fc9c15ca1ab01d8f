"""The benchmark feeder: pre-encoded `create` subscription frames written to subscribers as fast as possible.

Items are not stored and produce no activity: this measures the consumer, not the emulator. Frames are built
before the clock starts and written to the transport in ~1 MiB batches, waiting only when the kernel and the
transport buffer are full (the consumer is slower than us). With a `rate` (frames per second) they are paced
instead: every millisecond tick writes the frames due by then, for latency at a steady load.

`direct` replays the same pre-encoded frames from one thread per subscriber with blocking `sendall` on the socket
itself (poll + send in C, without the GIL), bypassing the event loop and its transport buffer: it costs a third to
a half of the event loop's CPU per frame, which on a loaded machine let the old feeder fall behind the bridge it
feeds (BENCHMARKS.md, "the live path per event, a feeder that keeps up"). While a client is replayed nothing else
is written to it (`Client.replaying`), so no frame of the emulator's own (a heartbeat ping) can land inside a replayed one.
"""
from __future__ import annotations

import asyncio
import os
import socket
import time
from dataclasses import dataclass
from typing import Any

from . import frames, jsonutil
from .ws_client import OPEN, Client

BATCH_BYTES = 1 << 20
HIGH_WATER = 8 << 20
ONE_CHUNK = 1 << 62  # `direct`: every frame of a subscription in one chunk, sent with one `sendall`


@dataclass
class _Target:
    client: Client
    chunks: list[bytes]


def _chunks(uid: str | None, count: int, size: int, start_id: int, batch_bytes: int = BATCH_BYTES) \
        -> tuple[list[bytes], int]:
    """Frames `{"type":"subscription","event":"create","data":[item],"uid":…}` with items of about `size` bytes,
    joined into chunks of about `batch_bytes` (1: one frame per chunk)."""
    skeleton = jsonutil.dumps({"id": 0, "title": "Blast item", "status": "published", "body": ""})
    padding = "x" * max(0, size - len(skeleton) - 6)
    prefix = '{"type":"subscription","event":"create","data":[{"id":'
    suffix = ',"title":"Blast item","status":"published","body":"' + padding + '"}]'
    suffix += (',"uid":' + jsonutil.dumps(uid) if uid is not None else "") + "}"
    chunks: list[bytes] = []
    parts: list[bytes] = []
    pending = 0
    total = 0
    header = frames.header
    for item_id in range(start_id, start_id + count):
        payload = f"{prefix}{item_id}{suffix}".encode()
        frame = header(frames.TEXT, len(payload)) + payload
        parts.append(frame)
        pending += len(frame)
        if pending >= batch_bytes:
            chunks.append(b"".join(parts))
            total += pending
            parts, pending = [], 0
    if parts:
        chunks.append(b"".join(parts))
        total += pending
    return chunks, total


async def _drain(client: Client, limit: int = HIGH_WATER) -> None:
    transport = client.transport
    while transport is not None and not transport.is_closing() and transport.get_write_buffer_size() > limit:
        await asyncio.sleep(0.0005)


async def _paced(targets: list[_Target], rate: float) -> None:
    """Writes the frames (one per chunk) at `rate` per second: each 1 ms tick sends what is due by then."""
    started = time.perf_counter()
    sent = 0
    total = max((len(t.chunks) for t in targets), default=0)
    while sent < total:
        due = min(total, int((time.perf_counter() - started) * rate) + 1)
        for target in targets:
            transport = target.client.transport
            if transport is not None and not transport.is_closing() and sent < len(target.chunks):
                transport.write(b"".join(target.chunks[sent:due]))
        sent = due
        await asyncio.sleep(0.001)


def _send_all(client: Client, data: bytes) -> None:
    """Blocking `sendall` of `data` on a duplicate of the client's socket (called on a worker thread). The duplicate
    shares the file's O_NONBLOCK with the event loop's socket; a timeout keeps it non-blocking (Python polls)."""
    sock = client.transport.get_extra_info("socket") if client.transport is not None else None
    if sock is None:
        return
    with socket.socket(fileno=os.dup(sock.fileno())) as duplicate:
        duplicate.settimeout(600)
        try:
            duplicate.sendall(data)
        except OSError:
            pass  # the peer went away: what was sent is what it got, as with the event loop's transport


async def _direct(targets: list[_Target]) -> None:
    """Replays the frames from one thread per client (its subscriptions one after another), once the transport's
    buffer is empty."""
    per_client: dict[Client, list[bytes]] = {}
    for target in targets:
        per_client.setdefault(target.client, []).extend(target.chunks)
    for client in per_client:
        client.replaying = True
    try:
        for client in per_client:
            await _drain(client, 0)
        await asyncio.gather(*(asyncio.to_thread(_send_all, client, b"".join(chunks))
                               for client, chunks in per_client.items()))
    finally:
        for client in per_client:
            client.replaying = False


async def blast(clients: list[Client], collection: str, count: int, size: int, start_id: int = 1,
                rate: float = 0, direct: bool = False) -> dict[str, Any]:
    """Sends `count` frames to every subscription on `collection` (no `event` filter or `event: create`), as fast
    as possible (through the event loop, or `direct` from threads), or `rate` per second."""
    prepare_started = time.perf_counter()
    targets: list[_Target] = []
    total_bytes = 0
    for client in clients:
        if client.state != OPEN:
            continue
        for subscription in client.subscriptions:
            if subscription.collection == collection and subscription.item is None \
                    and subscription.event in (None, "create"):
                chunks, size_bytes = _chunks(subscription.uid, count, size, start_id,
                                             1 if rate else ONE_CHUNK if direct else BATCH_BYTES)
                targets.append(_Target(client, chunks))
                total_bytes += size_bytes
    prepare_seconds = time.perf_counter() - prepare_started
    started = time.perf_counter()
    cpu_started = time.process_time()
    if rate:
        await _paced(targets, rate)
    elif direct:
        await _direct(targets)
    for index in range(0 if rate or direct else max((len(t.chunks) for t in targets), default=0)):
        for target in targets:
            transport = target.client.transport
            if index < len(target.chunks) and transport is not None and not transport.is_closing():
                transport.write(target.chunks[index])
                if transport.get_write_buffer_size() > HIGH_WATER:
                    await _drain(target.client)
    queued = time.perf_counter()
    for target in targets:  # until the last byte left our buffer for the kernel
        transport = target.client.transport
        while transport is not None and not transport.is_closing() and transport.get_write_buffer_size() > 0:
            await asyncio.sleep(0.0005)
    finished = time.perf_counter()
    cpu_seconds = time.process_time() - cpu_started
    frames_sent = count * len(targets)
    seconds = max(finished - started, 1e-9)
    return {
        "collection": collection,
        "subscriptions": len(targets),
        "frames": frames_sent,
        "bytes": total_bytes,
        "item_bytes": size,
        "prepare_seconds": round(prepare_seconds, 4),
        "queue_seconds": round(queued - started, 4),
        "seconds": round(seconds, 4),
        "frames_per_second": round(frames_sent / seconds),
        "megabytes_per_second": round(total_bytes / seconds / 1e6, 1),
        "cpu_seconds": round(cpu_seconds, 4),  # the emulator process's CPU while sending (every thread)
    }
