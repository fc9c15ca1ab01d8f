"""Reads MQTT messages with paho-mqtt (MQTT 5), for the MQTT client and sink tests.

    python mqtt_read.py URL TOPIC_FILTER follow [--ca CA_FILE] [--client-id ID]
    python mqtt_read.py URL TOPIC_FILTER snapshot [--ca CA_FILE] [--settle SECONDS]

Each message is printed as one JSON line: {"topic", "payload" (UTF-8 text), "retain", "qos", "properties": {name:
value} of its user properties}.

follow: a persistent session (clean_start false, session expiry one hour; the client id is fixed) subscribed with
QoS 1; prints `READY 0` once the subscription is granted, then every message as it comes, until killed. It
reconnects by itself when the broker restarts.
snapshot: a clean session that subscribes, prints what arrives (retained messages first) until nothing came for
SETTLE seconds, then exits.
"""
import argparse
import json
import ssl
import sys
import threading
import time
import urllib.parse

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("topic")
    parser.add_argument("mode", choices=["follow", "snapshot"])
    parser.add_argument("--ca")
    parser.add_argument("--client-id", default="bridge-test-reader")
    parser.add_argument("--settle", type=float, default=1.5)
    args = parser.parse_args()
    url = urllib.parse.urlparse(args.url)
    follow = args.mode == "follow"
    client = mqtt.Client(
        mqtt.CallbackAPIVersion.VERSION2,
        client_id=args.client_id if follow else "",
        protocol=mqtt.MQTTv5,
    )
    if url.username or url.password:
        client.username_pw_set(urllib.parse.unquote(url.username or ""), urllib.parse.unquote(url.password or ""))
    if url.scheme == "mqtts":
        client.tls_set(ca_certs=args.ca, cert_reqs=ssl.CERT_REQUIRED)
    last = [time.monotonic()]
    lock = threading.Lock()

    def on_connect(client, userdata, flags, reason_code, properties):
        client.subscribe(args.topic, qos=1)

    def on_subscribe(client, userdata, mid, reason_codes, properties):
        if follow:
            print("READY 0", flush=True)

    def on_message(client, userdata, message):
        props = {}
        for name, value in getattr(message.properties, "UserProperty", None) or []:
            props[name] = value
        line = json.dumps(
            {
                "topic": message.topic,
                "payload": message.payload.decode("utf-8", "replace"),
                "retain": bool(message.retain),
                "qos": message.qos,
                "properties": props,
            }
        )
        with lock:
            last[0] = time.monotonic()
            print(line, flush=True)

    client.on_connect = on_connect
    client.on_subscribe = on_subscribe
    client.on_message = on_message
    properties = Properties(PacketTypes.CONNECT)
    properties.SessionExpiryInterval = 3600 if follow else 0
    client.reconnect_delay_set(min_delay=1, max_delay=2)
    client.connect(url.hostname, url.port or (8883 if url.scheme == "mqtts" else 1883), clean_start=not follow,
                   properties=properties)
    if follow:
        client.loop_forever(retry_first_connection=True)
        return
    client.loop_start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.1)
        with lock:
            if time.monotonic() - last[0] > args.settle:
                break
    client.disconnect()
    client.loop_stop()
    sys.stdout.flush()


if __name__ == "__main__":
    main()
