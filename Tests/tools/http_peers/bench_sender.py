"""The Python peer of the `http-multi` benchmark: POSTs webhook-sized bodies with aiohttp at a fixed concurrency.

    python Tests/tools/http_peers/bench_sender.py URL --concurrency N --total M [--body-size B]

Keeps N requests in flight over one aiohttp ClientSession (connection pool limited to N, keep-alive) until M
requests are answered, after a short warm-up, and prints one JSON line:
{"concurrency": N, "requests": M, "seconds": S, "requests_per_second": R, "failures": F}.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import time

import aiohttp


async def run(url: str, concurrency: int, total: int, body: bytes) -> dict:
    connector = aiohttp.TCPConnector(limit=concurrency, force_close=False)
    headers = {"content-type": "application/json", "webhook-id": "evt_bench"}
    async with aiohttp.ClientSession(connector=connector) as session:
        failures = 0

        async def worker(count: int) -> None:
            nonlocal failures
            for _ in range(count):
                async with session.post(url, data=body, headers=headers) as response:
                    await response.read()
                    if response.status >= 300:
                        failures += 1

        warmup = min(total // 10, 1000)
        await asyncio.gather(*(worker(warmup // concurrency + 1) for _ in range(concurrency)))
        per_worker = [total // concurrency + (1 if i < total % concurrency else 0) for i in range(concurrency)]
        failures = 0
        start = time.perf_counter()
        await asyncio.gather(*(worker(n) for n in per_worker))
        seconds = time.perf_counter() - start
    return {"concurrency": concurrency, "requests": total, "seconds": seconds,
            "requests_per_second": total / seconds, "failures": failures}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("url")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--total", type=int, default=10000)
    parser.add_argument("--body-size", type=int, default=300)
    args = parser.parse_args()
    body = b'{"event":"update","data":"' + b"x" * max(0, args.body_size - 28) + b'"}'
    print(json.dumps(asyncio.run(run(args.url, args.concurrency, args.total, body))), flush=True)


if __name__ == "__main__":
    main()
