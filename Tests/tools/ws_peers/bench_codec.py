"""Benchmark peer for `bridge-benchmarks ws-codec`: decodes the same in-memory stream of server frames with the
`websockets` library's sans-I/O protocol (frame parsing) and UTF-8-decodes each text payload, as a client does.

    python bench_codec.py STREAM_FILE CHUNK_SIZE

Prints one JSON line: {"frames": N, "bytes": B, "seconds": S} (process CPU time of the decoding loop).
"""
import json
import sys
import time

from websockets.frames import Opcode
from websockets.protocol import Protocol, Side, State


def main() -> None:
    path, chunk_size = sys.argv[1], int(sys.argv[2])
    with open(path, "rb") as f:
        data = f.read()
    chunks = [data[i:i + chunk_size] for i in range(0, len(data), chunk_size)]
    protocol = Protocol(Side.CLIENT, state=State.OPEN, max_size=None)
    frames = 0
    start = time.process_time()
    for chunk in chunks:
        protocol.receive_data(chunk)
        for event in protocol.events_received():
            if event.opcode == Opcode.TEXT:
                event.data.decode("utf-8")
            frames += 1
    seconds = time.process_time() - start
    print(json.dumps({"frames": frames, "bytes": len(data), "seconds": seconds}))


if __name__ == "__main__":
    main()
