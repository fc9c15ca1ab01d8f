"""The peer of the `snapshot-pages` benchmark: reads every item of a collection from the Directus emulator as a
snapshot does (keyset pages in primary-key order: `sort=id`, `filter={"id":{"_gt":LAST}}`, `limit=PAGE`), parses each
answer with `json` and writes one compact JSON line per item to OUTPUT, over one kept-alive `http.client` connection.

    python snapshot_pages_peer.py URL COLLECTION PAGE OUTPUT

Prints one JSON object: {"items": N, "seconds": wall, "cpu_seconds": user + system of this process}.
"""
import http.client
import json
import resource
import sys
import time
import urllib.parse


def main() -> None:
    url, collection, page, output = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port)
    headers = {"authorization": "Bearer admin-static-token", "accept": "application/json"}
    encoder = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
    start = time.monotonic()
    items = 0
    last = None
    with open(output, "w", encoding="utf-8") as out:
        while True:
            query = {"sort": "id", "limit": str(page)}
            if last is not None:
                query["filter"] = json.dumps({"id": {"_gt": last}}, separators=(",", ":"))
            connection.request("GET", f"/items/{collection}?" + urllib.parse.urlencode(query), headers=headers)
            response = connection.getresponse()
            body = response.read()
            if response.status != 200:
                raise SystemExit(f"GET /items/{collection}: {response.status} {body[:200]!r}")
            data = json.loads(body)["data"]
            for item in data:
                out.write(encoder.encode(item))
                out.write("\n")
            items += len(data)
            if len(data) < page:
                break
            last = data[-1]["id"]
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"items": items, "seconds": time.monotonic() - start,
                      "cpu_seconds": usage.ru_utime + usage.ru_stime}))


if __name__ == "__main__":
    main()
