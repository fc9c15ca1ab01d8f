#!/usr/bin/env bash
# Installs what building, testing and the demo need, only when it is missing:
#   - Debian packages (C libraries wrapped by the Swift package, openssl, python3-venv, nats-server for the
#     JetStream tests, redis-server, mosquitto and rabbitmq-server for the Redis, MQTT and AMQP tests, and
#     nginx-light: the HTTP/2 test and the delivery benchmarks start a private nginx of their own; gdb: .ci/run's
#     report of a stage about to time out prints its test processes' stacks)
#   - a Python virtual environment at .venv with the test tools of Tests/tools/requirements.txt
# Safe to run again: each step checks first. Usage: scripts/bootstrap.sh [--package] [--bench]
#   --package   also the release tools of scripts/package.sh and scripts/test-package.sh (dpkg-shlibdeps, strip,
#               debootstrap, buildah, podman for `podman import`)
#   --bench     also what only Benchmarks/run needs: the C++ peer of json-hot-path (g++ and libsimdjson-dev); its
#               other peers (nginx-light, the Python ones in .venv) are installed for every run
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

PACKAGES=(pkg-config libcurl4-openssl-dev libssl-dev libyaml-dev libsqlite3-dev libmicrohttpd-dev librdkafka-dev
    libnats-dev nats-server openssl ca-certificates nginx-light prometheus libhiredis-dev redis-server
    libmosquitto-dev mosquitto librabbitmq-dev rabbitmq-server gdb)
# Test peers that Debian installs as services; the tests start private instances, the system's must not run.
PEER_SERVICES=(nginx redis-server mosquitto rabbitmq-server)
for flag in "$@"; do
    case "$flag" in
        --bench) PACKAGES+=(g++ libsimdjson-dev) ;;
        --package) PACKAGES+=(dpkg-dev binutils debootstrap debian-archive-keyring buildah podman) ;;
        *) echo "bootstrap: unknown option $flag (use --package or --bench)" >&2 && exit 64 ;;
    esac
done

say() { echo "bootstrap: $*" >&2; }

if ! command -v swift >/dev/null 2>&1; then
    if [[ -x /opt/swift/usr/bin/swift ]]; then
        export PATH="/opt/swift/usr/bin:$PATH"
    else
        say "the Swift toolchain (6.0 or later) is not on PATH; install it from https://swift.org/install" && exit 1
    fi
fi

# Python: the system one, or pyenv's; it needs the venv module (python3-venv on Debian).
PYTHON="${PYTHON:-$(command -v python3 || true)}"
if [[ -z "$PYTHON" ]] || ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    PACKAGES+=(python3 python3-venv)
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
    say "installing Debian packages: ${missing[*]}"
    SUDO=""
    [[ "$(id -u)" == 0 ]] || SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    # nginx is only a test peer: the distribution's service must never run (it would take port 80). A
    # policy-rc.d that answers 101 keeps the package scripts from starting it; one already there is left alone.
    policy=""
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
        policy=/usr/sbin/policy-rc.d
        printf '#!/bin/sh\n# scripts/bootstrap.sh: no service starts while it installs packages\nexit 101\n' |
            $SUDO tee "$policy" >/dev/null
        $SUDO chmod 755 "$policy"
    fi
    status=0
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || status=$?
    [[ -z "$policy" ]] || $SUDO rm -f "$policy"
    ((status == 0)) || exit "$status"
    # Whatever policy was in place: the services the test peers bring are stopped and not started at boot.
    for service in "${PEER_SERVICES[@]}"; do
        if command -v systemctl >/dev/null 2>&1 && [[ -d /run/systemd/system ]]; then
            $SUDO systemctl disable --now "$service" >/dev/null 2>&1 || true
        else
            $SUDO service "$service" stop >/dev/null 2>&1 || true
            $SUDO update-rc.d "$service" disable >/dev/null 2>&1 || true
        fi
    done
fi
PYTHON="${PYTHON:-$(command -v python3)}"
[[ -n "$PYTHON" ]] || PYTHON="$(command -v python3)"

REQ="Tests/tools/requirements.txt"
STAMP=".venv/.requirements.sha256"
want="$(sha256sum "$REQ" | cut -d' ' -f1)"
if [[ ! -x .venv/bin/python ]]; then
    say "creating the Python environment .venv"
    "$PYTHON" -m venv .venv
fi
# Installing is additive: a venv shared by several checkouts (a symlink) keeps what each of them needs.
if [[ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]]; then
    say "installing the test tools of $REQ into .venv"
    .venv/bin/python -m pip install -q --disable-pip-version-check -r "$REQ"
    echo "$want" >"$STAMP"
fi
