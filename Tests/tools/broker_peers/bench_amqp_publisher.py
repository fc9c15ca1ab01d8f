"""Benchmark peer: a pika publisher with publisher confirms, counting basic.acks.

    python bench_amqp_publisher.py URL EXCHANGE ROUTING_KEY COUNT [--window N] [--page N] [--prefix P]

What the bridge's AMQP sink sends, with nothing else: persistent messages (delivery_mode 2) with message_id = the event
id, content_type application/json, the headers type, collection, key and event, mandatory, the same ~450-byte JSON
payload. pika's asynchronous SelectConnection (its BlockingConnection waits for each confirm), at most WINDOW
published and not confirmed. With --page N it does what the bridge does in activity mode: publishes N messages, waits
for every confirm of them, then the next N; without (or 0) it keeps WINDOW in flight until the end. After a warm-up of
500 messages. Prints {"messages_per_second": R, "failures": F, "cpu_seconds": C} (F: nacks and returns; C: its own CPU
time while timed).
"""
import argparse
import json
import time

import pika

from bench_events import bench_event


class Publisher:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.properties = []
        self.bodies = []
        for index in range(500 + args.count):
            prefix, number = ("warm_" + args.prefix, index) if index < 500 else (args.prefix, index - 500)
            event_id, key, line = bench_event(prefix, number)
            self.bodies.append(line.encode())
            self.properties.append(pika.BasicProperties(
                content_type="application/json", delivery_mode=2, message_id=event_id,
                headers={"type": "directus.items.update", "collection": "articles", "key": key, "event": "update"}))
        self.sent = 0
        self.confirmed = set()
        self.confirmed_below = 1  # every delivery tag below it is confirmed
        self.failures = 0
        self.barrier = 500  # the warm-up first
        self.start = self.cpu_start = 0.0
        self.elapsed = self.cpu = 0.0
        self.channel = None
        self.connection = pika.SelectConnection(pika.URLParameters(args.url), on_open_callback=self.opened)

    def opened(self, connection) -> None:
        connection.channel(on_open_callback=self.channel_opened)

    def channel_opened(self, channel) -> None:
        self.channel = channel
        channel.add_on_return_callback(self.returned)
        channel.confirm_delivery(self.answered, callback=lambda _: self.publish())

    def returned(self, channel, method, properties, body) -> None:
        self.failures += 1

    def publish(self) -> None:
        total = len(self.bodies)
        while self.sent < min(self.barrier, total) and self.sent - self.done() < self.args.window:
            self.channel.basic_publish(self.args.exchange, self.args.routing_key, self.bodies[self.sent],
                                       self.properties[self.sent], mandatory=True)
            self.sent += 1

    def done(self) -> int:
        """Messages confirmed (or nacked) so far."""
        return self.confirmed_below - 1 + len(self.confirmed)

    def answered(self, frame) -> None:
        method = frame.method
        if isinstance(method, pika.spec.Basic.Nack):
            self.failures += 1
        tags = range(self.confirmed_below, method.delivery_tag + 1) if method.multiple else [method.delivery_tag]
        self.confirmed.update(tags)
        while self.confirmed_below in self.confirmed:
            self.confirmed.discard(self.confirmed_below)
            self.confirmed_below += 1
        if self.done() < self.barrier:
            self.publish()
            return
        if self.barrier == 500 and self.start == 0.0:  # the warm-up is confirmed: the timed part starts
            self.start, self.cpu_start = time.perf_counter(), time.process_time()
        if self.done() == len(self.bodies):
            self.elapsed = time.perf_counter() - self.start
            self.cpu = time.process_time() - self.cpu_start
            self.connection.close()
            return
        page = self.args.page if self.args.page > 0 else len(self.bodies)
        self.barrier = min(self.barrier + page, len(self.bodies))
        self.publish()

    def run(self) -> None:
        self.connection.add_on_close_callback(lambda *_: self.connection.ioloop.stop())
        self.connection.ioloop.start()
        if self.done() != len(self.bodies):
            raise SystemExit(f"bench_amqp_publisher: the connection closed after {self.done()} confirms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("exchange")
    parser.add_argument("routing_key")
    parser.add_argument("count", type=int)
    parser.add_argument("--window", type=int, default=1000)
    parser.add_argument("--page", type=int, default=0)
    parser.add_argument("--prefix", default="py")
    args = parser.parse_args()
    publisher = Publisher(args)
    publisher.run()
    print(json.dumps({"messages_per_second": args.count / publisher.elapsed, "failures": publisher.failures,
                      "cpu_seconds": publisher.cpu}))


if __name__ == "__main__":
    main()
