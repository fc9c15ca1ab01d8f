"""RabbitMQ helper for the AMQP client and sink tests, with pika.

    python amqp_admin.py setup URL EXCHANGE QUEUE BINDING_KEY [--ca CA_FILE] [--max-length N]
    python amqp_admin.py read URL QUEUE [--ca CA_FILE]
    python amqp_admin.py purge URL QUEUE [--ca CA_FILE]

setup: declares a durable topic exchange, a durable queue, and binds them with BINDING_KEY; with --max-length the
queue holds at most N messages and the broker nacks publishes beyond them (x-overflow reject-publish).
read: takes every message of QUEUE (basic.get until it is empty, acknowledging each) and prints one JSON object per
line: {"message_id", "content_type", "delivery_mode", "routing_key", "headers": {...}, "body" (UTF-8)}.
purge: drops every message of QUEUE and prints how many (the benchmark empties its queue between runs).
"""
import argparse
import json
import ssl

import pika


def connect(url: str, ca: str | None) -> pika.BlockingConnection:
    parameters = pika.URLParameters(url)
    if ca:
        context = ssl.create_default_context(cafile=ca)
        parameters.ssl_options = pika.SSLOptions(context, server_hostname=parameters.host)
    return pika.BlockingConnection(parameters)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["setup", "read", "purge"])
    parser.add_argument("url")
    parser.add_argument("names", nargs="+")
    parser.add_argument("--ca")
    parser.add_argument("--max-length", type=int)
    args = parser.parse_args()
    connection = connect(args.url, args.ca)
    channel = connection.channel()
    if args.command == "setup":
        exchange, queue, key = args.names
        channel.exchange_declare(exchange, exchange_type="topic", durable=True)
        limits = {"x-max-length": args.max_length, "x-overflow": "reject-publish"} if args.max_length else None
        channel.queue_declare(queue, durable=True, arguments=limits)
        channel.queue_bind(queue, exchange, routing_key=key)
    elif args.command == "purge":
        (queue,) = args.names
        print(channel.queue_purge(queue).method.message_count)
    else:
        (queue,) = args.names
        while True:
            method, properties, body = channel.basic_get(queue, auto_ack=True)
            if method is None:
                break
            print(
                json.dumps(
                    {
                        "message_id": properties.message_id,
                        "content_type": properties.content_type,
                        "delivery_mode": properties.delivery_mode,
                        "routing_key": method.routing_key,
                        "headers": {k: (v.decode() if isinstance(v, bytes) else v) for k, v in (properties.headers or {}).items()},
                        "body": body.decode("utf-8", "replace"),
                    }
                ),
                flush=True,
            )
    connection.close()


if __name__ == "__main__":
    main()
