"""The peer of the `live-pipeline` benchmark: the same job as the bridge's live path, done the obvious Python way.

Connects to the Directus emulator's socket, authenticates with a static token, subscribes to a collection and turns
every item of every create event into an NDJSON event line written to /dev/null, until COUNT items. Prints one JSON
result: items/s, the p50/p99 latency from frame received to line written, and its own peak RSS.

    python live_consumer.py WS_URL TOKEN COLLECTION COUNT
"""
import asyncio, datetime, json, sys, time, uuid
import websockets


async def main(url: str, token: str, collection: str, count: int) -> None:
    out = open("/dev/null", "w")
    latencies, done, first = [], 0, None
    async with websockets.connect(url, max_size=None, ping_interval=None) as ws:
        await ws.send(json.dumps({"type": "auth", "access_token": token}))
        assert json.loads(await ws.recv())["status"] == "ok"
        await ws.send(json.dumps({"type": "subscribe", "collection": collection, "uid": collection}))
        while json.loads(await ws.recv()).get("event") != "init":
            pass
        print("READY", flush=True)
        while done < count:
            frame = await ws.recv()
            received = time.perf_counter()
            first = first or received
            message = json.loads(frame)
            if message.get("type") == "ping":
                await ws.send('{"type":"pong"}')
                continue
            now = datetime.datetime.now(datetime.timezone.utc).isoformat()
            for item in message.get("data", []):
                line = {"id": "evt_" + str(uuid.uuid4()), "type": "directus.items." + message["event"],
                        "event": message["event"], "collection": collection, "key": str(item["id"]), "data": item,
                        "origin": "live", "seq": None, "time": now, "received_at": now, "subscription": collection}
                out.write(json.dumps(line, separators=(",", ":")) + "\n")
                done += 1
            latencies.append(time.perf_counter() - received)
    elapsed = time.perf_counter() - first
    latencies.sort()
    print(json.dumps({"items": done, "seconds": elapsed, "items_per_second": done / elapsed,
                      "p50_ms": latencies[len(latencies) // 2] * 1000,
                      "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000,
                      "peak_rss_mib": peak_rss_mib()}), flush=True)


def peak_rss_mib() -> float:
    """This interpreter's own peak RSS (VmHWM). Not getrusage's ru_maxrss: Linux carries it across exec, so a child
    of a larger process (the benchmark that starts this one) reports its parent's peak instead of its own."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
