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
- every 4 minutes the NATS server behind the JetStream sink goes away for 10 s (SIGKILL and SIGTERM by turns) and
  comes back on the same port with the same store (short runs: every 45 s).

Every 10 s it samples the bridge's resident memory, open descriptors (each one by kind: TCP sockets by peer and
state, files by path) and threads from /proc. At the end it stops the generator, waits until both sinks have caught
up (or 3 minutes), stops the bridge with SIGTERM and reconciles every change Directus recorded (its activity log)
against what each sink got (the NDJSON file, the webhook receiver's requests, the JetStream stream read back):
lost, duplicate and unexpected event ids per sink. The report goes to stdout and to
DIR/report.json; the exit status is 0 only when nothing was lost, every NDJSON line parsed, the bridge exited 0,
memory grew less than 10 % after the warm-up, descriptors other than webhook connections and threads stayed flat,
and webhook connections stayed within the sink's max_in_flight.
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
LONG_TIMETABLE = {"drop": (180, 90), "down": (120, 45), "503": (120, 105), "nats": (240, 60)}
SHORT_TIMETABLE = {"drop": (30, 15), "down": (40, 10), "503": (40, 30), "nats": (45, 20)}
FLAP_DOWN_MS = 15_000
NATS_DOWN_SECONDS = 10
STREAM = "DIRECTUS"
CATCH_UP_SECONDS = 180
# Slack for "flat": descriptors and threads may differ by this much between the first and the last stretch of the
# run (webhook connections open and close with the flaps; a reconnect may be in progress at a sample).
FD_SLACK = 4
THREAD_SLACK = 2
# The webhook sink's concurrent requests (its default). After a receiver outage the backlog goes out on up to this
# many connections at once, and libcurl keeps them open for reuse (its connection cache holds as many) until the
# receiver closes them: webhook connections are bounded by this, not flat, and are checked apart from the rest.
WEBHOOK_MAX_IN_FLIGHT = 32


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


class NATSServer:
    """nats-server with JetStream on one port and one store directory, started again on the same ones after a kill.
    Runs under Tests/tools/broker_peers/nats_server.py, which takes it down if this script dies."""

    def __init__(self, port: int, store: Path, log_file: Path):
        self.binary = shutil.which("nats-server") or "/usr/sbin/nats-server"
        self.port, self.store, self.log_file = port, store, log_file
        self.wrapper: subprocess.Popen | None = None
        self.pid = 0

    def start(self) -> None:
        self.wrapper = subprocess.Popen(
            [sys.executable, "-u", str(TOOLS / "broker_peers" / "nats_server.py"), self.binary,
             "-a", "127.0.0.1", "-p", str(self.port), "-js", "-sd", str(self.store)],
            stdout=subprocess.PIPE, stderr=self.log_file.open("ab"), text=True)
        self.pid = int(self.wrapper.stdout.readline().split()[1])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise SystemExit(f"soak: nats-server did not listen on {self.port} (see {self.log_file})")

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

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"


def nats_admin(*arguments: str, timeout: float = 300) -> str:
    result = subprocess.run([sys.executable, str(TOOLS / "broker_peers" / "nats_admin.py"), *arguments],
                            capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise SystemExit(f"soak: nats_admin.py {arguments[0]} failed: {result.stderr.strip()}")
    return result.stdout


def stream_ids(nats: NATSServer) -> list[str]:
    """The `Nats-Msg-Id` (the event id) of every message in the stream, in stream order."""
    return [m["msg_id"] for m in json.loads(nats_admin("read-stream", nats.url, STREAM))["messages"]]


def write_config(path: Path, directus: int, hook: int, nats: int, metrics: int, work: Path) -> None:
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
    max_attempts: 1000
    retry_schedule: [500ms, 1s, 2s, 5s]
  - type: jetstream
    servers: ["nats://127.0.0.1:{nats}"]
    subject: "directus.{{collection}}.{{event}}"
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


def expected_ids(directus: str) -> set[str]:
    """`act_<id>` for every activity row Directus recorded on the subscribed collections."""
    query = ("/activity?limit=-1&fields=id&sort=id"
             f"&filter[collection][_in]={','.join(COLLECTIONS)}&filter[action][_in]=create,update,delete")
    rows = call(directus + query, token="admin-static-token", timeout=120)["data"]
    return {f"act_{row['id']}" for row in rows}


def reconcile(expected: set[str], got: list[str]) -> dict:
    counts = Counter(got)
    return {
        "received": len(got),
        "unique": len(counts),
        "lost": len(expected - counts.keys()),
        "lost_examples": sorted(expected - counts.keys())[:10],
        "duplicate_ids": sum(1 for n in counts.values() if n > 1),
        "duplicate_deliveries": sum(n - 1 for n in counts.values() if n > 1),
        "unexpected": len(counts.keys() - expected),
    }


def metrics(url: str) -> dict[str, float]:
    """Unlabelled and summed samples of the bridge's /metrics, by name."""
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            text = answer.read().decode()
    except OSError:
        return {}
    values: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name_part, _, value = line.rpartition(" ")
        name = name_part.split("{", 1)[0]
        try:
            values[name] = values.get(name, 0.0) + float(value)
        except ValueError:
            pass
    return values


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
    directus = f"http://127.0.0.1:{directus_port}"
    control = f"http://127.0.0.1:{control_port}"
    hook_port = call(f"{control}/_control/info")["hook_port"]
    metrics_port = free_port()
    metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"
    config = work / "bridge.yaml"
    write_config(config, directus_port, hook_port, nats.port, metrics_port, work)

    peers = {directus_port: "directus", hook_port: "webhook", nats.port: "nats", metrics_port: "metrics"}
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
        nats_back_at: float | None = None
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
            if "nats" in due and nats_back_at is None:
                kill = faults["nats_outages"] % 2 == 0
                nats.stop(signal.SIGKILL if kill else signal.SIGTERM)
                nats_back_at = now + NATS_DOWN_SECONDS
                faults["nats_outages"] += 1
                log(f"nats-server {'killed' if kill else 'stopped'} for {NATS_DOWN_SECONDS} s")
            if nats_back_at is not None and now >= nats_back_at:
                nats.start()
                nats_back_at = None
                log("nats-server back")
            if not hup_done and now - start >= duration / 2:
                (work / "events.ndjson").rename(work / "events.ndjson.1")
                bridge.send_signal(signal.SIGHUP)
                hup_done = True
                faults["sighup"] += 1
                log("moved events.ndjson away, sent SIGHUP")
            time.sleep(0.2)

        if nats_back_at is not None:
            nats.start()
        call(f"{directus}/_emulator/generator/stop", {})
        generated = call(f"{directus}/_emulator/generator")["jobs"]
        expected = expected_ids(directus)
        log(f"generator stopped: {len(expected)} changes recorded; waiting for the sinks to catch up")
        ndjson_paths = [work / "events.ndjson.1", work / "events.ndjson"]
        catch_up_start = time.monotonic()
        while True:
            file_ids, _ = ndjson_ids(ndjson_paths)
            hook_ids, _ = webhook_ids(control)
            missing = len(expected - set(file_ids)) + len(expected - set(hook_ids))
            if missing == 0:
                missing = len(expected - set(stream_ids(nats)))
            if missing == 0 or time.monotonic() - catch_up_start > CATCH_UP_SECONDS:
                break
            time.sleep(2)
        catch_up = time.monotonic() - catch_up_start
        final_metrics = metrics(metrics_url)
        samples.append(sample(bridge.pid, peers))
        emulator_stats = call(f"{directus}/_emulator/stats")
        stop(bridge)
        hook_ids, hook_requests = webhook_ids(control)
        file_ids, malformed = ndjson_ids(ndjson_paths)
        jetstream_ids = stream_ids(nats)
    finally:
        stop(bridge)
        for peer in (emulator, receiver):
            stop(peer)
        nats.stop()

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
        "ndjson": {**reconcile(expected, file_ids), "malformed_lines": malformed,
                   "lines_after_sighup": len(ndjson_ids([work / "events.ndjson"])[0])},
        "webhook": {**reconcile(expected, hook_ids), "requests": hook_requests},
        "jetstream": reconcile(expected, jetstream_ids),
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
        "log_levels": dict(levels),
        "frequent_warnings_and_errors": dict(messages.most_common(12)),
    }
    failures = []
    for sink in ("ndjson", "webhook", "jetstream"):
        if report[sink]["lost"]:
            failures.append(f"{sink} lost {report[sink]['lost']} changes")
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
