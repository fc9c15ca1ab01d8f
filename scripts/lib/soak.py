"""The soak run behind scripts/soak.sh (docs/RELIABILITY.md "Soak").

    python scripts/lib/soak.py --minutes M --bridge PATH --work DIR [--rate CHANGES_PER_SECOND]

Runs the bridge binary at PATH against the bundled Directus emulator for M minutes while the emulator's change
generator writes to `articles` and `comments` at a steady rate, and breaks things on a fixed timetable:

- access tokens live 60 s (the bridge logs in with e-mail and password and refreshes them; a socket whose token
  ran out gets TOKEN_EXPIRED);
- every 3 minutes every socket is dropped without a close frame (TCP RST and FIN by turns);
- every 2 minutes the webhook receiver goes down for 15 s (connections refused), and a minute later answers five
  requests with 503 and `Retry-After: 1`;
  (runs shorter than 10 minutes do both faster: drops every 30 s, receiver faults every 40 s);
- halfway through, the NDJSON file is moved away and the bridge gets SIGHUP (logrotate);
- snapshots and resyncs under backpressure: `comments` (seeded with SNAPSHOT_SEED_ITEMS items) has `snapshot: true`
  and the bridge starts while the webhook receiver is down; a third of the way through, the receiver goes down and
  `directus-bridge resync articles` is run beside the running bridge;
- every 4 minutes the NATS server behind the JetStream sink goes away for 10 s (SIGKILL and SIGTERM by turns) and
  comes back on the same port with the same store (short runs: every 45 s).
- the Kafka sink produces to librdkafka's mock cluster (3 brokers in a helper process, each collection's topic
  with 3 partitions replicated on all of them): every 4 minutes one broker goes down for 10 s (brokers by turns),
  every 3 minutes every partition's leader moves to the next broker, and every 2 minutes the next five produce
  requests fail with retriable errors (short runs: every 50, 50 and 40 s). The cluster keeps its messages in its
  process's memory, so it is never restarted.
- every 4 minutes the redis-server behind the Redis sink goes away for 10 s (SIGKILL and SIGTERM by turns) and comes
  back on the same port with its append-only file (short runs: every 45 s).
- every 4 minutes the mosquitto behind the MQTT sink goes away for 10 s and comes back on the same port with its
  persistence file (short runs: every 45 s). Always SIGTERM: mosquitto writes what it holds (the reader's queued
  messages) to disk only at its autosave and at shutdown, so a SIGKILL loses messages it had acknowledged, which is
  the broker's loss, not the sink's. A paho-mqtt reader with a persistent session (QoS 1) takes every message.
- every 4 minutes the rabbitmq-server behind the AMQP sink goes away for 10 s (SIGKILL and SIGTERM by turns) and
  comes back on the same port with its data (short runs: every 60 s; it takes a while to start); its messages are
  persistent on a durable queue bound to everything, so each confirmed one survives a kill.

Every 10 s it samples the bridge's resident memory, open descriptors (each one by kind: TCP sockets by peer and
state, files by path) and threads from /proc. At the end it stops the generator, waits until every sink has caught
up (or 3 minutes), stops the bridge with SIGTERM and reconciles every change Directus recorded (its activity log)
against what each sink got — a change at or below a snapshot's watermark of its collection may be covered by that
snapshot instead, and each snapshot must hold every item that existed at its watermark — (the NDJSON file, the webhook receiver's requests, the JetStream stream, the Kafka
topics, the Redis streams, the MQTT reader's messages and the AMQP queue read back): lost, duplicate and unexpected
event ids per sink, and for Kafka whether each item's events kept
to one partition in activity order. The report goes to stdout and to DIR/report.json (with the broker sinks'
metrics per sink); the exit status is 0 only when nothing was lost, no Kafka event arrived twice or out of its
item's order (the producer is idempotent and no fatal error is injected), no Redis entry is there twice (the dedup
window), every NDJSON line parsed (MQTT QoS 1 and AMQP confirms are at least once: a message whose PUBACK or confirm
the broker's outage swallowed is sent again, so their repeats are counted, not failed), the bridge
exited 0, memory grew less than 10 % after the warm-up, descriptors other than webhook connections and threads
stayed flat, and webhook connections stayed within the sink's max_in_flight.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import shutil
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "Tests" / "tools"
COLLECTIONS = ("articles", "comments")
SAMPLE_SECONDS = 10
TOKEN_TTL_MS = 60_000
# The fault timetable in seconds (period, offset within it); runs shorter than 10 minutes use the short one so that
# every fault happens at least once.
LONG_TIMETABLE = {"drop": (180, 90), "down": (120, 45), "503": (120, 105), "nats": (240, 60),
                  "kafka_down": (240, 180), "kafka_leader": (180, 130), "kafka_errors": (120, 75),
                  "redis": (240, 150), "mqtt": (240, 200), "amqp": (240, 110)}
SHORT_TIMETABLE = {"drop": (30, 15), "down": (40, 10), "503": (40, 30), "nats": (45, 20),
                   "kafka_down": (50, 30), "kafka_leader": (50, 5), "kafka_errors": (40, 25),
                   "redis": (45, 35), "mqtt": (45, 5), "amqp": (60, 40)}
FLAP_DOWN_MS = 15_000
NATS_DOWN_SECONDS = 10
REDIS_DOWN_SECONDS = 10
MQTT_DOWN_SECONDS = 10
AMQP_DOWN_SECONDS = 10
# The AMQP sink's exchange (its default) and the durable queue bound to it for everything, read back at the end.
AMQP_EXCHANGE = "directus"
AMQP_QUEUE = "soak"
STREAM = "DIRECTUS"
# The Kafka sink's cluster: librdkafka's mock, three brokers, each collection's topic (the sink's default topic,
# `directus.{collection}`) with three partitions replicated on all three.
KAFKA_BROKERS = 3
KAFKA_PARTITIONS = 3
KAFKA_DOWN_SECONDS = 10
# A burst of retriable produce errors: NOT_LEADER_FOR_PARTITION, REQUEST_TIMED_OUT, NOT_ENOUGH_REPLICAS (twice),
# NOT_LEADER_FOR_PARTITION; librdkafka retries each request.
KAFKA_RETRIABLE_ERRORS = (6, 7, 19, 19, 6)
CATCH_UP_SECONDS = 180
# Items of `comments` before the bridge starts: its snapshot spans several pages (of 500).
SNAPSHOT_SEED_ITEMS = 1500
# Slack for "flat": descriptors and threads may differ by this much between the first and the last stretch of the
# run (webhook connections open and close with the flaps; a reconnect may be in progress at a sample).
FD_SLACK = 4
THREAD_SLACK = 2
# The webhook sink's concurrent requests (its default). After a receiver outage the backlog goes out on up to this
# many connections at once, and libcurl keeps them open for reuse (its connection cache holds as many) until the
# receiver closes them: webhook connections are bounded by this, not flat, and are checked apart from the rest.
WEBHOOK_MAX_IN_FLIGHT = 32
WEBHOOK_MAX_OUTBOX = 200


def log(text: str) -> None:
    print(f"soak {time.strftime('%H:%M:%S')}: {text}", file=sys.stderr, flush=True)


def start_peer(script: str, arguments: list[str], log_file: Path) -> tuple[subprocess.Popen, int]:
    """Starts a Tests/tools server through run_peer.py (it exits with us) and returns it with its READY port."""
    process = subprocess.Popen(
        [sys.executable, "-u", str(TOOLS / "run_peer.py"), str(TOOLS / script), *arguments],
        stdout=subprocess.PIPE, stderr=log_file.open("wb"), text=True)
    line = process.stdout.readline().strip()
    if not line.startswith("READY "):
        raise SystemExit(f"soak: {script} did not start: {line!r} (see {log_file})")
    return process, int(line.split()[1])


def call(url: str, body: object | None = None, token: str | None = None, timeout: float = 30) -> object:
    """A JSON request: POST with `body`, GET without."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="GET" if body is None else "POST")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        text = answer.read()
    return json.loads(text) if text else {}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class RestartableServer:
    """A server on one port and one store directory, started again on the same ones after a kill. Runs under
    Tests/tools/broker_peers/nats_server.py (a watchdog for any server binary), which takes it down if this script
    dies."""

    # How long it may take to listen after a start.
    start_seconds = 30
    # Whether an outage may be a SIGKILL (else always SIGTERM).
    may_kill = True

    def __init__(self, name: str, command: list[str], port: int, log_file: Path):
        self.name, self.command, self.port, self.log_file = name, command, port, log_file
        self.wrapper: subprocess.Popen | None = None
        self.pid = 0
        self.back_at: float | None = None  # while an outage lasts: when it ends

    def start(self) -> None:
        self.wrapper = subprocess.Popen(
            [sys.executable, "-u", str(TOOLS / "broker_peers" / "nats_server.py"), *self.command],
            stdout=subprocess.PIPE, stderr=self.log_file.open("ab"), text=True)
        self.pid = int(self.wrapper.stdout.readline().split()[1])
        deadline = time.monotonic() + self.start_seconds
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise SystemExit(f"soak: {self.name} did not listen on {self.port} (see {self.log_file})")

    def take_down(self, number: int, now: float, seconds: float) -> None:
        """Outage `number` (from 0): SIGKILL and SIGTERM by turns, over `seconds` after `now` (`come_back`)."""
        kill = number % 2 == 0 and self.may_kill
        self.stop(signal.SIGKILL if kill else signal.SIGTERM)
        self.back_at = now + seconds
        log(f"{self.name} {'killed' if kill else 'stopped'} for {seconds} s")

    def come_back(self, now: float | None) -> None:
        """Starts the server again once its outage is over (at once with `now` None)."""
        if self.back_at is not None and (now is None or now >= self.back_at):
            self.start()
            self.back_at = None
            log(f"{self.name} back")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.wrapper is None:
            return
        try:
            os.kill(self.pid, sig)
        except ProcessLookupError:
            pass
        try:
            self.wrapper.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.kill(self.pid, signal.SIGKILL)
            self.wrapper.wait()
        self.wrapper = None


class NATSServer(RestartableServer):
    """nats-server with JetStream, its store in `store`."""

    def __init__(self, port: int, store: Path, log_file: Path):
        binary = shutil.which("nats-server") or "/usr/sbin/nats-server"
        super().__init__("nats-server", [binary, "-a", "127.0.0.1", "-p", str(port), "-js", "-sd", str(store)],
                         port, log_file)

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"


class RedisServer(RestartableServer):
    """Debian's redis-server with its data in `directory`: an append-only file synced on every write, so a server
    killed and started again still holds every entry it answered (as the tests' server does)."""

    def __init__(self, port: int, directory: Path, log_file: Path):
        directory.mkdir(parents=True, exist_ok=True)
        config = directory / "redis.conf"
        config.write_text(f"bind 127.0.0.1\nport {port}\ndir {directory}\nlogfile {directory / 'server.log'}\nsave \"\"\nappendonly yes\n"
                          "appendfsync always\nprotected-mode no\n")
        super().__init__("redis-server", [shutil.which("redis-server") or "/usr/bin/redis-server", str(config)],
                         port, log_file)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"


class MosquittoServer(RestartableServer):
    """Debian's mosquitto with persistence in `directory` and no limit on a session's queued messages (its default,
    1,000, drops what the reader has not taken during an outage). Stopped with SIGTERM only (`may_kill`): it writes
    its sessions and queued messages at shutdown, not when it acknowledges them."""

    may_kill = False

    def __init__(self, port: int, directory: Path, log_file: Path):
        directory.mkdir(parents=True, exist_ok=True)
        config = directory / "mosquitto.conf"
        # `user root`: started as root, mosquitto would switch to its own user, which cannot write `directory`.
        config.write_text(f"user root\nlistener {port} 127.0.0.1\nallow_anonymous true\npersistence true\n"
                          f"persistence_location {directory}/\nmax_queued_messages 0\nlog_dest stderr\n")
        super().__init__("mosquitto", [shutil.which("mosquitto") or "/usr/sbin/mosquitto", "-c", str(config)],
                         port, log_file)

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"


class RabbitMQServer(RestartableServer):
    """Debian's rabbitmq-server as the tests start it: a node of its own name with its Mnesia directory, config and
    pid file in `directory`, no plugins. rabbitmq-server is a script that runs the Erlang VM as its child: a SIGKILL
    of the script is a crash of the node (the watchdog kills the rest of its process group, the VM); a SIGTERM makes
    the script stop the node gracefully."""

    start_seconds = 240

    def __init__(self, port: int, directory: Path, log_file: Path):
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "rabbitmq.conf").write_text(f"listeners.tcp.default = 127.0.0.1:{port}\n")
        (directory / "enabled_plugins").write_text("[].")
        self.pid_file = directory / "node.pid"
        environment = {
            "HOME": directory, "RABBITMQ_NODENAME": f"bridge-soak-{port}@localhost",
            "RABBITMQ_DIST_PORT": free_port(), "RABBITMQ_MNESIA_BASE": directory / "mnesia",
            "RABBITMQ_LOG_BASE": directory / "log", "RABBITMQ_CONFIG_FILE": directory / "rabbitmq.conf",
            "RABBITMQ_ENABLED_PLUGINS_FILE": directory / "enabled_plugins", "RABBITMQ_PID_FILE": self.pid_file,
        }
        super().__init__("rabbitmq-server", ["env", *(f"{name}={value}" for name, value in environment.items()),
                                             "/usr/lib/rabbitmq/bin/rabbitmq-server"], port, log_file)

    @property
    def vm_pid(self) -> int:
        """The Erlang VM's pid from the node's pid file, 0 when there is none (the one reader of that file)."""
        try:
            return int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return 0

    def pause(self) -> None:
        """Freezes the node (SIGSTOP of the VM): connections stay open, nothing is read, confirmed or sent."""
        self._signal_vm(signal.SIGSTOP)

    def resume(self) -> None:
        """Thaws a node `pause()` froze; harmless on one that runs or is gone."""
        self._signal_vm(signal.SIGCONT)

    def _signal_vm(self, sig: int) -> None:
        vm = self.vm_pid
        if vm:
            try:
                os.kill(vm, sig)
            except ProcessLookupError:
                pass

    def stop(self, sig: int = signal.SIGTERM) -> None:
        vm = self.vm_pid
        super().stop(sig)
        # The watchdog kills what is left of the script's process group (the VM) once the script is gone; the VM must
        # be gone too before a start takes its port again.
        deadline = time.monotonic() + 60
        while vm and Path(f"/proc/{vm}").exists() and time.monotonic() < deadline:
            time.sleep(0.2)

    @property
    def url(self) -> str:
        return f"amqp://127.0.0.1:{self.port}"


def broker_tool(script: str, *arguments: str, timeout: float = 300) -> str:
    """A helper of Tests/tools/broker_peers (`nats_admin.py`, `amqp_admin.py`), as the tests run it: its stdout; its
    failure ends the run."""
    result = subprocess.run([sys.executable, str(TOOLS / "broker_peers" / script), *arguments],
                            capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise SystemExit(f"soak: {script} {arguments[0]} failed: {result.stderr.strip()[-2000:]}")
    return result.stdout


def amqp_admin(*arguments: str) -> str:
    """Tests/tools/broker_peers/amqp_admin.py (pika)."""
    return broker_tool("amqp_admin.py", *arguments, timeout=600)


def amqp_take(amqp: RabbitMQServer) -> list[str]:
    """The `message_id` (the event id) of every message the queue holds now, taken out of it."""
    return [json.loads(line)["message_id"] for line in amqp_admin("read", amqp.url, AMQP_QUEUE).splitlines()
            if line.startswith("{")]


class MQTTReader:
    """Tests/tools/broker_peers/mqtt_read.py following `directus/#` with a persistent session (QoS 1; it reconnects
    by itself after the broker's outages), its messages as JSON lines in `output`."""

    def __init__(self, mqtt: MosquittoServer, output: Path, log_file: Path):
        self.output = output
        self.process = subprocess.Popen(
            [sys.executable, "-u", str(TOOLS / "broker_peers" / "mqtt_read.py"), mqtt.url, "directus/#", "follow",
             "--client-id", "soak-reader"], stdout=output.open("wb"), stderr=log_file.open("wb"))
        deadline = time.monotonic() + 60
        while "READY 0" not in output.read_text(errors="replace"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"soak: the MQTT reader did not subscribe (see {log_file})")
            time.sleep(0.2)

    def ids(self) -> list[str]:
        """The `id` user property (the event id) of every message received so far."""
        ids = []
        for line in self.output.read_text(errors="replace").splitlines():
            if line.startswith("{"):
                try:
                    ids.append(json.loads(line)["properties"].get("id", ""))
                except (ValueError, KeyError):
                    pass  # the last line, half written
        return ids


def nats_admin(*arguments: str) -> str:
    """Tests/tools/broker_peers/nats_admin.py (nats-py)."""
    return broker_tool("nats_admin.py", *arguments)


def stream_ids(nats: NATSServer) -> list[str]:
    """The `Nats-Msg-Id` (the event id) of every message in the stream, in stream order."""
    return [m["msg_id"] for m in json.loads(nats_admin("read-stream", nats.url, STREAM))["messages"]]


class KafkaCluster:
    """librdkafka's mock cluster in its helper process (Tests/tools/broker_peers/kafka_mock.py), driven one command
    at a time over its stdin. Its messages live in that process's memory: faults take single brokers down and move
    leaders, the cluster itself is never restarted. The helper exits when this script does."""

    def __init__(self, brokers: int, log_file: Path):
        self.process = subprocess.Popen(
            [sys.executable, "-u", str(TOOLS / "broker_peers" / "kafka_mock.py"), str(brokers)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log_file.open("wb"), text=True)
        line = self.process.stdout.readline().strip()
        if not line.startswith("BOOTSTRAP "):
            raise SystemExit(f"soak: the Kafka mock cluster did not start: {line!r} (see {log_file})")
        self.bootstrap = line.split()[1]

    def command(self, line: str) -> None:
        """Sends one command; a refusal or a helper gone (librdkafka aborts it when a broker that comes back up
        cannot bind its port again) ends the run."""
        try:
            self.process.stdin.write(line + "\n")
            self.process.stdin.flush()
            reply = self.process.stdout.readline().strip()
        except OSError as error:
            raise SystemExit(f"soak: the Kafka mock cluster is gone ({line}): {error}")
        if reply != "OK":
            raise SystemExit(f"soak: Kafka mock cluster, {line}: {reply or 'gone (librdkafka aborted it)'}")

    @property
    def ports(self) -> list[int]:
        return [int(address.rsplit(":", 1)[1]) for address in self.bootstrap.split(",")]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()  # the helper exits at end of input
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def redis_ids(redis: RedisServer) -> list[str]:
    """The `id` field (the event id) of every entry of each collection's stream (the sink's default stream,
    `directus.{collection}`), read back with redis-py (Tests/tools/broker_peers/redis_read.py, as the tests do)."""
    ids = []
    for collection in COLLECTIONS:
        result = subprocess.run(
            [sys.executable, str(TOOLS / "broker_peers" / "redis_read.py"), redis.url, f"directus.{collection}"],
            capture_output=True, text=True, timeout=300)
        if result.returncode != 0:
            raise SystemExit(f"soak: redis_read.py directus.{collection} failed: {result.stderr.strip()[-2000:]}")
        ids += [entry["fields"].get("id", "") for entry in json.loads(result.stdout)["entries"]]
    return ids


def kafka_topic(collection: str) -> str:
    return f"directus.{collection}"


def kafka_read(bootstrap: str, expected_by_topic: dict[str, int], timeout: float) -> list[dict]:
    """Every message of each topic, read back with confluent-kafka (Tests/tools/broker_peers/kafka_read.py, as the
    tests do) once the expected number arrived (and a second more, so duplicates show) or after `timeout`; each
    message with its topic added."""
    messages = []
    for topic, expected in expected_by_topic.items():
        result = subprocess.run(
            [sys.executable, str(TOOLS / "broker_peers" / "kafka_read.py"), bootstrap, topic, str(expected),
             "--timeout", str(timeout)], capture_output=True, text=True, timeout=timeout + 120)
        if result.returncode != 0:
            raise SystemExit(f"soak: kafka_read.py {topic} failed: {result.stderr.strip()[-2000:]}")
        messages += [{**m, "topic": topic} for m in json.loads(result.stdout.splitlines()[-1])["messages"]]
    return messages


def kafka_event_id(message: dict) -> str:
    """The event id of a message: its `id` header, else the `id` of its value."""
    for name, value in message["headers"]:
        if name == "id":
            return value
    try:
        return json.loads(message["value"])["id"]
    except (ValueError, KeyError, TypeError):
        return ""


def position(event: str) -> float:
    """Where an event sits in its item's history: an activity id, or a snapshot line just after its watermark."""
    if event.startswith("act_") and event[4:].isdigit():
        return int(event[4:])
    snapshot = parse_snapshot(event)
    return snapshot[2] + 0.5 if snapshot else -1


def parse_snapshot(event: str) -> tuple[str, str, int] | None:
    """(collection, key, watermark) of a `snap_<collection>_<key>_<watermark>` id (no `_<uid>`: one subscription a
    collection here; collection and key percent-encoded, `_` never inside them)."""
    parts = event.split("_")
    if len(parts) != 4 or parts[0] != "snap" or not parts[3].isdigit():
        return None
    return urllib.parse.unquote(parts[1]), urllib.parse.unquote(parts[2]), int(parts[3])


def kafka_order(messages: list[dict]) -> dict:
    """Per-item order: within each partition (messages in offset order), each item's events must come in activity-id
    order, and all of an item's events in one partition."""
    last_id: dict[tuple[str, str], int] = {}
    partition_of: dict[tuple[str, str], tuple[str, int]] = {}
    out_of_order, split, examples = 0, 0, []
    for message in messages:
        item = (message["topic"], message["key"])
        event = kafka_event_id(message)
        number = position(event)
        where = (message["topic"], message["partition"])
        if partition_of.setdefault(item, where) != where:
            split += 1
        if number <= last_id.get(item, -1):
            out_of_order += 1
            if len(examples) < 10:
                examples.append(f"{item[0]}/{item[1]}: {event} after act_{last_id[item]}")
        last_id[item] = max(number, last_id.get(item, -1))
    return {"items": len(last_id), "out_of_order": out_of_order, "out_of_order_examples": examples,
            "items_in_more_than_one_partition": split}


def write_config(path: Path, directus: int, hook: int, nats: int, kafka: str, redis: int, mqtt: int, amqp: int,
                 metrics: int, work: Path) -> None:
    path.write_text(f"""# Written by scripts/lib/soak.py.
directus:
  url: http://127.0.0.1:{directus}
  auth:
    email: admin@example.com
    password: admin-password
  reconnect:
    initial_delay: 200ms
    max_delay: 5s
subscriptions:
  - collection: articles
  - collection: comments
    snapshot: true
delivery:
  mode: activity
  poll_interval: 5s
  state_dir: {work / "state"}
sinks:
  - type: ndjson
    path: {work / "events.ndjson"}
    fsync: interval
  - type: webhook
    url: http://127.0.0.1:{hook}/hook
    secret: soak-secret
    timeout: 5s
    max_in_flight: {WEBHOOK_MAX_IN_FLIGHT}
    # Smaller than the comments snapshot: while the receiver is down the snapshot waits at the sink's cursor.
    max_outbox: {WEBHOOK_MAX_OUTBOX}
    max_attempts: 1000
    retry_schedule: [500ms, 1s, 2s, 5s]
  - type: jetstream
    servers: ["nats://127.0.0.1:{nats}"]
    subject: "directus.{{collection}}.{{event}}"
  - type: kafka
    brokers: [{", ".join(f'"{address}"' for address in kafka.split(","))}]
    properties:
      linger.ms: "5"
      # One request in flight: librdkafka 2.0.2's mock stores a later batch while an earlier one failed, so the
      # injected produce errors could make a batch count as delivered that it never stored (as in the tests).
      max.in.flight.requests.per.connection: "1"
  - type: redis
    url: redis://127.0.0.1:{redis}
  - type: mqtt
    url: mqtt://127.0.0.1:{mqtt}
  - type: amqp
    url: amqp://127.0.0.1:{amqp}
    exchange: {AMQP_EXCHANGE}
http:
  listen: 127.0.0.1:{metrics}
log:
  level: info
  format: json
  stats_interval: 1m
""")


# The kernel's TCP states (include/net/tcp_states.h), as /proc/net/tcp prints them in hex.
TCP_STATES = {1: "ESTABLISHED", 2: "SYN_SENT", 3: "SYN_RECV", 4: "FIN_WAIT1", 5: "FIN_WAIT2", 6: "TIME_WAIT",
              7: "CLOSE", 8: "CLOSE_WAIT", 9: "LAST_ACK", 10: "LISTEN", 11: "CLOSING"}


def tcp_sockets(pid: int) -> dict[str, tuple[int, int, str]]:
    """`socket:[inode]` → (local port, remote port, state) for the TCP sockets in the bridge's network namespace."""
    sockets = {}
    for table in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, remote, state, inode = fields[1], fields[2], int(fields[3], 16), fields[9]
            sockets[f"socket:[{inode}]"] = (
                int(local.rsplit(":", 1)[1], 16), int(remote.rsplit(":", 1)[1], 16), TCP_STATES.get(state, "?"))
    return sockets


def describe_fds(pid: int, peers: dict[int, str]) -> Counter:
    """The bridge's open descriptors by kind: TCP sockets by peer (`peers` names ports) and state, other sockets,
    pipes, anonymous inodes (eventfd, epoll, timerfd) and files by path."""
    tcp = tcp_sockets(pid)
    with open(f"/proc/{pid}/net/unix") as table:
        unix = {f"socket:[{line.split()[6]}]" for line in table.readlines()[1:] if len(line.split()) >= 7}
    kinds: Counter = Counter()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue  # closed since the listing
        if target in tcp:
            local, remote, state = tcp[target]
            if local in peers:
                kinds[f"tcp {peers[local]} (served) {state}"] += 1
            else:
                kinds[f"tcp to {peers.get(remote, remote)} {state}"] += 1
        elif target in unix:
            kinds["unix socket"] += 1  # socket pairs: the wake-ups of curl's multi handles and of the servers
        elif target.startswith("socket:"):
            kinds["socket (other)"] += 1
        elif target.startswith("pipe:"):
            kinds["pipe"] += 1
        else:
            kinds[target] += 1  # a file's path, or anon_inode:[eventfd] and the like
    return kinds


def sample(pid: int, peers: dict[int, str]) -> dict:
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    kinds = describe_fds(pid, peers)
    return {
        "t": time.monotonic(),
        "rss_kib": int(fields["VmRSS"].split()[0]),
        "threads": int(fields["Threads"]),
        "fds": sum(kinds.values()),
        "fd_kinds": dict(kinds),
    }


def ndjson_ids(paths: list[Path]) -> tuple[list[str], int]:
    """Event ids of every line in `paths`, and the number of lines that are not a JSON object with an id."""
    ids, malformed = [], 0
    for path in paths:
        if not path.exists():
            continue
        for line in path.read_bytes().split(b"\n"):
            if not line:
                continue
            try:
                ids.append(json.loads(line)["id"])
            except (ValueError, KeyError, TypeError):
                malformed += 1
    return ids, malformed


def webhook_ids(control: str) -> tuple[list[str], int]:
    """Ids of the webhook requests answered 2xx, and the number of requests in all (retries included)."""
    requests = call(f"{control}/_control/requests", timeout=120)["requests"]
    delivered = [r["id"] for r in requests if r["status"] is not None and 200 <= r["status"] < 300
                 and not r["aborted"]]
    return delivered, len(requests)


def recorded_rows(directus: str) -> list[dict]:
    """Every create, update and delete Directus recorded on the subscribed collections: id, collection, action,
    item (the item's key), in id order."""
    query = ("/activity?limit=-1&fields=id,collection,action,item&sort=id"
             f"&filter[collection][_in]={','.join(COLLECTIONS)}&filter[action][_in]=create,update,delete")
    return call(directus + query, token="admin-static-token", timeout=120)["data"]


def item_keys(directus: str, collection: str) -> set[str]:
    answer = call(f"{directus}/items/{collection}?fields=id&limit=-1", token="admin-static-token", timeout=120)
    return {str(item["id"]) for item in answer["data"]}


class Record:
    """What Directus recorded, and what a sink must hold of it: every change, except one at or below the watermark
    of a snapshot of its collection that the sink got (the snapshot covers it); and each such snapshot whole, every
    item that existed at its watermark."""

    def __init__(self, rows: list[dict], initial_keys: dict[str, set[str]]):
        self.rows = rows
        self.initial_keys = initial_keys
        self.ids = {f"act_{row['id']}" for row in rows}

    def keys_at(self, collection: str, watermark: int) -> set[str]:
        keys = set(self.initial_keys.get(collection, set()))
        for row in self.rows:
            if row["collection"] != collection or row["id"] > watermark:
                continue
            if row["action"] == "create":
                keys.add(str(row["item"]))
            elif row["action"] == "delete":
                keys.discard(str(row["item"]))
        return keys

    def missing(self, got: set[str]) -> tuple[list[str], list[str]]:
        """Changes not delivered nor covered, and snapshot items missing (as `collection/key@watermark`)."""
        snapshots: dict[tuple[str, int], set[str]] = {}
        for event in got:
            parsed = parse_snapshot(event)
            if parsed:
                snapshots.setdefault((parsed[0], parsed[2]), set()).add(parsed[1])
        highest: dict[str, int] = {}
        for collection, watermark in snapshots:
            highest[collection] = max(watermark, highest.get(collection, 0))
        changes = [f"act_{row['id']}" for row in self.rows if f"act_{row['id']}" not in got
                   and row["id"] > highest.get(row["collection"], 0)]
        items = [f"{collection}/{key}@{watermark}" for (collection, watermark), keys in sorted(snapshots.items())
                 for key in sorted(self.keys_at(collection, watermark) - keys)]
        return changes, items


def reconcile(record: Record, got: list[str]) -> dict:
    counts = Counter(got)
    lost, snapshot_missing = record.missing(set(counts))
    snapshots = Counter(parse_snapshot(event)[0] for event in counts if parse_snapshot(event))
    return {
        "received": len(got),
        "unique": len(counts),
        "lost": len(lost) + len(snapshot_missing),
        "lost_examples": (lost + snapshot_missing)[:10],
        "snapshot_items_by_collection": dict(snapshots),
        "duplicate_ids": sum(1 for n in counts.values() if n > 1),
        "duplicate_deliveries": sum(n - 1 for n in counts.values() if n > 1),
        "unexpected": sum(1 for event in counts if event not in record.ids and not parse_snapshot(event)),
    }


def metrics(url: str) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """The bridge's /metrics: samples summed by name, and the broker sinks' (`directus_bridge_broker_*`) by their
    `sink` label."""
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            text = answer.read().decode()
    except OSError:
        return {}, {}
    values: dict[str, float] = {}
    by_sink: dict[str, dict[str, float]] = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name_part, _, value = line.rpartition(" ")
        name, _, labels = name_part.partition("{")
        try:
            number = float(value)
        except ValueError:
            continue
        values[name] = values.get(name, 0.0) + number
        if name.startswith("directus_bridge_broker_") and 'sink="' in labels:
            sink = labels.split('sink="', 1)[1].split('"', 1)[0]
            by_sink.setdefault(sink, {})[name.removeprefix("directus_bridge_broker_")] = number
    return values, by_sink


def trend(samples: list[dict], warm_up: float, start: float) -> dict:
    """Growth after the warm-up: the first and the last minute after it compared (medians for memory, maxima for
    descriptors and threads)."""
    steady = [s for s in samples if s["t"] - start >= warm_up]
    if len(steady) < 4:
        return {"enough_samples": False}
    window = max(2, min(6, len(steady) // 3))
    first, last = steady[:window], steady[-window:]
    def webhook(s: dict) -> int:
        return sum(n for kind, n in s["fd_kinds"].items() if kind.startswith("tcp to webhook"))

    def others(s: dict) -> int:
        return s["fds"] - webhook(s)

    rss_first = statistics.median(s["rss_kib"] for s in first)
    rss_last = statistics.median(s["rss_kib"] for s in last)
    return {
        "enough_samples": True,
        "samples_after_warm_up": len(steady),
        "rss_kib_first": rss_first,
        "rss_kib_last": rss_last,
        "rss_kib_max": max(s["rss_kib"] for s in steady),
        "rss_growth_percent": round(100 * (rss_last - rss_first) / rss_first, 2),
        "fds_first_max": max(s["fds"] for s in first),
        "fds_last_max": max(s["fds"] for s in last),
        "fds_range": [min(s["fds"] for s in steady), max(s["fds"] for s in steady)],
        "fds_without_webhook_first_max": max(others(s) for s in first),
        "fds_without_webhook_last_max": max(others(s) for s in last),
        "webhook_connections_max": max(webhook(s) for s in samples),
        # What the descriptors were at the fewest and at the most: which kind of descriptor comes and goes.
        "fd_kinds_at_min": min(steady, key=lambda s: s["fds"])["fd_kinds"],
        "fd_kinds_at_max": max(steady, key=lambda s: s["fds"])["fd_kinds"],
        "threads_first_max": max(s["threads"] for s in first),
        "threads_last_max": max(s["threads"] for s in last),
        "threads_range": [min(s["threads"] for s in steady), max(s["threads"] for s in steady)],
    }


def stop(process: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL after 30 s; waits for the exit."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def log_levels(path: Path) -> tuple[Counter, Counter]:
    """Log lines per level and the most frequent warning and error messages of the bridge's JSON log."""
    levels, messages = Counter(), Counter()
    for line in path.read_text(errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            levels["unparsed"] += 1
            continue
        level = entry.get("level", "?")
        levels[level] += 1
        if level in ("warning", "warn", "error", "critical"):
            messages[f"{level}: {entry.get('message', '')[:120]}"] += 1
    return levels, messages


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, required=True)
    parser.add_argument("--bridge", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--rate", type=float, default=4.0, help="changes per second, both collections together")
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    duration = args.minutes * 60
    warm_up = min(300.0, duration / 3)

    emulator, directus_port = start_peer(
        "directus_emulator/server.py",
        ["--port", "0", "--log-level", "warning", "--token-ttl-ms", str(TOKEN_TTL_MS)], work / "emulator.log")
    receiver, control_port = start_peer("http_peers/webhook_receiver.py", [], work / "receiver.log")
    nats = NATSServer(free_port(), work / "nats", work / "nats.log")
    nats.start()
    nats_admin("create-stream", nats.url, STREAM, "directus.>")
    kafka = KafkaCluster(KAFKA_BROKERS, work / "kafka.log")
    redis = RedisServer(free_port(), work / "redis", work / "redis.log")
    redis.start()
    mqtt = MosquittoServer(free_port(), work / "mosquitto", work / "mosquitto.log")
    mqtt.start()
    mqtt_reader = MQTTReader(mqtt, work / "mqtt.jsonl", work / "mqtt-reader.log")
    amqp = RabbitMQServer(free_port(), work / "rabbitmq", work / "rabbitmq.log")
    amqp.start()
    amqp_admin("setup", amqp.url, AMQP_EXCHANGE, AMQP_QUEUE, "#")
    for collection in COLLECTIONS:
        kafka.command(f"topic {kafka_topic(collection)} {KAFKA_PARTITIONS} {KAFKA_BROKERS}")
        for partition in range(KAFKA_PARTITIONS):
            kafka.command(f"leader {kafka_topic(collection)} {partition} {partition % KAFKA_BROKERS + 1}")
    directus = f"http://127.0.0.1:{directus_port}"
    control = f"http://127.0.0.1:{control_port}"
    hook_port = call(f"{control}/_control/info")["hook_port"]
    metrics_port = free_port()
    metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"
    config = work / "bridge.yaml"
    write_config(config, directus_port, hook_port, nats.port, kafka.bootstrap, redis.port, mqtt.port, amqp.port,
                 metrics_port, work)

    peers = {directus_port: "directus", hook_port: "webhook", nats.port: "nats", metrics_port: "metrics",
             redis.port: "redis", mqtt.port: "mqtt", amqp.port: "amqp",
             **{port: f"kafka broker {n}" for n, port in enumerate(kafka.ports, start=1)}}
    # What existed before the run's own writes (the emulator's sample data, recorded nowhere in its activity log),
    # then `comments` grown so that its snapshot spans pages, taken while the webhook receiver is down.
    initial_keys = {collection: item_keys(directus, collection) for collection in COLLECTIONS}
    for first in range(0, SNAPSHOT_SEED_ITEMS, 500):
        call(f"{directus}/items/comments", [{"text": f"seeded {n}"} for n in range(first, first + 500)],
             token="admin-static-token", timeout=120)
    call(f"{control}/_control/down", {"ms": FLAP_DOWN_MS})
    bridge = subprocess.Popen([args.bridge, "run", "--config", str(config)], stdout=subprocess.DEVNULL,
                              stderr=(work / "bridge.log").open("wb"))
    log(f"bridge pid {bridge.pid}, emulator {directus}, receiver {control}, work {work}")
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/readyz", timeout=2).close()
                break
            except OSError:
                if bridge.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"soak: the bridge did not become ready (see {work / 'bridge.log'})")
                time.sleep(0.5)

        interval_ms = 1000 * len(COLLECTIONS) / args.rate
        for collection in COLLECTIONS:
            call(f"{directus}/_emulator/generator",
                 {"collection": collection, "count": -1, "interval_ms": interval_ms, "kind": "mixed"})
        start = time.monotonic()
        log(f"generating {args.rate:g} changes/s for {args.minutes:g} min")

        samples: list[dict] = []
        faults: Counter = Counter()
        hup_done = False
        resync_done = False
        kafka_down: tuple[int, float] | None = None  # the broker that is down and when it comes back
        timetable = LONG_TIMETABLE if duration >= 600 else SHORT_TIMETABLE

        # Each fault has its next due time: on a loaded machine one pass of the loop can take longer than a second,
        # and a fault planned for an exact second would be skipped.
        next_due = {fault: start + offset for fault, (_, offset) in timetable.items()}
        next_sample = start
        while time.monotonic() - start < duration:
            if bridge.poll() is not None:
                raise SystemExit(f"soak: the bridge exited with {bridge.returncode} (see {work / 'bridge.log'})")
            now = time.monotonic()
            if now >= next_sample:
                samples.append(sample(bridge.pid, peers))
                next_sample += SAMPLE_SECONDS
            due = [fault for fault, when in next_due.items() if now >= when]
            for fault in due:
                next_due[fault] += timetable[fault][0]
            if "drop" in due:
                reset = faults["socket_drops"] % 2 == 0
                call(f"{directus}/_emulator/drop", {"reset": reset})
                faults["socket_drops"] += 1
                log(f"dropped every socket ({'RST' if reset else 'FIN'})")
            if "down" in due:
                call(f"{control}/_control/down", {"ms": FLAP_DOWN_MS})
                faults["receiver_down"] += 1
                log(f"webhook receiver down for {FLAP_DOWN_MS} ms")
            if "503" in due:
                call(f"{control}/_control/script",
                     {"steps": [{"status": 503, "headers": {"retry-after": "1"}}] * 5})
                faults["receiver_503_bursts"] += 1
            for server, fault, seconds in ((nats, "nats", NATS_DOWN_SECONDS), (redis, "redis", REDIS_DOWN_SECONDS),
                                           (mqtt, "mqtt", MQTT_DOWN_SECONDS), (amqp, "amqp", AMQP_DOWN_SECONDS)):
                if fault in due and server.back_at is None:
                    server.take_down(faults[f"{fault}_outages"], now, seconds)
                    faults[f"{fault}_outages"] += 1
                server.come_back(now)
            if "kafka_down" in due and kafka_down is None:
                broker = faults["kafka_broker_outages"] % KAFKA_BROKERS + 1
                kafka.command(f"down {broker}")
                kafka_down = (broker, now + KAFKA_DOWN_SECONDS)
                faults["kafka_broker_outages"] += 1
                log(f"Kafka broker {broker} down for {KAFKA_DOWN_SECONDS} s")
            if kafka_down is not None and now >= kafka_down[1]:
                kafka.command(f"up {kafka_down[0]}")
                log(f"Kafka broker {kafka_down[0]} back")
                kafka_down = None
            if "kafka_leader" in due:
                # Every partition's leader moves to the next broker (one that is down included: its partitions
                # wait until it is back).
                faults["kafka_leader_changes"] += 1
                shift = faults["kafka_leader_changes"]
                for collection in COLLECTIONS:
                    for partition in range(KAFKA_PARTITIONS):
                        kafka.command(f"leader {kafka_topic(collection)} {partition} "
                                      f"{(partition + shift) % KAFKA_BROKERS + 1}")
                log("moved every Kafka partition's leader")
            if "kafka_errors" in due:
                kafka.command("errors " + ",".join(map(str, KAFKA_RETRIABLE_ERRORS)))
                faults["kafka_produce_error_bursts"] += 1
                log(f"the next {len(KAFKA_RETRIABLE_ERRORS)} Kafka produce requests fail (retriable)")
            if not resync_done and now - start >= duration / 3:
                call(f"{control}/_control/down", {"ms": FLAP_DOWN_MS})
                subprocess.run([args.bridge, "resync", "articles", "--config", str(config)], check=True,
                               stdout=subprocess.DEVNULL, stderr=(work / "resync.log").open("wb"), timeout=60)
                resync_done = True
                faults["resync_under_backpressure"] += 1
                log(f"webhook receiver down for {FLAP_DOWN_MS} ms; resync of articles asked beside the bridge")
            if not hup_done and now - start >= duration / 2:
                (work / "events.ndjson").rename(work / "events.ndjson.1")
                bridge.send_signal(signal.SIGHUP)
                hup_done = True
                faults["sighup"] += 1
                log("moved events.ndjson away, sent SIGHUP")
            time.sleep(0.2)

        nats.come_back(None)
        if kafka_down is not None:
            kafka.command(f"up {kafka_down[0]}")
        redis.come_back(None)
        mqtt.come_back(None)
        amqp.come_back(None)
        call(f"{directus}/_emulator/generator/stop", {})
        generated = call(f"{directus}/_emulator/generator")["jobs"]
        rows = recorded_rows(directus)
        record = Record(rows, initial_keys)
        expected = record.ids
        log(f"generator stopped: {len(expected)} changes recorded; waiting for the sinks to catch up")
        # At least the changes (plus a snapshot line per item of each collection), so the reader does not stop short.
        expected_by_topic = {kafka_topic(c): sum(1 for row in rows if row["collection"] == c) for c in COLLECTIONS}
        ndjson_paths = [work / "events.ndjson.1", work / "events.ndjson"]
        catch_up_start = time.monotonic()
        amqp_ids: list[str] = []

        def still_missing(got: list[str]) -> int:
            changes, items = record.missing(set(got))
            return len(changes) + len(items)

        while True:
            file_ids, _ = ndjson_ids(ndjson_paths)
            hook_ids, _ = webhook_ids(control)
            missing = still_missing(file_ids) + still_missing(hook_ids)
            if missing == 0:
                missing = still_missing(stream_ids(nats))
            if missing == 0:
                missing = still_missing(redis_ids(redis))
            if missing == 0:
                missing = still_missing(mqtt_reader.ids())
            if missing == 0:
                amqp_ids += amqp_take(amqp)  # taken out of the queue: kept here
                missing = still_missing(amqp_ids)
            if missing == 0:
                # Delivered events only: the reader waits up to 10 s for the rest before it answers.
                read = kafka_read(kafka.bootstrap, expected_by_topic, 10)
                missing = still_missing([kafka_event_id(m) for m in read])
            if missing == 0 or time.monotonic() - catch_up_start > CATCH_UP_SECONDS:
                break
            time.sleep(2)
        catch_up = time.monotonic() - catch_up_start
        final_metrics, broker_metrics = metrics(metrics_url)
        samples.append(sample(bridge.pid, peers))
        emulator_stats = call(f"{directus}/_emulator/stats")
        stop(bridge)
        hook_ids, hook_requests = webhook_ids(control)
        file_ids, malformed = ndjson_ids(ndjson_paths)
        jetstream_ids = stream_ids(nats)
        kafka_messages = kafka_read(kafka.bootstrap, expected_by_topic, 60)
        redis_entry_ids = redis_ids(redis)
        time.sleep(2)  # what the broker still had on its way to the reader
        mqtt_ids = mqtt_reader.ids()
        amqp_ids += amqp_take(amqp)
    finally:
        stop(bridge)
        for peer in (emulator, receiver):
            stop(peer)
        nats.stop()
        kafka.stop()
        redis.stop()
        stop(mqtt_reader.process)
        mqtt.stop()
        amqp.stop()

    levels, messages = log_levels(work / "bridge.log")
    resources = trend(samples, warm_up, start)
    report = {
        "minutes": args.minutes,
        "rate_per_second": args.rate,
        "changes": len(expected),
        "generator_jobs": generated,
        "faults": dict(faults),
        "catch_up_seconds": round(catch_up, 1),
        "bridge_exit_status": bridge.returncode,
        "ndjson": {**reconcile(record, file_ids), "malformed_lines": malformed,
                   "lines_after_sighup": len(ndjson_ids([work / "events.ndjson"])[0])},
        "webhook": {**reconcile(record, hook_ids), "requests": hook_requests},
        "jetstream": reconcile(record, jetstream_ids),
        "kafka": {**reconcile(record, [kafka_event_id(m) for m in kafka_messages]), **kafka_order(kafka_messages),
                  "partitions_used": len({(m["topic"], m["partition"]) for m in kafka_messages})},
        "redis": reconcile(record, redis_entry_ids),
        "mqtt": reconcile(record, mqtt_ids),
        "amqp": reconcile(record, amqp_ids),
        "resources": resources,
        "samples": [{"s": round(s["t"] - start), **{k: s[k] for k in ("rss_kib", "fds", "threads", "fd_kinds")}}
                    for s in samples],
        "emulator": {key: emulator_stats.get(key) for key in
                     ("connections_total", "closes", "auth_ok", "auth_failed", "tokens_expired", "activity_max_id")},
        "bridge_metrics": {key: value for key, value in final_metrics.items() if key in (
            "directus_bridge_reconnects_total", "directus_bridge_auth_refreshes_total",
            "directus_bridge_webhook_attempts_total", "directus_bridge_webhook_retries_total",
            "directus_bridge_webhook_dead_letters_total", "directus_bridge_events_emitted_total",
            "directus_bridge_activity_read_failures_total", "directus_bridge_events_dropped_total",
            "directus_bridge_broker_delivered_total", "directus_bridge_broker_duplicates_total",
            "directus_bridge_broker_resent_total", "directus_bridge_broker_rejected_total")},
        "broker_metrics_by_sink": broker_metrics,
        "log_levels": dict(levels),
        "frequent_warnings_and_errors": dict(messages.most_common(12)),
    }
    failures = []
    for sink in ("ndjson", "webhook", "jetstream", "kafka", "redis", "mqtt", "amqp"):
        if report[sink]["lost"]:
            failures.append(f"{sink} lost {report[sink]['lost']} changes or snapshot items")
        # The comments snapshot at the start and the articles resync both reached every sink.
        if set(report[sink]["snapshot_items_by_collection"]) != set(COLLECTIONS):
            failures.append(f"{sink} got snapshot lines of {sorted(report[sink]['snapshot_items_by_collection'])} "
                            f"only (wanted {list(COLLECTIONS)})")
    # The Kafka producer is idempotent (a retried batch is stored once) and the injected errors are all retriable (no
    # fatal error makes a new producer send the unreported events again): a duplicate is a defect.
    if report["kafka"]["duplicate_ids"]:
        failures.append(f"kafka has {report['kafka']['duplicate_ids']} events twice")
    # The Redis sink's dedup window (24 h) remembers every appended id, and the server syncs its append-only file
    # before it answers: a re-send after an outage is not appended again, so a duplicate is a defect.
    if report["redis"]["duplicate_ids"]:
        failures.append(f"redis has {report['redis']['duplicate_ids']} events twice")
    if report["kafka"]["out_of_order"] or report["kafka"]["items_in_more_than_one_partition"]:
        failures.append("kafka has an item's events out of activity order or spread over partitions")
    if malformed:
        failures.append(f"{malformed} NDJSON lines did not parse")
    if bridge.returncode != 0:
        failures.append(f"the bridge exited with {bridge.returncode}")
    if not resources.get("enough_samples"):
        failures.append("too few samples after the warm-up to judge memory")
    else:
        if resources["rss_growth_percent"] >= 10:
            failures.append(f"memory grew {resources['rss_growth_percent']} % after the warm-up")
        if resources["fds_without_webhook_last_max"] > resources["fds_without_webhook_first_max"] + FD_SLACK:
            failures.append("open descriptors (other than webhook connections) grew")
        if resources["webhook_connections_max"] > WEBHOOK_MAX_IN_FLIGHT:
            failures.append(f"more than {WEBHOOK_MAX_IN_FLIGHT} webhook connections open at once")
        if resources["threads_last_max"] > resources["threads_first_max"] + THREAD_SLACK:
            failures.append("threads grew")
    report["failures"] = failures
    (work / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    summary = {key: value for key, value in report.items() if key != "samples"}
    print(json.dumps(summary, indent=2))
    log("PASS" if not failures else "FAIL: " + "; ".join(failures))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
