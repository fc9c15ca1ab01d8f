"""Benchmark peer: a nats-py JetStream publisher waiting for every publish acknowledgement.

    python bench_nats_publisher.py SERVER SUBJECT COUNT [--window N] [--page N] [--prefix P]

Keeps WINDOW publishes in flight (each `js.publish` awaits its acknowledgement), with Nats-Msg-Id set like the
bridge's (ids P_00000000…), same ~450-byte JSON payload. With --page N it does what the bridge does in activity
mode: publishes N messages (WINDOW in flight), waits for all their acknowledgements, then the next N; without (or
0) it waits for every acknowledgement at the end. Prints {"messages_per_second": R, "failures": F, "cpu_seconds": C}
(C: its own CPU time while timed).
"""
import argparse
import asyncio
import json
import time

import nats

from bench_events import bench_event


async def run(args) -> None:
    nc = await nats.connect(servers=[args.server])
    js = nc.jetstream(timeout=10)
    payloads = []
    for index in range(args.count):
        event_id, _, line = bench_event(args.prefix, index)
        payloads.append((event_id, line.encode()))
    failures = 0
    semaphore = asyncio.Semaphore(args.window)

    async def publish(event_id: str, data: bytes) -> None:
        nonlocal failures
        try:
            await js.publish(args.subject, data, headers={"Nats-Msg-Id": event_id})
        except Exception:
            failures += 1
        finally:
            semaphore.release()

    async def publish_all(items) -> None:
        tasks = []
        for event_id, data in items:
            await semaphore.acquire()
            tasks.append(asyncio.ensure_future(publish(event_id, data)))
        await asyncio.gather(*tasks)

    # Warm-up, with ids of its own.
    await publish_all([("warm_" + event_id, data) for event_id, data in payloads[:500]])
    page = args.page if args.page > 0 else len(payloads)
    start = time.perf_counter()
    cpu_start = time.process_time()
    for first in range(0, len(payloads), page):
        await publish_all(payloads[first:first + page])
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    await nc.close()
    print(json.dumps({"messages_per_second": args.count / elapsed, "failures": failures, "cpu_seconds": cpu}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("server")
    parser.add_argument("subject")
    parser.add_argument("count", type=int)
    parser.add_argument("--window", type=int, default=512)
    parser.add_argument("--page", type=int, default=0)
    parser.add_argument("--prefix", default="py")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
