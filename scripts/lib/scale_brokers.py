"""The broker sinks at scale (docs/RELIABILITY.md, "The broker sinks at scale").

    python scripts/lib/scale_brokers.py --bridge PATH --work DIR [--items 20000] [--interval-ms 10]
                                        [--fault-seconds 40] [--kill-at-lines 6000]

An operator's run of the release binary against the bundled Directus emulator and real servers started here on
loopback ports of their own: `articles` grown to ITEMS items with `snapshot: true`, the emulator's generator making
changes to `articles` every INTERVAL ms (and to `comments` every 50 ms), `max_queue: 4`, and one sink of each broker
type (Kafka on librdkafka's mock cluster as the tests start it, JetStream, Redis, AMQP, MQTT) beside an NDJSON file
as the reference. Then, in order, each for FAULT seconds unless said:

1. SIGKILL of the bridge once the file holds 6,000 lines (`--kill-at-lines`: mid-snapshot); what each sink held then
   is read back (a repeat of one of those ids later is a repeat across the crash); the bridge is started again.
2. redis-server and RabbitMQ's Erlang VM hung (SIGSTOP, then SIGCONT; shorter than two AMQP heartbeats, so the
   connection outlives the hang) and every Kafka broker down (the mock refuses connections).
3. nats-server killed (SIGKILL, started again on its store) and mosquitto hung (SIGSTOP): the MQTT sink's inflight
   window (the broker's Receive Maximum, 10 here) fills.
4. rabbitmq-server stopped (SIGTERM); two `resync articles` 20 s apart while it is down, each right after the
   emulator held an articles commit back 3 s (a gap below the watermark); started again 20 s after the second.
5. Full rather than down: Redis at `maxmemory` with `noeviction`, RabbitMQ's memory alarm (connection.blocked), the
   JetStream stream at `max_msgs` with `discard: new`; then mosquitto stopped for 15 s (SIGTERM) and started again.

It then stops the generator, waits until every sink's lag is 0 and no snapshot runs (or 5 minutes), stops the bridge
with SIGTERM and reads every sink back. Per sink it reports: every change Directus recorded after the first
snapshot's watermark present or not (`missing`), each snapshot whole, ids twice (split into repeats across the
SIGKILL and others), per item changes on the wrong side of a snapshot line and changes out of activity order (each
id's first copy), and the last snapshot's lines. Beside that: the bridge's RSS every 2 s, /readyz every second
(which sinks it named stuck during each fault), /metrics every 5 s (`directus_bridge_broker_healthy`,
`directus_bridge_sink_lag_rows`), and the log lines by message (the most frequent ones, per sink). The report goes to
DIR/report.json and stdout; the exit status is 0 when no sink lost a change or a snapshot item and none has a change
on the wrong side of a snapshot line or out of order.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from soak import (TOOLS, KafkaCluster, MQTTReader, NATSServer, RabbitMQServer, RedisServer,  # noqa: E402
                  RestartableServer, amqp_admin, call, free_port, item_keys, kafka_read, nats_admin, parse_snapshot,
                  recorded_rows, start_peer, stop, Record)

COLLECTIONS = ("articles", "comments")
STREAM = "DIRECTUS"
AMQP_EXCHANGE, AMQP_QUEUE = "directus", "scale"
# librdkafka's mock keeps at most 5 MiB of messages per partition (older ones are dropped, as a retention limit
# would): 16 partitions a topic hold this run's 100,000-odd events of ~500 bytes.
KAFKA_BROKERS, KAFKA_PARTITIONS = 3, 16
MQTT_RECEIVE_MAXIMUM = 10
# The stream's limit while it is not "full": large, so that `discard: new` only bites when it is lowered.
STREAM_ROOM = 10_000_000
SINKS = ("file", "kafka", "stream", "redis", "amqp", "mqtt")
START = time.monotonic()


def log(text: str) -> None:
    print(f"scale {time.strftime('%H:%M:%S')} +{time.monotonic() - START:6.1f}s: {text}", file=sys.stderr,
          flush=True)


class HungMosquitto(RestartableServer):
    """mosquitto with persistence, no limit on a session's queue (the reader takes everything) and a small inflight
    window (`max_inflight_messages`, sent to MQTT 5 clients as Receive Maximum), so that a hung broker fills the
    sink's window quickly. Stopped with SIGTERM only, as the soak says why."""

    may_kill = False

    def __init__(self, port: int, directory: Path, log_file: Path):
        directory.mkdir(parents=True, exist_ok=True)
        config = directory / "mosquitto.conf"
        config.write_text(f"user root\nlistener {port} 127.0.0.1\nallow_anonymous true\npersistence true\n"
                          f"persistence_location {directory}/\nmax_queued_messages 0\n"
                          f"max_inflight_messages {MQTT_RECEIVE_MAXIMUM}\nlog_dest stderr\n")
        super().__init__("mosquitto", ["/usr/sbin/mosquitto", "-c", str(config)], port, log_file)

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"


def rabbitmqctl(amqp: RabbitMQServer, directory: Path, *arguments: str) -> str:
    """rabbitmqctl against the private node (its cookie is in the node's HOME)."""
    environment = {**os.environ, "HOME": str(directory)}
    result = subprocess.run(["/usr/lib/rabbitmq/bin/rabbitmqctl", "-n", f"bridge-soak-{amqp.port}@localhost",
                             *arguments], capture_output=True, text=True, env=environment, timeout=120)
    if result.returncode != 0:
        raise SystemExit(f"scale: rabbitmqctl {arguments} failed: {result.stderr.strip()[-1000:]}")
    return result.stdout


def redis_cli(redis: RedisServer, *arguments: str) -> str:
    return subprocess.run(["redis-cli", "-p", str(redis.port), *arguments], capture_output=True, text=True,
                          timeout=60, check=True).stdout


def write_config(path: Path, directus: int, nats: NATSServer, kafka: KafkaCluster, redis: RedisServer,
                 mqtt: HungMosquitto, amqp: RabbitMQServer, operations: int) -> None:
    brokers = ", ".join(f'"{address}"' for address in kafka.bootstrap.split(","))
    path.write_text(f"""# Written by scripts/lib/scale_brokers.py.
directus:
  url: http://127.0.0.1:{directus}
  auth:
    token: admin-static-token
subscriptions:
  - collection: articles
    snapshot: true
  - collection: comments
delivery:
  mode: activity
  state_dir: ./state
  max_queue: 4
sinks:
  - type: ndjson
    name: file
    path: ./events.ndjson
  - type: kafka
    name: kafka
    brokers: [{brokers}]
  - type: jetstream
    name: stream
    servers: ["{nats.url}"]
  - type: redis
    name: redis
    url: {redis.url}
  - type: amqp
    name: amqp
    url: {amqp.url}
    exchange: {AMQP_EXCHANGE}
  - type: mqtt
    name: mqtt
    url: {mqtt.url}
http:
  listen: 127.0.0.1:{operations}
log:
  level: info
  format: json
""")


class Watcher:
    """Samples the running bridge: RSS every 2 s, /readyz every second, /metrics every 5 s, into lists."""

    def __init__(self, operations: int):
        self.base = f"http://127.0.0.1:{operations}"
        self.pid = 0
        self.rss: list[tuple[float, int]] = []
        self.ready: list[tuple[float, int, dict]] = []
        self.metrics: list[tuple[float, dict]] = []
        self.stopped = False
        threading.Thread(target=self.run, daemon=True).start()

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(self.base + path, timeout=5) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()
        except OSError:
            return 0, ""

    def run(self) -> None:
        tick = 0
        while not self.stopped:
            now = time.monotonic() - START
            if self.pid:
                if tick % 2 == 0:
                    try:
                        status = Path(f"/proc/{self.pid}/status").read_text()
                        self.rss.append((now, int(status.split("VmRSS:")[1].split()[0])))
                    except (OSError, IndexError):
                        pass
                code, body = self.get("/readyz")
                try:
                    self.ready.append((now, code, json.loads(body) if body else {}))
                except ValueError:
                    self.ready.append((now, code, {"unparsed": body[:200]}))
                if tick % 5 == 0:
                    code, text = self.get("/metrics")
                    picked = {}
                    for line in text.splitlines():
                        if line.startswith(("directus_bridge_broker_healthy", "directus_bridge_sink_lag_rows",
                                            "directus_bridge_snapshot_running", "directus_bridge_ready ")):
                            name, _, value = line.rpartition(" ")
                            picked[name] = float(value)
                    if picked:
                        self.metrics.append((now, picked))
            tick += 1
            time.sleep(1)

    def during(self, begin: float, end: float) -> dict:
        """What /readyz said between two times: answers by status, and the sinks it named stuck (how often)."""
        answers = [(code, body) for t, code, body in self.ready if begin <= t <= end]
        stuck: Counter = Counter()
        for _, body in answers:
            stuck.update(body.get("stuck_sinks", {}).keys())
        healthy: dict[str, list[float]] = defaultdict(list)
        for t, picked in self.metrics:
            if begin <= t <= end:
                for name, value in picked.items():
                    if name.startswith("directus_bridge_broker_healthy"):
                        healthy[name.split('sink="')[1].split('"')[0]].append(value)
        return {"readyz": dict(Counter(code for code, _ in answers)), "stuck_sinks_seen": dict(stuck),
                "broker_healthy_zero_samples": {sink: sum(1 for v in values if v == 0)
                                                for sink, values in healthy.items()}}


def parse_event(body: str | bytes) -> tuple[str, str, str]:
    event = json.loads(body)
    return event["id"], event["collection"], str(event["key"])


def read_file(path: Path) -> list[tuple[str, str, str]]:
    records = []
    for line in path.read_bytes().split(b"\n"):
        if line:
            records.append(parse_event(line))
    return records


def read_kafka(kafka: KafkaCluster, expected: dict[str, int]) -> tuple[list[tuple[str, str, str]], int]:
    """Every message, and how many partitions do not start at offset 0 (the mock dropped messages: not the sink's)."""
    messages = kafka_read(kafka.bootstrap, {f"directus.{c}": n for c, n in expected.items()}, 120)
    first: dict[tuple[str, int], int] = {}
    for m in messages:
        where = (m["topic"], m["partition"])
        first[where] = min(first.get(where, m["offset"]), m["offset"])
    return [parse_event(m["value"]) for m in messages], sum(1 for offset in first.values() if offset > 0)


def read_stream(nats: NATSServer) -> list[tuple[str, str, str]]:
    """Every message of the stream in stream order, through an ordered consumer (one request per message, as
    nats_admin.py read-stream does, takes minutes at this size)."""
    import nats as nats_client

    async def read() -> list[tuple[str, str, str]]:
        client = await nats_client.connect(nats.url)
        js = client.jetstream(timeout=30)
        total = (await js.stream_info(STREAM)).state.messages
        records = []
        if total:
            subscription = await js.subscribe("directus.>", stream=STREAM, ordered_consumer=True)
            while len(records) < total:
                message = await subscription.next_msg(timeout=30)
                records.append(parse_event(message.data))
        await client.close()
        return records

    return asyncio.run(read())


def read_redis(redis: RedisServer) -> list[tuple[str, str, str]]:
    records = []
    for collection in COLLECTIONS:
        result = subprocess.run([sys.executable, str(TOOLS / "broker_peers" / "redis_read.py"), redis.url,
                                 f"directus.{collection}"], capture_output=True, text=True, timeout=600, check=True)
        records += [parse_event(entry["fields"]["payload"]) for entry in json.loads(result.stdout)["entries"]]
    return records


def take_amqp(amqp: RabbitMQServer) -> list[tuple[str, str, str]]:
    """The queue's messages, taken out of it (kept by the caller)."""
    return [parse_event(json.loads(line)["body"]) for line in amqp_admin("read", amqp.url, AMQP_QUEUE).splitlines()
            if line.startswith("{")]


def read_mqtt(reader: MQTTReader) -> list[tuple[str, str, str]]:
    records = []
    for line in reader.output.read_text(errors="replace").splitlines():
        if line.startswith("{"):
            try:
                records.append(parse_event(json.loads(line)["payload"]))
            except (ValueError, KeyError):
                pass  # the last line, half written
    return records


def judge(records: list[tuple[str, str, str]], record: Record, start: int, before_kill: set[str]) -> dict:
    """What one sink holds against what Directus recorded (see the module's text)."""
    ids = [r[0] for r in records]
    counts = Counter(ids)
    twice = [i for i, n in counts.items() if n > 1]
    wanted = {f"act_{row['id']}" for row in record.rows if row["id"] > start}
    missing = sorted(wanted - set(counts), key=lambda i: int(i[4:]))
    snapshots: dict[int, set[str]] = defaultdict(set)
    for i in counts:
        parsed = parse_snapshot(i)
        if parsed and parsed[0] == "articles":
            snapshots[parsed[2]].add(parsed[1])
    snapshot_missing = {w: len(record.keys_at("articles", w) - keys) for w, keys in snapshots.items()}
    snapshot_extra = {w: len(keys - record.keys_at("articles", w)) for w, keys in snapshots.items()}
    # Per item, each id's first copy in the sink's order.
    seen: set[str] = set()
    per_item: dict[tuple[str, str], list[str]] = defaultdict(list)
    for i, collection, key in records:
        if i not in seen:
            seen.add(i)
            per_item[(collection, key)].append(i)
    wrong_side, out_of_order, examples = 0, 0, []
    for item, events in per_item.items():
        last = -1
        marks = []
        for position, i in enumerate(events):
            parsed = parse_snapshot(i)
            if parsed:
                marks.append((position, parsed[2]))
                continue
            if i.startswith("act_"):
                number = int(i[4:].split("_")[0])
                if number < last:
                    out_of_order += 1
                    if len(examples) < 6:
                        examples.append(f"{item[0]}/{item[1]}: {i} after act_{last}")
                last = max(last, number)
        for mark_position, watermark in marks:
            for position, i in enumerate(events):
                if not i.startswith("act_"):
                    continue
                number = int(i[4:].split("_")[0])
                if (number <= watermark and position > mark_position) or (
                        number > watermark and position < mark_position and number > start):
                    wrong_side += 1
                    if len(examples) < 6:
                        examples.append(f"{item[0]}/{item[1]}: {i} on the wrong side of the snapshot at {watermark}")
    return {
        "messages": len(ids), "unique": len(counts), "missing_changes": len(missing), "missing_examples": missing[:8],
        "changes_wanted": len(wanted),
        "snapshots": {w: len(keys) for w, keys in sorted(snapshots.items())},
        "snapshot_items_missing": snapshot_missing, "snapshot_items_extra": snapshot_extra,
        "ids_twice": len(twice), "ids_twice_snapshot": sum(1 for i in twice if i.startswith("snap_")),
        "ids_twice_across_the_kill": sum(1 for i in twice if i in before_kill),
        "ids_twice_other_examples": [i for i in twice if i not in before_kill][:8],
        "ids_twice_other": sum(1 for i in twice if i not in before_kill),
        "wrong_side_of_a_snapshot": wrong_side, "out_of_activity_order": out_of_order, "order_examples": examples,
    }


def log_summary(paths: list[Path]) -> dict:
    """Lines by level, the most frequent messages, and per sink its warnings and errors by message."""
    levels: Counter = Counter()
    messages: Counter = Counter()
    per_sink: dict[str, Counter] = defaultdict(Counter)
    for path in paths:
        for line in path.read_text(errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                levels["unparsed"] += 1
                continue
            level = entry.get("level", "?")
            levels[level] += 1
            message = entry.get("message", "")[:110]
            messages[f"{level}: {message}"] += 1
            sink = (entry.get("fields") or {}).get("sink")
            if sink and level in ("warning", "warn", "error"):
                per_sink[str(sink)][f"{level}: {message}"] += 1
    return {"levels": dict(levels), "most_frequent": dict(messages.most_common(25)),
            "sinks": {sink: dict(c.most_common(12)) for sink, c in sorted(per_sink.items())}}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bridge", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--items", type=int, default=20000)
    parser.add_argument("--interval-ms", type=float, default=10)
    parser.add_argument("--fault-seconds", type=float, default=40)
    parser.add_argument("--kill-at-lines", type=int, default=6000)
    args = parser.parse_args()
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    os.chdir(work)
    fault = args.fault_seconds
    phases: list[dict] = []

    emulator, directus_port = start_peer("directus_emulator/server.py", ["--port", "0", "--log-level", "warning"],
                                         work / "emulator.log")
    directus = f"http://127.0.0.1:{directus_port}"
    nats = NATSServer(free_port(), work / "nats", work / "nats.log")
    kafka = KafkaCluster(KAFKA_BROKERS, work / "kafka.log")
    redis = RedisServer(free_port(), work / "redis", work / "redis.log")
    mqtt = HungMosquitto(free_port(), work / "mosquitto", work / "mosquitto.log")
    amqp = RabbitMQServer(free_port(), work / "rabbitmq", work / "rabbitmq.log")
    servers = [nats, redis, mqtt, amqp]
    bridge: subprocess.Popen | None = None
    reader: MQTTReader | None = None
    watcher: Watcher | None = None
    try:
        for server in servers:
            server.start()
        log(f"servers up: nats {nats.port}, redis {redis.port}, mosquitto {mqtt.port}, rabbitmq {amqp.port}, "
            f"kafka {kafka.bootstrap}, emulator {directus}")
        nats_admin("create-stream", nats.url, STREAM, "directus.>", "--max-msgs", str(STREAM_ROOM))
        amqp_admin("setup", amqp.url, AMQP_EXCHANGE, AMQP_QUEUE, "#")
        for collection in COLLECTIONS:
            kafka.command(f"topic directus.{collection} {KAFKA_PARTITIONS} {KAFKA_BROKERS}")
        reader = MQTTReader(mqtt, work / "mqtt.jsonl", work / "mqtt-reader.log")
        initial_keys = {collection: item_keys(directus, collection) for collection in COLLECTIONS}
        for first in range(0, args.items, 500):
            call(f"{directus}/items/articles", [{"title": f"item {n}", "status": "published"}
                                                 for n in range(first, min(first + 500, args.items))],
                 token="admin-static-token", timeout=120)
        operations = free_port()
        config = work / "bridge.yaml"
        write_config(config, directus_port, nats, kafka, redis, mqtt, amqp, operations)
        watcher = Watcher(operations)

        def start_bridge(number: int) -> subprocess.Popen:
            process = subprocess.Popen([args.bridge, "run", "--config", str(config)], stdout=subprocess.DEVNULL,
                                       stderr=(work / f"bridge-{number}.log").open("wb"))
            watcher.pid = process.pid
            log(f"bridge {number} started, pid {process.pid}")
            return process

        def lines() -> int:
            try:
                with open(work / "events.ndjson", "rb") as file:
                    return sum(chunk.count(b"\n") for chunk in iter(lambda: file.read(1 << 20), b""))
            except OSError:
                return 0

        def wait(seconds: float) -> None:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                if bridge is not None and bridge.poll() is not None:
                    raise SystemExit(f"scale: the bridge exited with {bridge.returncode}")
                time.sleep(0.25)

        def phase(name: str, begin: float) -> None:
            phases.append({"phase": name, "from": round(begin, 1), "to": round(time.monotonic() - START, 1)})
            log(f"phase done: {name}")

        bridge = start_bridge(1)
        while lines() == 0:
            wait(0.2)
        call(f"{directus}/_emulator/generator", {"collection": "articles", "count": -1,
                                                  "interval_ms": args.interval_ms, "kind": "mixed"})
        call(f"{directus}/_emulator/generator", {"collection": "comments", "count": -1, "interval_ms": 50,
                                                  "kind": "mixed"})
        log("generators started")
        while lines() < args.kill_at_lines:
            wait(0.1)
        begin = time.monotonic() - START
        bridge.send_signal(signal.SIGKILL)
        bridge.wait()
        log(f"bridge SIGKILLed with {lines()} lines in the file")
        amqp_before = take_amqp(amqp)
        before = {"file": read_file(work / "events.ndjson"), "stream": read_stream(nats),
                  "redis": read_redis(redis), "amqp": amqp_before, "mqtt": read_mqtt(reader)}
        before["kafka"] = [parse_event(m["value"]) for m in subprocess_kafka_idle(kafka)]
        (work / "before-kill.json").write_text(json.dumps({s: len(r) for s, r in before.items()}))
        log("read back at the kill: " + ", ".join(f"{s} {len(r)}" for s, r in before.items()))
        amqp_kept = list(amqp_before)
        bridge = start_bridge(2)
        phase("SIGKILL mid-snapshot, read back, restart", begin)
        wait(5)

        begin = time.monotonic() - START
        os.kill(redis.pid, signal.SIGSTOP)
        amqp.pause()
        for broker in range(1, KAFKA_BROKERS + 1):
            kafka.command(f"down {broker}")
        log("redis-server and rabbitmq's VM SIGSTOPped, every Kafka broker down")
        wait(fault)
        os.kill(redis.pid, signal.SIGCONT)
        amqp.resume()
        for broker in range(1, KAFKA_BROKERS + 1):
            kafka.command(f"up {broker}")
        phase("redis and rabbitmq hung (SIGSTOP), kafka down", begin)
        wait(5)

        begin = time.monotonic() - START
        nats.stop(signal.SIGKILL)
        os.kill(mqtt.pid, signal.SIGSTOP)
        log("nats-server SIGKILLed, mosquitto SIGSTOPped")
        wait(fault)
        nats.start()
        os.kill(mqtt.pid, signal.SIGCONT)
        phase("nats killed, mosquitto hung (inflight window full)", begin)
        wait(5)

        begin = time.monotonic() - START
        # Stopping the node gracefully takes a minute or more; it closes its connections first.
        stopping = threading.Thread(target=amqp.stop, args=(signal.SIGTERM,))
        stopping.start()
        log("rabbitmq-server stopping (SIGTERM)")
        resyncs = []
        for number in (1, 2):
            wait(3 if number == 1 else 20)
            call(f"{directus}/_emulator/delay-commit", {"collection": "articles", "delay_ms": 3000})
            time.sleep(0.3)
            result = subprocess.run([args.bridge, "resync", "articles", "--config", str(config)],
                                    capture_output=True, text=True, timeout=60)
            resyncs.append({"rc": result.returncode, "stderr": result.stderr.strip()[-400:],
                            "at": round(time.monotonic() - START, 1)})
            log(f"resync {number}: exit {result.returncode}")
        wait(20)
        stopping.join()
        amqp.start()
        phase("rabbitmq down; two resyncs", begin)
        wait(10)

        begin = time.monotonic() - START
        used = int(redis_cli(redis, "info", "memory").split("used_memory:")[1].split()[0])
        redis_cli(redis, "config", "set", "maxmemory-policy", "noeviction")
        redis_cli(redis, "config", "set", "maxmemory", str(used + 256 * 1024))
        rabbitmqctl(amqp, work / "rabbitmq", "set_vm_memory_high_watermark", "0.00001")
        stored = json.loads(subprocess.run(
            [sys.executable, "-c", "import asyncio, nats, sys\n"
             "async def main():\n c = await nats.connect(sys.argv[1]); js = c.jetstream()\n"
             " print((await js.stream_info(sys.argv[2])).state.messages); await c.close()\n"
             "asyncio.run(main())", nats.url, STREAM], capture_output=True, text=True, check=True).stdout)
        nats_admin("set-max-msgs", nats.url, STREAM, str(stored + 200))
        log(f"redis maxmemory {used + 256 * 1024} noeviction, rabbitmq memory alarm, stream max_msgs {stored + 200}")
        wait(fault)
        redis_cli(redis, "config", "set", "maxmemory", "0")
        rabbitmqctl(amqp, work / "rabbitmq", "set_vm_memory_high_watermark", "0.4")
        nats_admin("set-max-msgs", nats.url, STREAM, str(STREAM_ROOM))
        phase("redis maxmemory, rabbitmq memory alarm, stream max_msgs", begin)
        begin = time.monotonic() - START
        mqtt.stop(signal.SIGTERM)
        wait(15)
        mqtt.start()
        phase("mosquitto stopped (SIGTERM) and started", begin)
        wait(20)

        call(f"{directus}/_emulator/generator/stop", {})
        log("generators stopped; waiting for every sink to catch up")
        begin = time.monotonic() - START
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            picked = watcher.metrics[-1][1] if watcher.metrics else {}
            lag = [v for k, v in picked.items() if k.startswith("directus_bridge_sink_lag_rows")]
            running = [v for k, v in picked.items() if k.startswith("directus_bridge_snapshot_running")]
            if watcher.metrics and watcher.metrics[-1][0] > begin + 6 and lag and not any(lag) and not any(running):
                break
            wait(1)
        phase("catch-up", begin)
        wait(3)
        rows = recorded_rows(directus)
        bridge.send_signal(signal.SIGTERM)
        exit_status = bridge.wait(timeout=120)
        log(f"bridge exited {exit_status}")
        watcher.stopped = True

        record = Record(rows, initial_keys)
        got = {"file": read_file(work / "events.ndjson")}
        per_collection = Counter(c for _, c, _ in got["file"])
        got["kafka"], kafka_truncated = read_kafka(kafka, {c: per_collection[c] for c in COLLECTIONS})
        got["stream"] = read_stream(nats)
        got["redis"] = read_redis(redis)
        got["amqp"] = amqp_kept + take_amqp(amqp)
        time.sleep(2)
        got["mqtt"] = read_mqtt(reader)
        watermarks = sorted({parse_snapshot(r[0])[2] for r in got["file"] if parse_snapshot(r[0])})
        start = watermarks[0]
        report = {
            "items": args.items, "interval_ms": args.interval_ms, "fault_seconds": fault,
            "activity_rows": len(rows), "first_watermark": start, "watermarks": watermarks,
            "comment_rows_at_or_below_the_first_watermark": sum(
                1 for row in rows if row["collection"] == "comments" and row["id"] <= start),
            "bridge_exit_status": exit_status, "resyncs": resyncs, "phases": phases,
            "kafka_partitions_not_starting_at_0": kafka_truncated,
            "read_back_at_the_kill": {s: len(r) for s, r in before.items()},
            "sinks": {s: judge(got[s], record, start, {r[0] for r in before[s]}) for s in SINKS},
            "rss_kib": {"max": max(v for _, v in watcher.rss), "last": watcher.rss[-1][1],
                        "by_phase_max": {p["phase"]: max((v for t, v in watcher.rss if p["from"] <= t <= p["to"]),
                                                         default=0) for p in phases}},
            "readyz_by_phase": {p["phase"]: watcher.during(p["from"], p["to"]) for p in phases},
            "log": log_summary([work / "bridge-1.log", work / "bridge-2.log"]),
        }
    finally:
        if watcher is not None:
            watcher.stopped = True
        if bridge is not None:
            stop(bridge)
        stop(emulator)
        amqp.resume()  # its VM, if a failed run left it hung (the wrapper script below is another process)
        for server in servers:
            if server.wrapper is not None:  # a hung one must run again to stop
                os.kill(server.pid, signal.SIGCONT)
            server.stop()
        kafka.stop()
        if reader is not None:
            stop(reader.process)
    (work / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    failed = [s for s, r in report["sinks"].items() if r["missing_changes"] or any(r["snapshot_items_missing"].values())
              or r["wrong_side_of_a_snapshot"] or r["out_of_activity_order"]]
    log("PASS" if not failed else f"FAIL: {failed}")
    return 0 if not failed else 1


def subprocess_kafka_idle(kafka: KafkaCluster) -> list[dict]:
    """What every topic holds now: read until nothing came for 3 s."""
    messages = []
    for collection in COLLECTIONS:
        result = subprocess.run([sys.executable, str(TOOLS / "broker_peers" / "kafka_read.py"), kafka.bootstrap,
                                 f"directus.{collection}", "100000000", "--timeout", "120", "--idle", "3"],
                                capture_output=True, text=True, timeout=240, check=True)
        messages += json.loads(result.stdout.splitlines()[-1])["messages"]
    return messages


if __name__ == "__main__":
    sys.exit(main())
