"""Reads the bridge's NDJSON sink from a named pipe into a file, as a slow or stalled consumer would.

    python Tests/tools/sink_peers/fifo_reader.py FIFO OUT [--delay-ms N] [--pause-file PATH]

Copies every line from FIFO to OUT (appending, flushed per line), sleeping N ms after each line (a slow
consumer). While PATH exists it reads nothing (a consumer that is down: the pipe fills and the bridge's writes
block), and goes on once PATH is removed. When the writer closes the pipe (the bridge stopped or was killed) it
opens it again and waits for the next writer. Prints READY once started. Ends on SIGTERM.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("fifo")
    parser.add_argument("out")
    parser.add_argument("--delay-ms", type=float, default=0)
    parser.add_argument("--pause-file", default="")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print("READY 0", flush=True)
    delay = args.delay_ms / 1000
    with open(args.out, "ab", buffering=0) as out:
        while True:
            with open(args.fifo, "rb") as pipe:  # blocks until a writer opens it
                for line in pipe:
                    while args.pause_file and os.path.exists(args.pause_file):
                        time.sleep(0.02)
                    out.write(line)
                    if delay:
                        time.sleep(delay)


if __name__ == "__main__":
    main()
