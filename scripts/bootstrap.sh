#!/usr/bin/env bash
# Installs what building, testing and the demo need, only when it is missing:
#   - Debian packages (C libraries wrapped by the Swift package, openssl, python3-venv)
#   - a Python virtual environment at .venv with the test tools of Tests/tools/requirements.txt
# Safe to run again: each step checks first. Usage: scripts/bootstrap.sh [--bench]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

PACKAGES=(pkg-config libcurl4-openssl-dev libssl-dev libyaml-dev libsqlite3-dev libmicrohttpd-dev openssl ca-certificates)
if [[ "${1:-}" == "--bench" ]]; then PACKAGES+=(nginx-light); fi

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
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    # nginx is only a benchmark peer: never leave the distribution's service running on port 80.
    if [[ " ${missing[*]} " == *" nginx-light "* ]]; then $SUDO service nginx stop >/dev/null 2>&1 || true; fi
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
