#!/usr/bin/env bash
# The demo, from a fresh Debian/Ubuntu machine: installs what is missing, builds the release binary, starts the
# bundled Directus emulator with sample data and a change generator, and runs the bridge against it with the
# repository's bridge.yaml. NDJSON lines appear on stdout (logs on stderr); Ctrl-C stops everything.
#
#   scripts/demo.sh                 # events as NDJSON
#   scripts/demo.sh 2>/dev/null | jq .   # pretty, without the logs
#   DEMO_RATE=20 scripts/demo.sh    # changes per second made by the generator (default 2)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
scripts/bootstrap.sh
export PATH="/opt/swift/usr/bin:$PATH"

echo "demo: building directus-bridge (release)…" >&2
swift build -c release --product directus-bridge 2>&1 | grep -E "error|warning: unre|Compiling BridgeCLI|Build complete" >&2 || true
BIN="$(swift build -c release --show-bin-path)/directus-bridge"
[[ -x "$BIN" ]] || { echo "demo: the build failed" >&2; exit 1; }

WORK="$(mktemp -d -t directus-bridge-demo.XXXXXX)"
cleanup() {
    [[ -n "${EMULATOR_PID:-}" ]] && kill "$EMULATOR_PID" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

.venv/bin/python -u Tests/tools/directus_emulator/server.py --port 0 --seed demo --generate "${DEMO_RATE:-2}" \
    --log-level warning >"$WORK/emulator.out" 2>"$WORK/emulator.err" &
EMULATOR_PID=$!
for _ in $(seq 1 100); do
    grep -q '^READY ' "$WORK/emulator.out" 2>/dev/null && break
    sleep 0.1
done
PORT="$(awk '/^READY /{print $2}' "$WORK/emulator.out")"
[[ -n "$PORT" ]] || { echo "demo: the emulator did not start:" >&2; cat "$WORK/emulator.err" >&2; exit 1; }
echo "demo: Directus emulator on http://127.0.0.1:$PORT (admin@example.com / admin-password); Ctrl-C stops" >&2

# The repository's bridge.yaml, pointed at the emulator; state (cursor, outbox) goes to a temporary directory.
export DIRECTUS_URL="http://127.0.0.1:$PORT" DIRECTUS_TOKEN="admin-static-token"
cd "$WORK"
cp "$ROOT/bridge.yaml" bridge.yaml
"$BIN" run --config bridge.yaml
