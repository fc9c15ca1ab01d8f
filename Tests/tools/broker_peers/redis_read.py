"""Reads a Redis stream with redis-py, for the Redis client and sink tests.

    python redis_read.py URL STREAM [--ca CA_FILE]

Prints one JSON object: {"entries": [{"id": ..., "fields": {name: value, ...}}, ...]} with every entry of STREAM in
order (XRANGE - +, read in pages), values decoded as UTF-8.
"""
import argparse
import json

import redis


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("stream")
    parser.add_argument("--ca")
    args = parser.parse_args()
    options = {"ssl_ca_certs": args.ca} if args.ca else {}
    client = redis.Redis.from_url(args.url, **options)
    entries = []
    start = "-"
    while True:
        page = client.xrange(args.stream, min=start, max="+", count=10000)
        if start != "-":
            page = page[1:]  # the first is the last entry of the previous page
        if not page:
            break
        for entry_id, fields in page:
            entries.append(
                {
                    "id": entry_id.decode(),
                    "fields": {k.decode(): v.decode("utf-8", "replace") for k, v in fields.items()},
                }
            )
        start = page[-1][0].decode()
    print(json.dumps({"entries": entries}))


if __name__ == "__main__":
    main()
