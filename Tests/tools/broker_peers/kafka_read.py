"""Reads a whole Kafka topic back with a real client (confluent-kafka) and prints it as JSON.

    python kafka_read.py BOOTSTRAP TOPIC EXPECTED [--timeout SECONDS] [--idle SECONDS]

Assigns every partition of TOPIC from the beginning (no consumer group), reads until EXPECTED messages arrived and
then one more second (so duplicates would show), or until the timeout; with --idle, also once no message arrived
for that long (what the topic holds now, for a caller that polls). Prints one JSON object on stdout:
{"messages": [{"partition", "offset", "key", "headers": [[name, value], ...], "value"}, ...]} in the order read,
which is offset order within each partition. Exit status 0 even when fewer arrived: the test compares.
"""
import argparse
import json
import sys
import time

from confluent_kafka import Consumer, TopicPartition, OFFSET_BEGINNING


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("bootstrap")
    parser.add_argument("topic")
    parser.add_argument("expected", type=int)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--idle", type=float, default=0.0)
    args = parser.parse_args()

    consumer = Consumer({
        "bootstrap.servers": args.bootstrap,
        "group.id": "bridge-test-reader",
        "enable.auto.commit": False,
        "enable.partition.eof": False,
        "log_level": 3,
    })
    deadline = time.monotonic() + args.timeout
    metadata = None
    while time.monotonic() < deadline:
        metadata = consumer.list_topics(args.topic, timeout=5)
        topic = metadata.topics.get(args.topic)
        if topic is not None and topic.error is None and topic.partitions:
            break
        time.sleep(0.2)
    partitions = sorted(metadata.topics[args.topic].partitions.keys())
    consumer.assign([TopicPartition(args.topic, p, OFFSET_BEGINNING) for p in partitions])

    messages = []
    settle_until = None
    last_message = time.monotonic()
    while time.monotonic() < deadline:
        if settle_until is not None and time.monotonic() >= settle_until:
            break
        if args.idle and time.monotonic() - last_message >= args.idle:
            break
        for message in consumer.consume(num_messages=1000, timeout=0.2):
            last_message = time.monotonic()
            if message.error():
                print(f"consumer error: {message.error()}", file=sys.stderr)
                continue
            headers = [[name, (value or b"").decode("utf-8")] for name, value in (message.headers() or [])]
            messages.append({
                "partition": message.partition(),
                "offset": message.offset(),
                "key": (message.key() or b"").decode("utf-8"),
                "headers": headers,
                "value": (message.value() or b"").decode("utf-8"),
            })
        if settle_until is None and len(messages) >= args.expected:
            settle_until = time.monotonic() + 1.0
    consumer.close()
    json.dump({"messages": messages}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
