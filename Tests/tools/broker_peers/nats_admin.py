"""JetStream administration and read-back for tests, with a real client (nats-py).

    python nats_admin.py create-stream SERVERS NAME SUBJECTS [--replicas N] [--storage file|memory]
                                       [--duplicate-window SECONDS] [--max-msg-size BYTES]
    python nats_admin.py set-max-msg-size SERVERS NAME BYTES
    python nats_admin.py read-stream SERVERS NAME
    python nats_admin.py stream-leader SERVERS NAME

SERVERS and SUBJECTS are comma-separated. create-stream retries for 60 s, times BRIDGE_TEST_PATIENCE when the test
support sets it (a cluster elects its meta leader first), and prints OK. read-stream prints
{"messages": [{"seq", "subject", "msg_id", "data"}]} in stream order.
stream-leader prints the server name of the stream's leader. set-max-msg-size changes a stream's largest message
(-1: no limit of the stream's own).
"""
import argparse
import asyncio
import json
import os
import sys
import time

import nats
from nats.js.api import DiscardPolicy, StorageType


async def connect(servers: str):
    return await nats.connect(servers=servers.split(","), connect_timeout=2, max_reconnect_attempts=-1)


async def create_stream(args) -> None:
    deadline = time.monotonic() + 60 * float(os.environ.get("BRIDGE_TEST_PATIENCE") or 1)
    last_error = None
    while time.monotonic() < deadline:
        try:
            nc = await connect(args.servers)
            js = nc.jetstream(timeout=5)
            await js.add_stream(
                name=args.name, subjects=args.subjects.split(","), num_replicas=args.replicas,
                storage=StorageType.FILE if args.storage == "file" else StorageType.MEMORY,
                duplicate_window=float(args.duplicate_window), no_ack=args.no_ack, max_msg_size=args.max_msg_size,
                max_msgs=args.max_msgs, discard=DiscardPolicy.NEW if args.max_msgs > 0 else DiscardPolicy.OLD)
            await nc.close()
            print("OK")
            return
        except Exception as error:  # a cluster without a meta leader yet answers with errors or times out
            last_error = error
            await asyncio.sleep(0.5)
    print(f"could not create the stream: {last_error!r}", file=sys.stderr)
    sys.exit(1)


async def create_bucket(args) -> None:
    """A key-value bucket made by someone else than the bridge, with a TTL or a byte limit that discards old values."""
    from nats.js.api import StreamConfig
    nc = await connect(args.servers)
    js = nc.jetstream(timeout=5)
    if args.ttl:
        await js.create_key_value(bucket=args.name, ttl=args.ttl)
    else:
        await js.add_stream(StreamConfig(
            name="KV_" + args.name, subjects=[f"$KV.{args.name}.>"], max_msgs_per_subject=1, max_bytes=args.max_bytes,
            discard=DiscardPolicy.OLD, allow_rollup_hdrs=True, deny_delete=True, allow_direct=True))
    await nc.close()
    print("OK")


async def acknowledge_publishes(args) -> None:
    """Turns a stream's no_ack off (the operator's fix for a stream that never acknowledges)."""
    nc = await connect(args.servers)
    js = nc.jetstream(timeout=5)
    config = (await js.stream_info(args.name)).config
    config.no_ack = False
    await js.update_stream(config)
    await nc.close()
    print("OK")


async def update_limit(args, field: str, value: int) -> None:
    nc = await connect(args.servers)
    js = nc.jetstream(timeout=5)
    config = (await js.stream_info(args.name)).config
    setattr(config, field, value)
    await js.update_stream(config)
    await nc.close()
    print("OK")


async def set_max_msg_size(args) -> None:
    """Raises (or lowers) a stream's largest message: the operator's fix after events were refused as too large."""
    await update_limit(args, "max_msg_size", args.bytes)


async def set_max_msgs(args) -> None:
    """Changes a full stream's message limit (-1: none): the operator's fix for a stream that refuses new messages."""
    await update_limit(args, "max_msgs", args.count)


async def read_stream(args) -> None:
    nc = await connect(args.servers)
    js = nc.jetstream(timeout=10)
    info = await js.stream_info(args.name)
    messages = []
    if info.state.messages:
        for seq in range(info.state.first_seq, info.state.last_seq + 1):
            msg = await js.get_msg(args.name, seq)
            headers = msg.headers or {}
            messages.append({
                "seq": msg.seq, "subject": msg.subject, "msg_id": headers.get("Nats-Msg-Id", ""),
                "data": (msg.data or b"").decode("utf-8"),
            })
    await nc.close()
    json.dump({"messages": messages}, sys.stdout)
    sys.stdout.write("\n")


async def stream_leader(args) -> None:
    nc = await connect(args.servers)
    js = nc.jetstream(timeout=10)
    info = await js.stream_info(args.name)
    await nc.close()
    print(info.cluster.leader if info.cluster else "")


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    create = sub.add_parser("create-stream")
    create.add_argument("servers")
    create.add_argument("name")
    create.add_argument("subjects")
    create.add_argument("--replicas", type=int, default=1)
    create.add_argument("--storage", choices=["file", "memory"], default="file")
    create.add_argument("--duplicate-window", type=float, default=120.0)
    create.add_argument("--no-ack", action="store_true", help="a stream that never acknowledges a publish")
    create.add_argument("--max-msg-size", type=int, default=-1, help="the stream's largest message (-1: no limit)")
    create.add_argument(
        "--max-msgs", type=int, default=-1, help="a full stream: at most this many messages, new ones refused")
    limit = sub.add_parser("set-max-msgs")
    limit.add_argument("servers")
    limit.add_argument("name")
    limit.add_argument("count", type=int)
    size = sub.add_parser("set-max-msg-size")
    size.add_argument("servers")
    size.add_argument("name")
    size.add_argument("bytes", type=int)
    bucket = sub.add_parser("create-bucket")
    bucket.add_argument("servers")
    bucket.add_argument("name")
    bucket.add_argument("--ttl", type=float, default=0.0)
    bucket.add_argument("--max-bytes", type=int, default=-1)
    for name in ("read-stream", "stream-leader", "acknowledge-publishes"):
        command = sub.add_parser(name)
        command.add_argument("servers")
        command.add_argument("name")
    args = parser.parse_args()
    handler = {
        "create-stream": create_stream, "create-bucket": create_bucket, "acknowledge-publishes": acknowledge_publishes,
        "read-stream": read_stream, "stream-leader": stream_leader, "set-max-msg-size": set_max_msg_size,
        "set-max-msgs": set_max_msgs,
    }
    asyncio.run(handler[args.command](args))


if __name__ == "__main__":
    main()
