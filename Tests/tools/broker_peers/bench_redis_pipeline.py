"""Benchmark peer: redis-py doing the Redis sink's appends, pipelined, waiting for every answer.

    python bench_redis_pipeline.py URL COUNT SCRIPT_FILE [--page N] [--prefix P]

The same appends as the bridge's Redis sink: the dedup script from SCRIPT_FILE (the sink's own source, which the
benchmark writes), EVALSHA with the stream `directus.articles`, the dedup key `directus-bridge:dedup:<stream>:<id>`,
a window of 86400 s, MAXLEN 0 and the six fields (id, type, collection, key, event, the ~450-byte event JSON as
payload), ids P_00000000…. Each pipeline (transaction=False) holds N appends (default 500) and is executed before
the next: a page barrier in activity mode, the sink's pipeline size in a stream. Prints {"messages_per_second": R,
"failures": F, "cpu_seconds": C} (C: its own CPU time while timed); a failure is an answer other than {1, id}.
"""
import argparse
import json
import time

import redis

STREAM = "directus.articles"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("count", type=int)
    parser.add_argument("script")
    parser.add_argument("--page", type=int, default=500)
    parser.add_argument("--prefix", default="py")
    args = parser.parse_args()
    client = redis.Redis.from_url(args.url)
    with open(args.script, "rb") as file:
        sha = client.script_load(file.read())
    body = "lorem ipsum " * 22
    appends = []
    for index in range(args.count):
        key = f"item-{index % 1000}"
        event_id = f"{args.prefix}_{index:08d}"
        payload = (f'{{"id":"{event_id}","type":"directus.items.update","collection":"articles","event":"update",'
                   f'"key":"{key}","seq":{index},"data":{{"id":"{key}","title":"Article {index}",'
                   f'"body":"{body}","tags":["a","b"],"rating":4.5,"draft":null}}}}').encode()
        appends.append((f"directus-bridge:dedup:{STREAM}:{event_id}", event_id, key, payload))
    failures = 0
    start = time.perf_counter()
    cpu_start = time.process_time()
    for first in range(0, len(appends), args.page):
        pipe = client.pipeline(transaction=False)
        for dedup, event_id, key, payload in appends[first:first + args.page]:
            pipe.evalsha(sha, 2, STREAM, dedup, 86400, 0, "id", event_id, "type", "directus.items.update",
                         "collection", "articles", "key", key, "event", "update", "payload", payload)
        for answer in pipe.execute(raise_on_error=False):
            if not (isinstance(answer, list) and len(answer) == 2 and answer[0] == 1):
                failures += 1
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    print(json.dumps({"messages_per_second": args.count / elapsed, "failures": failures, "cpu_seconds": cpu}))


if __name__ == "__main__":
    main()
