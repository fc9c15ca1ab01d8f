#!/usr/bin/env bash
# Builds the container image of packaging/container/Dockerfile with Debian's buildah and runs it, without any image
# registry:
#   1. the base image debian:bookworm-slim is the cached debootstrap minbase root of scripts/test-package.sh,
#      imported with `podman import` into a private image store (.cache/container, vfs driver);
#   2. `buildah bud --pull=never --format docker` (docker format: OCI images have no HEALTHCHECK);
#   3. the image's user, volume and health check as configured, then in a working container (`buildah run
#      --isolation chroot --network host`): `directus-bridge --version`, the HEALTHCHECK command failing while
#      nothing listens, `run` against the Directus emulator on the host's loopback with the token mounted as a secret
#      in /run/secrets (ready, the health check passing, a created article arriving on stdout) and SIGTERM → exit 0.
# Prints one line per check, `ok   <what>` or `FAIL <what>`, and exits 1 when any failed. Needs root.
# Not run by CI (README "Container image" says why). Usage: scripts/test-container.sh [PATH.deb]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
[[ "$(id -u)" == 0 ]] || { echo "test-container: needs root (buildah, chroot): sudo $0 $*" >&2; exit 1; }
scripts/bootstrap.sh --package >&2
source scripts/lib/package-test.sh

DEB="${1:-$(ls dist/directus-bridge_*.deb 2>/dev/null | tail -n 1)}"
[[ -f "$DEB" ]] || { echo "test-container: no .deb; run scripts/package.sh first" >&2; exit 1; }
CACHE="$ROOT/.cache/package-test"
STORE="$ROOT/.cache/container"
BUILDAH=(buildah --root "$STORE/storage" --runroot "$STORE/run" --storage-driver vfs)
PODMAN=(podman --root "$STORE/storage" --runroot "$STORE/run" --storage-driver vfs)
BASE_IMAGE=docker.io/library/debian:bookworm-slim
IMAGE="localhost/directus-bridge:$(tr -d '[:space:]' <VERSION)"
CONTAINER=""
WORK="$(mktemp -d "${TMPDIR:-/tmp}/directus-bridge-container.XXXXXX")"
cleanup() {
    [[ -n "${BRIDGE_PID:-}" ]] && kill -KILL "$BRIDGE_PID" 2>/dev/null
    [[ -n "${RUNNER_PID:-}" ]] && kill -KILL "$RUNNER_PID" 2>/dev/null
    [[ -n "${EMULATOR_PID:-}" ]] && kill "$EMULATOR_PID" 2>/dev/null
    wait 2>/dev/null
    [[ -n "$CONTAINER" ]] && "${BUILDAH[@]}" rm "$CONTAINER" >/dev/null 2>&1
    "${BUILDAH[@]}" rmi --prune >/dev/null 2>&1
    rm -rf "$WORK"
}
trap cleanup EXIT

# --- Base image and build ----------------------------------------------------------------------------------------
if [[ -z "$("${BUILDAH[@]}" images -q "$BASE_IMAGE" 2>/dev/null)" ]]; then
    make_base_root "$CACHE/bookworm"
    note "importing the debootstrap root as $BASE_IMAGE (private store $STORE)…"
    tar -C "$CACHE/bookworm" --exclude=./.complete -c . \
        | "${PODMAN[@]}" import --change 'CMD ["bash"]' - "$BASE_IMAGE" >"$WORK/import.log" 2>&1 \
        || { cat "$WORK/import.log" >&2; exit 1; }
fi
note "base image: $BASE_IMAGE = the debootstrap minbase root of test-package.sh, not the registry's image"
cp "$DEB" "$WORK/"
started=$SECONDS
if build_output="$("${BUILDAH[@]}" bud --isolation chroot --pull=never --format docker \
    -f "$ROOT/packaging/container/Dockerfile" -t "$IMAGE" "$WORK" 2>&1)"; then
    pass "buildah bud -f packaging/container/Dockerfile → $IMAGE ($((SECONDS - started)) s)"
else
    echo "$build_output" >&2
    fail "buildah bud -f packaging/container/Dockerfile"
    summary
    exit 1
fi

config="$("${BUILDAH[@]}" inspect --type image "$IMAGE")"
image_field() { "$ROOT/.venv/bin/python" -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["Docker"]["config"].get(sys.argv[1])))' "$1" <<<"$config"; }
expect "image user $(image_field User) (not root)" test "$(image_field User)" = '"10001:10001"'
expect "image volume $(image_field Volumes)" grep -q '"/var/lib/directus-bridge"' <<<"$(image_field Volumes)"
expect "image HEALTHCHECK, entrypoint $(image_field Entrypoint) $(image_field Cmd)" \
    grep -q '/readyz' <<<"$(image_field Healthcheck)"
image_environment="$(image_field Env)"
sets_events_and_secrets() {
    [[ "$image_environment" == *'"DIRECTUS_BRIDGE_NDJSON_PATH=-"'* ]] \
        && [[ "$image_environment" == *'"CREDENTIALS_DIRECTORY=/run/secrets"'* ]]
}
expect "image environment: events on stdout, the token from /run/secrets" sets_events_and_secrets
# The HEALTHCHECK's command as the image records it (after "CMD"), to run it exactly.
mapfile -t HEALTHCHECK < <("$ROOT/.venv/bin/python" -c \
    'import json,sys; print("\n".join(json.load(sys.stdin)["Docker"]["config"]["Healthcheck"]["Test"][1:]))' \
    <<<"$config")

# --- Running it ----------------------------------------------------------------------------------------------------
CONTAINER="$("${BUILDAH[@]}" from --pull-never "$IMAGE")"
in_container() { "${BUILDAH[@]}" run --isolation chroot --network host "$@"; }
version="$(in_container "$CONTAINER" -- directus-bridge --version)"
expect "directus-bridge --version: $version" grep -q '^directus-bridge [0-9]' <<<"$version"
expect "runs as $(in_container "$CONTAINER" -- id -un)(10001); state directory 0700" \
    test "$(in_container "$CONTAINER" -- stat -c '%u %a' /var/lib/directus-bridge)" = "10001 700"

start_emulator "$WORK"
LISTEN_PORT="$(free_port)"
# The token as `docker run -v ./directus-token:/run/secrets/directus-token:ro` (or a Compose secret) hands it over.
printf 'admin-static-token\n' | install -m 0644 /dev/stdin "$WORK/directus-token"
ENVIRONMENT=(-e "DIRECTUS_URL=http://127.0.0.1:$EMULATOR_PORT" -e "DIRECTUS_BRIDGE_LISTEN=127.0.0.1:$LISTEN_PORT"
    -v "$WORK/directus-token:/run/secrets/directus-token:ro")
health() { in_container "${ENVIRONMENT[@]}" "$CONTAINER" -- "${HEALTHCHECK[@]}" 2>/dev/null; }
expect_failure "the HEALTHCHECK command fails while nothing listens" health
in_container "${ENVIRONMENT[@]}" "$CONTAINER" -- directus-bridge run --config /etc/directus-bridge/bridge.yaml \
    >"$WORK/bridge.ndjson" 2>"$WORK/bridge.log" &
RUNNER_PID=$!
expect "run (image's config, environment and the secret): /readyz answers 200" \
    wait_for_ready "http://127.0.0.1:$LISTEN_PORT/readyz" 60
expect "the HEALTHCHECK command passes" health
expect "a created article reaches stdout" create_article_and_wait "package test $$" "$WORK/bridge.ndjson" 30

# `buildah run` kills its command on SIGTERM; docker stop signals the container's process itself, so do that.
BRIDGE_PID="$(descendant_named "$RUNNER_PID" directus-bridge)"
terminate "$BRIDGE_PID" "$RUNNER_PID"
RUNNER_PID="" BRIDGE_PID=""
expect "SIGTERM to the bridge → exit $EXIT_STATUS" test "$EXIT_STATUS" = 0
sed 's/^/       log: /' "$WORK/bridge.log" | tail -n 3

summary
