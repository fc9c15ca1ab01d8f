"""Benchmark peer for `bridge-benchmarks ws-loopback`: the `websockets` asyncio client reads COUNT messages from
the benchmark's local sender, exactly as the Swift client does, then closes.

    python bench_client.py ws://127.0.0.1:PORT/ COUNT

Prints one JSON line: {"messages": N, "bytes": B, "seconds": S, "cpu_seconds": C}: wall and process CPU time from
the open connection to the last message.
"""
import asyncio
import json
import sys
import time

from websockets.asyncio.client import connect


async def main() -> None:
    url, count = sys.argv[1], int(sys.argv[2])
    async with connect(url, max_size=None, compression=None, ping_interval=None, max_queue=None) as connection:
        received = 0
        size = 0
        start = time.perf_counter()
        cpu_start = time.process_time()
        while received < count:
            message = await connection.recv()
            size += len(message)
            received += 1
        seconds = time.perf_counter() - start
        cpu_seconds = time.process_time() - cpu_start
    print(json.dumps({"messages": received, "bytes": size, "seconds": seconds, "cpu_seconds": cpu_seconds}))


if __name__ == "__main__":
    asyncio.run(main())
