"""Benchmark peer: a confluent-kafka producer sending event-shaped messages and waiting for every delivery report.

    python bench_kafka_producer.py BOOTSTRAP TOPIC COUNT [--page N] [--property NAME=VALUE ...]

Same settings as the bridge's Kafka sink (idempotent, acks=all, librdkafka's defaults otherwise), same message
shape (key = item key, headers id/type/collection/event, a ~450-byte JSON value). With --page N it does what the
bridge does in activity mode: produces N messages, waits for all their delivery reports (flush), then the next N;
without (or 0) it keeps producing and waits for every report at the end. --property sets a librdkafka property
(the benchmark gives the bridge's producer the same ones). Prints
{"messages_per_second": R, "failures": F, "cpu_seconds": C} (C: its own CPU time while timed).
"""
import argparse
import json
import time

from confluent_kafka import Producer

from bench_events import bench_event


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("bootstrap")
    parser.add_argument("topic")
    parser.add_argument("count", type=int)
    parser.add_argument("--page", type=int, default=0)
    parser.add_argument("--property", action="append", default=[])
    args = parser.parse_args()
    settings = {
        "bootstrap.servers": args.bootstrap, "enable.idempotence": True, "acks": "all",
        "queue.buffering.max.messages": 100000, "log_level": 3,
    }
    for assignment in args.property:
        name, _, value = assignment.partition("=")
        settings[name] = value
    producer = Producer(settings)
    messages = []
    for index in range(args.count):
        event_id, key, value = bench_event("evt", index)
        headers = [("id", event_id), ("type", "directus.items.update"), ("collection", "articles"),
                   ("event", "update")]
        messages.append((key, value, headers))
    delivered = 0
    failures = 0

    def report(error, _message):
        nonlocal delivered, failures
        if error is None:
            delivered += 1
        else:
            failures += 1

    # Warm-up: connected, the topic's partitions and leaders known.
    for key, value, headers in messages[:500]:
        producer.produce(args.topic, key=key, value=value, headers=headers, on_delivery=report)
    producer.flush(30)
    delivered = 0
    page = args.page if args.page > 0 else len(messages)
    start = time.perf_counter()
    cpu_start = time.process_time()
    for first in range(0, len(messages), page):
        for key, value, headers in messages[first:first + page]:
            while True:
                try:
                    producer.produce(args.topic, key=key, value=value, headers=headers, on_delivery=report)
                    break
                except BufferError:
                    producer.poll(0.01)
            producer.poll(0)
        producer.flush(120)
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    if delivered != len(messages):
        failures += len(messages) - delivered
    print(json.dumps({"messages_per_second": delivered / elapsed, "failures": failures, "cpu_seconds": cpu}))


if __name__ == "__main__":
    main()
