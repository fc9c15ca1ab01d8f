"""Benchmark peer: a paho-mqtt publisher with QoS 1, counting PUBACKs.

    python bench_mqtt_publisher.py HOST PORT TOPIC COUNT [--window N] [--page N] [--prefix P]

MQTT 5 with the user properties the bridge sends (id, type, collection, key, event), the same ~450-byte JSON
payload, at most WINDOW publishes unacknowledged (paho's max_inflight_messages). With --page N it does what the
bridge does in activity mode: publishes N messages, waits for every PUBACK of them, then the next N; without (or 0)
it waits for every PUBACK at the end. Prints {"messages_per_second": R, "failures": F, "cpu_seconds": C} (C: its own
CPU time while timed).
"""
import argparse
import json
import threading
import time

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from bench_events import bench_event


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("topic")
    parser.add_argument("count", type=int)
    parser.add_argument("--window", type=int, default=1000)
    parser.add_argument("--page", type=int, default=0)
    parser.add_argument("--prefix", default="py")
    args = parser.parse_args()
    messages = []
    for index in range(args.count):
        event_id, key, line = bench_event(args.prefix, index)
        data = line.encode()
        properties = Properties(PacketTypes.PUBLISH)
        properties.UserProperty = [("id", event_id), ("type", "directus.items.update"), ("collection", "articles"),
                                   ("key", key), ("event", "update")]
        messages.append((data, properties))

    acknowledged = [0]
    failures = [0]
    condition = threading.Condition()

    def on_publish(client, userdata, mid, reason_code, properties):
        with condition:
            acknowledged[0] += 1
            if reason_code.is_failure:
                failures[0] += 1
            condition.notify_all()

    connected = threading.Event()
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"bench-{args.prefix}", protocol=mqtt.MQTTv5)
    client.on_publish = on_publish
    client.on_connect = lambda *_: connected.set()
    client.max_inflight_messages_set(args.window)
    client.max_queued_messages_set(0)
    client.connect(args.host, args.port)
    client.loop_start()
    connected.wait(10)

    def publish_all(items, expected_total: int) -> None:
        for data, properties in items:
            client.publish(args.topic, data, qos=1, properties=properties)
        with condition:
            while acknowledged[0] < expected_total:
                condition.wait(1)

    # Warm-up.
    publish_all(messages[:500], 500)
    with condition:
        acknowledged[0] = 0
    page = args.page if args.page > 0 else len(messages)
    start = time.perf_counter()
    cpu_start = time.process_time()
    for first in range(0, len(messages), page):
        publish_all(messages[first:first + page], min(first + page, len(messages)))
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    client.disconnect()
    client.loop_stop()
    print(json.dumps({"messages_per_second": args.count / elapsed, "failures": failures[0], "cpu_seconds": cpu}))


if __name__ == "__main__":
    main()
