"""The Python peer of `bridge-benchmarks json-hot-path`: the same frame → NDJSON line transform with orjson.

Per message: parse the frame, and for every item of `data` build the event object (the bridge's field order, a fixed
event id and time as the benchmark's "decode + key + write" rows use) and append its orjson encoding and a newline
to a buffer that is emptied past 48 KiB. Prints the best items/s of RUNS runs, in this thread's CPU time.

    python json_hot_path_orjson.py FRAME_FILE MESSAGES RUNS
    JSON_HOT_PATH_PRINT=1 python json_hot_path_orjson.py FRAME_FILE 1 1     # the lines instead, for checking
"""
import os
import sys
import time

import orjson

FIXED_ID = "evt_fixed"
FIXED_TIME = "2026-12-04T23:40:00.000000Z"


def run(frame: bytes, messages: int, out: bytearray) -> int:
    items = 0
    for _ in range(messages):
        message = orjson.loads(frame)
        if message["type"] != "subscription":
            raise ValueError("not a subscription frame")
        event, uid = message["event"], message["uid"]
        for item in message["data"]:
            line = {"id": FIXED_ID, "type": "directus.items." + event, "event": event, "collection": uid,
                    "key": str(item["id"]), "data": item, "origin": "live", "seq": None, "time": FIXED_TIME,
                    "received_at": FIXED_TIME, "subscription": uid}
            out += orjson.dumps(line)
            out += b"\n"
            items += 1
        if len(out) > 48 * 1024:
            out.clear()
    return items


def main(path: str, messages: int, runs: int) -> None:
    frame = open(path, "rb").read()
    out = bytearray()
    if os.environ.get("JSON_HOT_PATH_PRINT"):
        run(frame, messages, out)
        sys.stdout.buffer.write(out)
        return
    best = 0.0
    for _ in range(runs):
        out.clear()
        start = time.thread_time()
        items = run(frame, messages, out)
        best = max(best, items / (time.thread_time() - start))
    print(f"{best:.0f}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
