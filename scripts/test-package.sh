#!/usr/bin/env bash
# Installs the .deb on a fresh Debian bookworm root, not on this machine, and runs it there:
#   1. a minimal root made by debootstrap (cached in .cache/package-test/bookworm, copied afresh for every run);
#   2. `apt-get install ./directus-bridge_….deb` inside a chroot (the dependencies come from the Debian mirror);
#   3. the binary, user, state and events directories, files and permissions the package promises;
#   4. `directus-bridge --version`, `validate` on the shipped /etc/directus-bridge/bridge.yaml (the token from
#      $CREDENTIALS_DIRECTORY as LoadCredential= lays it out, and switched to DIRECTUS_TOKEN from secrets.env), `check`
#      and a short `run` as the directus-bridge user against the Directus emulator on the host's loopback (a chroot
#      shares the host's network): /readyz, one created article arriving as a line of
#      /var/log/directus-bridge/events.ndjson and nothing on stdout (the journal), a rotation by the shipped
#      logrotate snippet and SIGHUP, SIGTERM → exit 0;
#   5. a reinstall (keeps edited conffiles and the state), an upgrade from the layout with DIRECTUS_TOKEN in
#      secrets.env (the postinst copies it into directus-token), then `apt-get purge` (removes state, events, config,
#      user).
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
expect "events directory /var/log/directus-bridge: directus-bridge, 0700" \
    test "$(in_root stat -c '%U:%G %a' /var/log/directus-bridge)" = "directus-bridge:directus-bridge 700"
expect "/etc/logrotate.d/directus-bridge: root:root, 0644, a conffile" \
    sh -c "[ \"\$(chroot '$WORK' stat -c '%U:%G %a' /etc/logrotate.d/directus-bridge)\" = 'root:root 644' ] && \
        grep -qx /etc/logrotate.d/directus-bridge '$WORK/var/lib/dpkg/info/directus-bridge.conffiles'"
expect "/etc/directus-bridge/bridge.yaml: root:directus-bridge, 0640" \
    test "$(in_root stat -c '%U:%G %a' /etc/directus-bridge/bridge.yaml)" = "root:directus-bridge 640"
expect "/etc/directus-bridge/secrets.env: root:root, 0600" \
    test "$(in_root stat -c '%U:%G %a' /etc/directus-bridge/secrets.env)" = "root:root 600"
expect "/etc/directus-bridge/directus-token (LoadCredential=): root:root, 0600" \
    test "$(in_root stat -c '%U:%G %a' /etc/directus-bridge/directus-token)" = "root:root 600"
UNIT="$WORK/lib/systemd/system/directus-bridge.service"
for setting in LimitCORE=0 MemoryMax= TasksMax= LoadCredential=directus-token:/etc/directus-bridge/directus-token \
    LogsDirectory=directus-bridge LogsDirectoryMode=0700 StateDirectoryMode=0700; do
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
CONFIG=/etc/directus-bridge/bridge.yaml
expect "the shipped bridge.yaml reads the token from \$CREDENTIALS_DIRECTORY and writes events to /var/log" \
    sh -c "grep -q '^ *token_file: \${CREDENTIALS_DIRECTORY:-/etc/directus-bridge}/directus-token\$' '$WORK$CONFIG' && \
        grep -q '^ *path: \${DIRECTUS_BRIDGE_NDJSON_PATH:-/var/log/directus-bridge/events.ndjson}\$' '$WORK$CONFIG'"
# The token file as installed is empty: `validate` (as root, the way `check` is run by hand) names it.
empty_status=0
empty_output="$(in_root directus-bridge validate --config $CONFIG 2>&1)" || empty_status=$?
names_the_token_file() { [[ "$empty_status" == 78 && "$empty_output" == *directus.auth.token_file* ]]; }
expect "validate before the token is set: exit $empty_status, $empty_output" names_the_token_file
# The token through LoadCredential=, as the unit hands it over: systemd copies the file into a directory only the
# service reads and names it in CREDENTIALS_DIRECTORY.
CREDENTIALS=/run/credentials/directus-bridge.service
install -d -m 0700 "$WORK$CREDENTIALS"
printf 'example\n' | install -m 0400 /dev/stdin "$WORK$CREDENTIALS/directus-token"
in_root chown -R directus-bridge:directus-bridge "$CREDENTIALS"
validate_output="$(as_bridge CREDENTIALS_DIRECTORY="$CREDENTIALS" directus-bridge validate --config $CONFIG 2>&1)" || true
expect "validate $CONFIG as directus-bridge, the token from \$CREDENTIALS_DIRECTORY: $validate_output" \
    test "$validate_output" = ok
# The switch the README describes for those who keep the token in secrets.env (DIRECTUS_TOKEN=…).
sed "s|^\( *\)token_file: \${CREDENTIALS_DIRECTORY.*|\1token: \${DIRECTUS_TOKEN}|" "$WORK$CONFIG" \
    >"$WORK/tmp/environment.yaml"
chmod 0644 "$WORK/tmp/environment.yaml"
environment_output="$(as_bridge DIRECTUS_TOKEN=example directus-bridge validate --config /tmp/environment.yaml 2>&1)" \
    || true
expect "validate with token: \${DIRECTUS_TOKEN} in its place (secrets.env): $environment_output" \
    sh -c "grep -q '^ *token: \${DIRECTUS_TOKEN}\$' '$WORK/tmp/environment.yaml' && test '$environment_output' = ok"

# --- Against the emulator on the host's loopback ---------------------------------------------------------------
start_emulator "$WORK/tmp"
LISTEN_PORT="$(free_port)"
# What an administrator does: the token into directus-token, the address into secrets.env, nothing else changes.
printf 'admin-static-token\n' >"$WORK/etc/directus-bridge/directus-token"
cat >>"$WORK/etc/directus-bridge/secrets.env" <<EOF
DIRECTUS_URL=http://127.0.0.1:$EMULATOR_PORT
DIRECTUS_BRIDGE_LISTEN=127.0.0.1:$LISTEN_PORT
EOF
# Like the unit: root reads secrets.env (0600) and copies directus-token into the credentials directory
# (LoadCredential=), the bridge runs as its user, in its state directory, with those variables. An array, not a
# function, so that `"${AS_SERVICE[@]}" … &` leaves the bridge's own pid in $!.
AS_SERVICE=(chroot "$WORK" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 sh -c
    'set -a; . /etc/directus-bridge/secrets.env; set +a; C=/run/credentials/directus-bridge.service &&
    install -m 0400 -o directus-bridge -g directus-bridge /etc/directus-bridge/directus-token $C/directus-token &&
    export CREDENTIALS_DIRECTORY=$C && cd /var/lib/directus-bridge &&
    exec setpriv --reuid=directus-bridge --regid=directus-bridge --init-groups "$@"' sh)
check_status=0
check_output="$("${AS_SERVICE[@]}" directus-bridge check --config /etc/directus-bridge/bridge.yaml 2>/dev/null)" \
    || check_status=$?
sed 's/^/       check: /' <<<"$check_output"
expect "check against the emulator: exit $check_status, $(grep -c '^ok ' <<<"$check_output") ok lines" \
    test "$check_status" = 0

# `run` exactly as the unit starts it (user, working directory, config); stdout is what the journal would get.
EVENTS=/var/log/directus-bridge/events.ndjson
"${AS_SERVICE[@]}" directus-bridge run --config /etc/directus-bridge/bridge.yaml \
    >"$WORK/tmp/bridge.stdout" 2>"$WORK/tmp/bridge.log" &
BRIDGE_PID=$!
expect "run: /readyz answers 200 on 127.0.0.1:$LISTEN_PORT" wait_for_ready "http://127.0.0.1:$LISTEN_PORT/readyz" 60
expect "run: the bridge is not dumpable (its /proc files are root's) and may write no core" \
    sh -c "[ \"\$(stat -c %u /proc/$BRIDGE_PID/status)\" = 0 ] && \
        grep -Eq '^Max core file size +0 +0 ' /proc/$BRIDGE_PID/limits"
title="package test $(date +%s%N)"
expect "a created article reaches $EVENTS" create_article_and_wait "$title" "$WORK$EVENTS" 30
note "line: $(grep -F "$title" "$WORK$EVENTS" | head -n 1)"
expect "$EVENTS: directus-bridge, 0600; nothing on stdout (the journal gets the logs only)" \
    sh -c "[ \"\$(chroot '$WORK' stat -c '%U:%G %a' $EVENTS)\" = 'directus-bridge:directus-bridge 600' ] && \
        [ ! -s '$WORK/tmp/bridge.stdout' ]"
expect "/metrics serves directus_bridge_build_info" \
    grep -q '^directus_bridge_build_info{' <<<"$(metrics_text "http://127.0.0.1:$LISTEN_PORT/metrics")"

# A rotation as cron's logrotate makes it with the shipped snippet. Its postrotate (systemctl reload) finds no
# systemd in a chroot, so the SIGHUP that ExecReload= would send is sent here; the bridge then creates a new file.
logrotate_output="$(in_root sh -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    logrotate >/dev/null 2>&1 && logrotate -f /etc/logrotate.d/directus-bridge' 2>&1)" \
    || { echo "$logrotate_output" >&2; fail "logrotate -f /etc/logrotate.d/directus-bridge"; }
expect "logrotate moved events.ndjson to events.ndjson.1 (as directus-bridge), the line in it" \
    sh -c "[ ! -e '$WORK$EVENTS' ] && grep -qF '$title' '$WORK$EVENTS.1' && \
        [ \"\$(chroot '$WORK' stat -c %U $EVENTS.1)\" = directus-bridge ]"
kill -HUP "$BRIDGE_PID"
expect "SIGHUP: the bridge creates a new $EVENTS (directus-bridge, 0600)" \
    sh -c "for _ in \$(seq 300); do [ -e '$WORK$EVENTS' ] && break; sleep 0.1; done; \
        [ \"\$(chroot '$WORK' stat -c '%U:%G %a' $EVENTS)\" = 'directus-bridge:directus-bridge 600' ]"
rotated_title="package test after rotation $(date +%s%N)"
reaches_the_new_file() {
    create_article_and_wait "$rotated_title" "$WORK$EVENTS" 30 && ! grep -qF "$rotated_title" "$WORK$EVENTS.1"
}
expect "the next article reaches the new file, not the rotated one" reaches_the_new_file
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
expect "reinstall keeps the edited secrets.env and directus-token, the state and the events" \
    sh -c "grep -q '^DIRECTUS_URL=http://127.0.0.1:$EMULATOR_PORT' '$WORK/etc/directus-bridge/secrets.env' && \
        grep -qx admin-static-token '$WORK/etc/directus-bridge/directus-token' && \
        ls '$WORK/var/lib/directus-bridge/'*.db >/dev/null && grep -qF '$rotated_title' '$WORK$EVENTS'"
# An upgrade from the layout where secrets.env held DIRECTUS_TOKEN (an unedited bridge.yaml is replaced by the new
# one, which reads the token file): with the token file still empty, the postinst copies the token over.
: >"$WORK/etc/directus-bridge/directus-token"
printf 'DIRECTUS_TOKEN="token-from-secrets-env"\n' >>"$WORK/etc/directus-bridge/secrets.env"
upgrade_output="$(in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --reinstall \
    "/tmp/$(basename "$DEB")" 2>&1)" || { echo "$upgrade_output" >&2; fail "apt-get install --reinstall"; }
expect "upgrade: DIRECTUS_TOKEN of secrets.env copied into the empty directus-token (root:root 600)" \
    sh -c "grep -qx token-from-secrets-env '$WORK/etc/directus-bridge/directus-token' && \
        [ \"\$(chroot '$WORK' stat -c '%U:%G %a' /etc/directus-bridge/directus-token)\" = 'root:root 600' ]"
purge_output="$(in_root env DEBIAN_FRONTEND=noninteractive apt-get purge -y directus-bridge 2>&1)" \
    || { echo "$purge_output" >&2; fail "apt-get purge"; }
expect "purge removes the state, the events, /etc/directus-bridge, the logrotate snippet and the user" \
    sh -c "[ ! -e '$WORK/var/lib/directus-bridge' ] && [ ! -e '$WORK/var/log/directus-bridge' ] && \
        [ ! -e '$WORK/etc/directus-bridge' ] && [ ! -e '$WORK/etc/logrotate.d/directus-bridge' ] && \
        ! chroot '$WORK' getent passwd directus-bridge >/dev/null && ! chroot '$WORK' getent group directus-bridge >/dev/null"

summary
