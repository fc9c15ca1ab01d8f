"""Makes a redis-server slow for the delivery matrix's "sink slow" fault, as a server busy with other clients is.

    python Tests/tools/sink_peers/redis_slowdown.py URL [--busy-ms N] [--idle-ms M]

Blocks the server for N ms (`DEBUG SLEEP`, which needs `enable-debug-command local`), lets it run for M ms, and
again, until SIGTERM: each append the bridge sends meanwhile waits up to N ms for its answer. A server that is
gone is tried again every M ms. Prints READY once started.
"""
from __future__ import annotations

import argparse
import signal
import sys
import time

import redis


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--busy-ms", type=float, default=40)
    parser.add_argument("--idle-ms", type=float, default=20)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    client = redis.Redis.from_url(args.url, socket_timeout=10)
    client.ping()
    print("READY 0", flush=True)
    while True:
        try:
            client.execute_command("DEBUG", "SLEEP", f"{args.busy_ms / 1000:.3f}")
        except redis.ConnectionError:
            pass
        time.sleep(args.idle_ms / 1000)


if __name__ == "__main__":
    main()
