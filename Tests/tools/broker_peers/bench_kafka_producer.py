"""Benchmark peer: a confluent-kafka producer sending event-shaped messages and waiting for every delivery report.

    python bench_kafka_producer.py BOOTSTRAP TOPIC COUNT

Same settings as the bridge's producer (idempotent, acks=all), same message shape (key = item key, headers
id/type/collection/event, a ~450-byte JSON value). Prints {"messages_per_second": R, "failures": F}.
"""
import json
import sys
import time

from confluent_kafka import Producer


def main() -> None:
    bootstrap, topic, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    producer = Producer({
        "bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all", "linger.ms": 5,
        "queue.buffering.max.messages": 100000, "log_level": 3,
    })
    body = "lorem ipsum " * 22
    messages = []
    for index in range(count):
        key = f"item-{index % 1000}"
        event_id = f"evt_{index:08d}"
        value = (f'{{"id":"{event_id}","type":"items.update","collection":"articles","event":"update",'
                 f'"key":"{key}","seq":{index},"data":{{"id":"{key}","title":"Article {index}",'
                 f'"body":"{body}","tags":["a","b"],"rating":4.5,"draft":null}}}}')
        headers = [("id", event_id), ("type", "items.update"), ("collection", "articles"), ("event", "update")]
        messages.append((key, value, headers))
    delivered = 0
    failures = 0

    def report(error, _message):
        nonlocal delivered, failures
        if error is None:
            delivered += 1
        else:
            failures += 1

    producer.produce(topic, key="warm", value="warm", on_delivery=report)
    producer.flush(30)
    delivered = 0
    start = time.perf_counter()
    for key, value, headers in messages:
        while True:
            try:
                producer.produce(topic, key=key, value=value, headers=headers, on_delivery=report)
                break
            except BufferError:
                producer.poll(0.01)
        producer.poll(0)
    producer.flush(120)
    elapsed = time.perf_counter() - start
    print(json.dumps({"messages_per_second": delivered / elapsed, "failures": failures}))


if __name__ == "__main__":
    main()
