#!/usr/bin/env python3
"""Runs the Directus emulator: `python Tests/tools/directus_emulator/server.py [--port 0] [--seed demo] …`.

Prints exactly one line `READY <port>` on stdout once it listens (the Swift tests wait for it); logs go to
stderr. SIGTERM or SIGINT stops it at once, dropping every connection like Directus's `terminate()`.
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys

if __package__ in (None, ""):
    # Run as a script: make `directus_emulator` importable from its parent folder (Tests/tools).
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    __package__ = "directus_emulator"

from directus_emulator import settings as settings_module  # noqa: E402
from directus_emulator.app import Emulator  # noqa: E402
from directus_emulator.generator import GeneratorJob  # noqa: E402


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="A Directus-compatible server for tests and the demo.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed as READY <port>)")
    parser.add_argument("--seed", default="default", choices=("default", "demo", "blackbox"))
    parser.add_argument("--generate", type=float, default=0.0, metavar="RATE",
                        help="run a mixed change generator on articles and comments at RATE changes/s")
    parser.add_argument("--log-level", default="warning", choices=("debug", "info", "warning", "error"))
    settings_module.add_arguments(parser)
    return parser.parse_args(argv)


async def run(arguments: argparse.Namespace) -> None:
    emulator = Emulator(settings_module.from_arguments(arguments), arguments.seed)
    port = await emulator.start(arguments.host, arguments.port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    if arguments.generate > 0:
        # The demo's generator: endless mixed changes, split over two collections.
        interval = 2000.0 / arguments.generate
        for collection in ("articles", "comments"):
            emulator.control.generator.start(GeneratorJob(collection, -1, interval, "mixed"))
    logging.getLogger("emulator").info("listening on %s:%d", arguments.host, port)
    print(f"READY {port}", flush=True)
    watchdog = asyncio.create_task(_stop_when_orphaned(stop))
    await stop.wait()
    watchdog.cancel()
    await emulator.stop()


async def _stop_when_orphaned(stop: asyncio.Event) -> None:
    """Stops the emulator when the process that started it is gone (a crashed test run leaves no server)."""
    parent = os.getppid()
    while not stop.is_set():
        await asyncio.sleep(1)
        if os.getppid() != parent:
            logging.getLogger("emulator").warning("parent process exited; stopping")
            stop.set()


def main(argv: list[str] | None = None) -> int:
    # A parent that starts us from a thread with signals blocked (Swift Foundation's Process does) passes that
    # mask on; without this, SIGTERM would never reach the handler and every stop would need SIGKILL.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP})
    arguments = parse_arguments(argv)
    logging.basicConfig(level=arguments.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        asyncio.run(run(arguments))
    except ValueError as error:
        print(f"directus emulator: {error}", file=sys.stderr)
        return 64
    return 0


if __name__ == "__main__":
    sys.exit(main())
