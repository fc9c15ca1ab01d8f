#!/usr/bin/env bash
# Soak test: the release binary against the bundled Directus emulator for MINUTES (default 30) at a steady change
# rate, with token expiry every minute, socket drops every 3 minutes, a flapping webhook receiver, a JetStream
# sink whose nats-server goes away every 4 minutes, a Kafka sink on librdkafka's mock cluster (a broker down for
# 10 s every 4 minutes, leader changes every 3, bursts of retriable produce errors every 2), Redis, MQTT and AMQP
# sinks whose redis-server, mosquitto and rabbitmq-server each go away every 4 minutes, and a SIGHUP;
# then every change Directus recorded is reconciled against what each sink got, and resident memory, open
# descriptors and threads (sampled every 10 s) are checked for growth. See docs/RELIABILITY.md "Soak" and
# scripts/lib/soak.py for the timetable and the pass criteria.
# Usage: scripts/soak.sh [MINUTES]     (SOAK_RATE: changes per second, default 4; BRIDGE_BINARY: skip the build)
# The report is printed and kept with the logs in .build-soak/<time>/ (report.json, bridge.log, events.ndjson*).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="/opt/swift/usr/bin:$PATH"

MINUTES="${1:-30}"
BIN="${BRIDGE_BINARY:-}"
if [[ -z "$BIN" ]]; then
    echo "== soak: building directus-bridge (release)" >&2
    swift build -c release --product directus-bridge >&2
    BIN="$(swift build -c release --show-bin-path)/directus-bridge"
fi
WORK=".build-soak/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$WORK"
echo "== soak: $MINUTES minutes, logs in $WORK" >&2
exec .venv/bin/python -u scripts/lib/soak.py --minutes "$MINUTES" --bridge "$BIN" --work "$ROOT/$WORK" \
    --rate "${SOAK_RATE:-4}"
