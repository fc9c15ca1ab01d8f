#!/usr/bin/env bash
# Installs the .deb on a fresh Debian bookworm root, not on this machine, and runs it there:
#   1. a minimal root made by debootstrap (cached in .cache/package-test/bookworm, copied afresh for every run);
#   2. `apt-get install ./directus-bridge_….deb` inside a chroot (the dependencies come from the Debian mirror);
#   3. the binary, user, state directory, files and permissions the package promises;
#   4. `directus-bridge --version`, `validate` on the shipped /etc/directus-bridge/bridge.yaml, `check` and a short
#      `run` as the directus-bridge user against the Directus emulator on the host's loopback (a chroot shares the
#      host's network): /readyz, one created article arriving as an NDJSON line, SIGTERM → exit 0;
#   5. a reinstall (keeps edited conffiles and the state), then `apt-get purge` (removes state, config, user).
# Prints one line per check, `ok   <what>` or `FAIL <what>`, and exits 1 when any failed.
# Needs root (debootstrap, chroot, mount) and the Debian mirror (DEBIAN_MIRROR, default: this machine's apt source).
# Usage: scripts/test-package.sh [PATH.deb]   (default: the .deb scripts/package.sh left in dist/)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
[[ "$(id -u)" == 0 ]] || { echo "test-package: needs root (debootstrap, chroot): sudo $0 $*" >&2; exit 1; }
scripts/bootstrap.sh --package >&2
source scripts/lib/package-test.sh

DEB="${1:-$(ls dist/directus-bridge_*.deb 2>/dev/null | tail -n 1)}"
[[ -f "$DEB" ]] || { echo "test-package: no .deb; run scripts/package.sh first" >&2; exit 1; }
DEB="$(cd "$(dirname "$DEB")" && pwd)/$(basename "$DEB")"
CACHE="$ROOT/.cache/package-test"
BASE="$CACHE/bookworm"
WORK="$CACHE/run"

note "package: $(basename "$DEB")"
make_base_root "$BASE"
fresh_copy "$BASE" "$WORK"
trap 'cleanup_run "$WORK"' EXIT
in_root() { chroot "$WORK" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }

# --- Install -----------------------------------------------------------------------------------------------------
cp "$DEB" "$WORK/tmp/"
started=$SECONDS
install_output="$(install_deb "$WORK" "/tmp/$(basename "$DEB")" 2>&1)" \
    && pass "apt-get install ./$(basename "$DEB") in a fresh bookworm chroot ($((SECONDS - started)) s)" \
    || { echo "$install_output" >&2; fail "apt-get install ./$(basename "$DEB")"; exit 1; }
new_packages="$(sed -n 's/^Setting up \([^ ]*\) .*/\1/p' <<<"$install_output" | tr '\n' ' ')"
note "apt-get set up: $new_packages"

# --- What the package promises -------------------------------------------------------------------------------------
expect "no Swift toolchain in the root, every linked library resolved" \
    sh -c "[ ! -e '$WORK/opt/swift' ] && ! chroot '$WORK' ldd /usr/bin/directus-bridge | grep -q 'not found'"
version="$(in_root directus-bridge --version)"
expect "directus-bridge --version: $version" grep -q '^directus-bridge [0-9]' <<<"$version"
expect "system user directus-bridge (nologin, home /var/lib/directus-bridge)" \
    sh -c "chroot '$WORK' getent passwd directus-bridge | grep -q ':/var/lib/directus-bridge:/usr/sbin/nologin$'"
expect "state directory /var/lib/directus-bridge: directus-bridge, 0700" \
    test "$(in_root stat -c '%U:%G %a' /var/lib/directus-bridge)" = "directus-bridge:directus-bridge 700"
expect "/etc/directus-bridge/bridge.yaml: root:directus-bridge, 0640" \
    test "$(in_root stat -c '%U:%G %a' /etc/directus-bridge/bridge.yaml)" = "root:directus-bridge 640"
expect "/etc/directus-bridge/secrets.env: root:root, 0600" \
    test "$(in_root stat -c '%U:%G %a' /etc/directus-bridge/secrets.env)" = "root:root 600"
expect "/etc/directus-bridge/directus-token (LoadCredential=): root:root, 0600" \
    test "$(in_root stat -c '%U:%G %a' /etc/directus-bridge/directus-token)" = "root:root 600"
UNIT="$WORK/lib/systemd/system/directus-bridge.service"
for setting in LimitCORE=0 MemoryMax= TasksMax= LoadCredential=directus-token:/etc/directus-bridge/directus-token; do
    expect "unit sets $setting" grep -q "^$setting" "$UNIT"
done
if command -v systemd-analyze >/dev/null; then
    exposure="$(systemd-analyze security --offline=true "$UNIT" 2>/dev/null \
        | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')"
    expect "systemd-analyze security: exposure $exposure (at most 1.5)" \
        awk -v level="${exposure:-99}" 'BEGIN { exit !(level <= 1.5) }'
fi
expect "systemd unit, man page directus-bridge(1) and Grafana dashboard installed" \
    test -f "$WORK/lib/systemd/system/directus-bridge.service" -a -f "$WORK/usr/share/man/man1/directus-bridge.1.gz" \
        -a -f "$WORK/usr/share/directus-bridge/grafana/directus-bridge.json"
expect "bash and zsh completions installed" \
    test -f "$WORK/usr/share/bash-completion/completions/directus-bridge" \
        -a -f "$WORK/usr/share/zsh/vendor-completions/_directus-bridge"
# As the unit runs it: the service user and its group, nothing inherited from this shell but what "env" adds.
as_bridge() { in_root setpriv --reuid=directus-bridge --regid=directus-bridge --init-groups env "$@"; }
validate_output="$(as_bridge DIRECTUS_TOKEN=example directus-bridge validate \
    --config /etc/directus-bridge/bridge.yaml 2>&1)" || true
expect "validate --config /etc/directus-bridge/bridge.yaml (as directus-bridge): $validate_output" \
    test "$validate_output" = ok
# The token through LoadCredential= instead, as the unit describes it: systemd copies the file into a directory
# only the service reads and names it in CREDENTIALS_DIRECTORY.
CREDENTIALS=/run/credentials/directus-bridge.service
install -d -m 0700 "$WORK$CREDENTIALS"
printf 'example\n' | install -m 0400 /dev/stdin "$WORK$CREDENTIALS/directus-token"
in_root chown -R directus-bridge:directus-bridge "$CREDENTIALS"
TOKEN_FILE='token_file: ${CREDENTIALS_DIRECTORY:-/etc/directus-bridge}/directus-token'
sed "s|^\( *\)token: \${DIRECTUS_TOKEN}.*|\1$TOKEN_FILE|" \
    "$WORK/etc/directus-bridge/bridge.yaml" >"$WORK/tmp/credential.yaml"
chmod 0644 "$WORK/tmp/credential.yaml"
credential_output="$(as_bridge CREDENTIALS_DIRECTORY="$CREDENTIALS" directus-bridge validate \
    --config /tmp/credential.yaml 2>&1)" || true
expect "validate with token_file from \$CREDENTIALS_DIRECTORY (as directus-bridge): $credential_output" \
    sh -c "grep -q 'token_file: \${CREDENTIALS_DIRECTORY' '$WORK/tmp/credential.yaml' && test '$credential_output' = ok"

# --- Against the emulator on the host's loopback ---------------------------------------------------------------
start_emulator "$WORK/tmp"
LISTEN_PORT="$(free_port)"
# What an administrator does: the address and token go into secrets.env, nothing else changes.
cat >>"$WORK/etc/directus-bridge/secrets.env" <<EOF
DIRECTUS_URL=http://127.0.0.1:$EMULATOR_PORT
DIRECTUS_TOKEN=admin-static-token
DIRECTUS_BRIDGE_LISTEN=127.0.0.1:$LISTEN_PORT
EOF
# Like the unit: root reads secrets.env (0600), the bridge runs as its user, in its state directory, with those
# variables. An array, not a function, so that `"${AS_SERVICE[@]}" … &` leaves the bridge's own pid in $!.
AS_SERVICE=(chroot "$WORK" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 sh -c
    'set -a; . /etc/directus-bridge/secrets.env; set +a; cd /var/lib/directus-bridge &&
    exec setpriv --reuid=directus-bridge --regid=directus-bridge --init-groups "$@"' sh)
check_status=0
check_output="$("${AS_SERVICE[@]}" directus-bridge check --config /etc/directus-bridge/bridge.yaml 2>/dev/null)" \
    || check_status=$?
sed 's/^/       check: /' <<<"$check_output"
expect "check against the emulator: exit $check_status, $(grep -c '^ok ' <<<"$check_output") ok lines" \
    test "$check_status" = 0

# `run` exactly as the unit starts it (user, working directory, config), stdout to a file instead of the journal.
"${AS_SERVICE[@]}" directus-bridge run --config /etc/directus-bridge/bridge.yaml \
    >"$WORK/tmp/bridge.ndjson" 2>"$WORK/tmp/bridge.log" &
BRIDGE_PID=$!
expect "run: /readyz answers 200 on 127.0.0.1:$LISTEN_PORT" wait_for_ready "http://127.0.0.1:$LISTEN_PORT/readyz" 60
expect "run: the bridge is not dumpable (its /proc files are root's) and may write no core" \
    sh -c "[ \"\$(stat -c %u /proc/$BRIDGE_PID/status)\" = 0 ] && \
        grep -Eq '^Max core file size +0 +0 ' /proc/$BRIDGE_PID/limits"
title="package test $(date +%s%N)"
expect "a created article reaches the NDJSON sink" create_article_and_wait "$title" "$WORK/tmp/bridge.ndjson" 30
note "line: $(grep -F "$title" "$WORK/tmp/bridge.ndjson" | head -n 1)"
expect "/metrics serves directus_bridge_build_info" \
    grep -q '^directus_bridge_build_info{' <<<"$(metrics_text "http://127.0.0.1:$LISTEN_PORT/metrics")"
terminate "$BRIDGE_PID" "$BRIDGE_PID"
BRIDGE_PID=""
expect "run: SIGTERM → exit $EXIT_STATUS" test "$EXIT_STATUS" = 0
state_files="$(in_root find /var/lib/directus-bridge -type f -printf '%f %u %m\n' | sort | tr '\n' ' ')"
expect "state written by the service user, files 0600: $state_files" \
    sh -c "[ -f '$WORK/var/lib/directus-bridge/cursor.db' ] && [ -z \"\$(chroot '$WORK' find /var/lib/directus-bridge \
        -type f \\( ! -user directus-bridge -o ! -perm 600 \\))\" ]"
sed 's/^/       log: /' "$WORK/tmp/bridge.log" | head -n 12

# --- Reinstall, then purge ---------------------------------------------------------------------------------------
reinstall_output="$(in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --reinstall \
    "/tmp/$(basename "$DEB")" 2>&1)" || { echo "$reinstall_output" >&2; fail "apt-get install --reinstall"; }
expect "reinstall keeps the edited secrets.env and the state (maintainer scripts run twice)" \
    sh -c "grep -q '^DIRECTUS_TOKEN=admin-static-token' '$WORK/etc/directus-bridge/secrets.env' && \
        ls '$WORK/var/lib/directus-bridge/'*.db >/dev/null"
purge_output="$(in_root env DEBIAN_FRONTEND=noninteractive apt-get purge -y directus-bridge 2>&1)" \
    || { echo "$purge_output" >&2; fail "apt-get purge"; }
expect "purge removes /var/lib/directus-bridge, /etc/directus-bridge and the user" \
    sh -c "[ ! -e '$WORK/var/lib/directus-bridge' ] && [ ! -e '$WORK/etc/directus-bridge' ] && \
        ! chroot '$WORK' getent passwd directus-bridge >/dev/null && ! chroot '$WORK' getent group directus-bridge >/dev/null"

summary
