"""Parses CloudEvents with the `cloudevents` PyPI SDK, the way a consumer of the bridge would.

Usage: cloudevents_parse.py INPUT.json
INPUT holds {"structured": [text, ...], "http": [{"headers": {...}, "body": text}, ...], "kafka": [{"headers":
[[name, value], ...], "key": text, "value": text}, ...]}: event texts in JSON format (NDJSON lines, JetStream
message payloads), HTTP requests (webhook deliveries) and Kafka messages. Each is parsed by the SDK (HTTP requests
by both the current binding and the v1 API, which must agree; Kafka messages by the current binding, which tells
binary from structured mode by the headers) and printed as one JSON line of its attributes and data (and a Kafka
message's `partitionkey`, the message key). Anything the SDK refuses ends the run with exit status 1 and the SDK's
error.
"""

import json
import sys

from cloudevents.core.bindings import http as http_binding
from cloudevents.core.bindings import kafka as kafka_binding
from cloudevents.core.formats.json import JSONFormat
from cloudevents.core.v1.event import CloudEvent
from cloudevents.v1.http import from_http as legacy_from_http

ATTRIBUTES = ["specversion", "id", "source", "type", "subject", "datacontenttype"]


def describe(event, origin):
    attributes = event.get_attributes()
    out = {name: attributes.get(name) for name in ATTRIBUTES}
    out["time"] = event.get_time().isoformat(timespec="milliseconds")
    out["data"] = event.get_data()
    out["origin_of_parse"] = origin
    return out


def main():
    with open(sys.argv[1], encoding="utf-8") as handle:
        given = json.load(handle)
    for text in given.get("structured", []):
        event = JSONFormat().read(CloudEvent, text.encode("utf-8"))
        print(json.dumps(describe(event, "structured")))
    for request in given.get("http", []):
        body = request["body"].encode("utf-8")
        headers = request["headers"]
        event = http_binding.from_http(http_binding.HTTPMessage(headers=headers, body=body), JSONFormat())
        legacy = legacy_from_http(headers, body)
        described = describe(event, "http")
        for name in ATTRIBUTES:
            if legacy[name] != described[name]:
                raise SystemExit(f"v1 API disagrees on {name}: {legacy[name]!r} != {described[name]!r}")
        if legacy.data != described["data"]:
            raise SystemExit("v1 API disagrees on data")
        print(json.dumps(described))
    for message in given.get("kafka", []):
        headers = {name: value.encode("utf-8") for name, value in message["headers"]}
        kafka_message = kafka_binding.KafkaMessage(
            headers=headers, key=message["key"].encode("utf-8"), value=message["value"].encode("utf-8"))
        event = kafka_binding.from_kafka(kafka_message, JSONFormat())
        described = describe(event, "kafka")
        described["partitionkey"] = event.get_attributes().get("partitionkey")
        print(json.dumps(described))


if __name__ == "__main__":
    try:
        main()
    except SystemExit:
        raise
    except Exception as error:  # the SDK's refusal is the test's finding
        print(f"{type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)
