# Shared by scripts/test-package.sh and scripts/test-container.sh (sourced, not run): the cached debootstrap root,
# the Directus emulator on the host's loopback, and the ok/FAIL report.

PROBE=("$ROOT/.venv/bin/python" "$ROOT/Tests/tools/package_probe.py")
FAILED=0
PASSED=0

note() { echo "       $*"; }
pass() { echo "ok   $*"; PASSED=$((PASSED + 1)); }
fail() { echo "FAIL $*"; FAILED=$((FAILED + 1)); }
# expect DESCRIPTION COMMAND…: runs the command, reports ok or FAIL under the description.
expect() {
    local what="$1"
    shift
    if "$@"; then pass "$what"; else fail "$what"; fi
}
summary() {
    echo "== $PASSED passed, $FAILED failed ($SECONDS s)"
    ((FAILED == 0))
}

# The mirror this machine's apt uses (deb822 or one-line sources), unless DEBIAN_MIRROR says otherwise.
debian_mirror() {
    if [[ -n "${DEBIAN_MIRROR:-}" ]]; then echo "$DEBIAN_MIRROR" && return; fi
    local uri
    uri="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ && $2 ~ /\/debian\/?$/ {print $2; exit}')"
    [[ -n "$uri" ]] || uri="$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null)"
    echo "${uri:-http://deb.debian.org/debian}"
}

# make_base_root DIR: a minimal bookworm root (debootstrap --variant=minbase), made once and reused.
make_base_root() {
    local base="$1"
    if [[ -f "$base/.complete" ]]; then
        note "base root: $base (cached, made $(date -r "$base/.complete" -u +%FT%TZ))"
        return
    fi
    local mirror started=$SECONDS
    mirror="$(debian_mirror)"
    note "base root: debootstrap --variant=minbase bookworm from $mirror (once; cached afterwards)…"
    rm -rf --one-file-system "$base.partial"
    mkdir -p "$(dirname "$base")"
    if ! debootstrap --variant=minbase bookworm "$base.partial" "$mirror" >"$base.log" 2>&1; then
        tail -n 20 "$base.log" >&2
        echo "test-package: debootstrap failed (log: $base.log)" >&2
        exit 1
    fi
    rm -rf --one-file-system "$base"
    mv "$base.partial" "$base"
    touch "$base/.complete"
    note "base root made in $((SECONDS - started)) s"
}

# fresh_copy BASE WORK: WORK becomes a copy of BASE (apt's downloaded archives carried over between runs), with
# /proc mounted and the host's resolver.
fresh_copy() {
    local base="$1" work="$2"
    unmount_run "$work"
    rm -rf --one-file-system "$work"
    cp -a "$base" "$work"
    mkdir -p "$CACHE/apt-archives"
    find "$CACHE/apt-archives" -name '*.deb' -exec cp {} "$work/var/cache/apt/archives/" \;
    cp -L /etc/resolv.conf "$work/etc/resolv.conf"
    mount -t proc proc "$work/proc"
}

unmount_run() {
    local work="$1"
    if mountpoint -q "$work/proc" 2>/dev/null; then umount "$work/proc"; fi
}

# install_deb WORK PATH-IN-ROOT: apt-get update and install the .deb inside the chroot.
install_deb() {
    local work="$1" deb="$2"
    chroot "$work" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
        sh -c "apt-get update -qq && apt-get install -y --no-install-recommends '$deb'"
    find "$work/var/cache/apt/archives" -maxdepth 1 -name '*.deb' -exec cp -n {} "$CACHE/apt-archives/" \;
}

cleanup_run() {
    local work="$1"
    [[ -n "${BRIDGE_PID:-}" ]] && kill -KILL "$BRIDGE_PID" 2>/dev/null
    [[ -n "${EMULATOR_PID:-}" ]] && kill "$EMULATOR_PID" 2>/dev/null
    wait 2>/dev/null
    unmount_run "$work"
}

# start_emulator DIR: the Directus emulator on 127.0.0.1, a free port; sets EMULATOR_PID and EMULATOR_PORT.
start_emulator() {
    local dir="$1"
    "$ROOT/.venv/bin/python" -u "$ROOT/Tests/tools/directus_emulator/server.py" --port 0 --log-level warning \
        >"$dir/emulator.out" 2>"$dir/emulator.err" &
    EMULATOR_PID=$!
    local deadline=$((SECONDS + 30))
    until grep -q '^READY ' "$dir/emulator.out" 2>/dev/null; do
        if ((SECONDS > deadline)) || ! kill -0 "$EMULATOR_PID" 2>/dev/null; then
            cat "$dir/emulator.err" >&2
            echo "test-package: the emulator did not start" >&2
            exit 1
        fi
        sleep 0.1
    done
    EMULATOR_PORT="$(awk '/^READY /{print $2}' "$dir/emulator.out")"
    note "Directus emulator on http://127.0.0.1:$EMULATOR_PORT"
}

free_port() { "${PROBE[@]}" free-port; }
wait_for_ready() { "${PROBE[@]}" wait-ready "$1" "$2"; }
metrics_text() { "${PROBE[@]}" get "$1"; }

# create_article_and_wait TITLE FILE SECONDS: creates an article on the emulator and waits for its line in FILE.
create_article_and_wait() {
    local title="$1" file="$2" seconds="$3"
    "${PROBE[@]}" create-article "http://127.0.0.1:$EMULATOR_PORT" admin-static-token "$title" >/dev/null || return 1
    local deadline=$((SECONDS + seconds))
    until grep -qF "\"title\":\"$title\"" "$file" 2>/dev/null; do
        ((SECONDS <= deadline)) || return 1
        sleep 0.2
    done
}

# expect_failure DESCRIPTION COMMAND…: ok when the command fails (a probe must be able to say no).
expect_failure() {
    local what="$1"
    shift
    if "$@"; then fail "$what"; else pass "$what"; fi
}

# descendant_named PID NAME: the pid of the first process called NAME below PID (e.g. the bridge under `buildah run`).
descendant_named() {
    local child
    for child in $(ps -o pid= --ppid "$1"); do
        if [[ "$(cat "/proc/$child/comm" 2>/dev/null)" == "$2" ]]; then echo "$child" && return; fi
        descendant_named "$child" "$2" && return
    done
    return 1
}

# terminate SIGNALLED WAITED: SIGTERM to SIGNALLED, then WAITED's exit status (WAITED is a child of this shell, so
# this must not run in a subshell) into EXIT_STATUS; SIGKILL after 30 s.
terminate() {
    local signalled="$1" waited="$2" deadline=$((SECONDS + 30))
    kill -TERM "$signalled"
    while kill -0 "$signalled" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
    kill -KILL "$signalled" 2>/dev/null || true
    EXIT_STATUS=0
    wait "$waited" || EXIT_STATUS=$?
}
