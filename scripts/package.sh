#!/usr/bin/env bash
# The release artifacts, in one command:
#   dist/directus-bridge-<version>-linux-<arch>        the release binary, Swift standard library linked in
#   dist/directus-bridge-<version>-linux-<arch>.debug  its debug symbols (gdb finds them through a debuglink)
#   dist/directus-bridge_<version>_<arch>.deb          the Debian package (binary, systemd unit, config, logrotate
#                                                      snippet, man page, maintainer scripts), Depends computed by
#                                                      dpkg-shlibdeps
#   dist/SHA256SUMS
# The build has a scratch directory of its own (.build/dist), so it never invalidates the debug or release builds
# of scripts/test.sh, scripts/demo.sh and the benchmarks. Usage: scripts/package.sh [--skip-build]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SKIP_BUILD=false
for flag in "$@"; do
    case "$flag" in
        --skip-build) SKIP_BUILD=true ;;
        *) echo "package: unknown option $flag (use --skip-build)" >&2 && exit 64 ;;
    esac
done
scripts/bootstrap.sh --package
export PATH="/opt/swift/usr/bin:$PATH"
say() { echo "package: $*" >&2; }

NAME=directus-bridge
VERSION="$(tr -d '[:space:]' <VERSION)"
MAINTAINER="directus-bridge maintainers <maintainers@users.noreply.a-seed-eb6c0da2.example>"
ARCH="$(dpkg --print-architecture)"
DIST="$ROOT/dist"
SCRATCH="$ROOT/.build/dist"
# dpkg-deb clamps file times to this, so two builds of one commit give the same archive layout.
SOURCE_DATE_EPOCH="$(git log -1 --format=%ct 2>/dev/null || date +%s)"
export SOURCE_DATE_EPOCH

# --- The binary ------------------------------------------------------------------------------------------------
# --static-swift-stdlib links the Swift runtime, Foundation and ICU data into the executable; --disable-local-rpath
# leaves out the $ORIGIN run path, which would make /usr/bin a library search directory.
if ! $SKIP_BUILD; then
    say "building $NAME $VERSION (release, static Swift standard library)…"
    log="$(mktemp)"
    if ! swift build -c release --static-swift-stdlib --disable-local-rpath --scratch-path "$SCRATCH" \
        --product "$NAME" >"$log" 2>&1; then
        tail -n 60 "$log" >&2
        rm -f "$log"
        say "the build failed"
        exit 1
    fi
    grep -E "^Build (of product|complete)" "$log" >&2 || true
    rm -f "$log"
fi
BUILT="$SCRATCH/release/$NAME"
[[ -x "$BUILT" ]] || { say "no $BUILT: run without --skip-build first"; exit 1; }

rm -rf "$DIST"
mkdir -p "$DIST"
BINARY="$DIST/$NAME-$VERSION-linux-$ARCH"
cp "$BUILT" "$BINARY"
objcopy --only-keep-debug "$BINARY" "$BINARY.debug"
strip --strip-all "$BINARY"
objcopy --add-gnu-debuglink="$BINARY.debug" "$BINARY"

# It must run with no Swift toolchain in sight: nothing from /opt/swift (or any libswift*) may be loaded.
linked="$(env -i LD_LIBRARY_PATH= ldd "$BINARY")"
if grep -qE 'swift|Foundation|dispatch|not found' <<<"$linked"; then
    say "the binary still needs Swift's shared libraries or misses a library:"
    echo "$linked" >&2
    exit 1
fi
version_line="$(env -i "$BINARY" --version)"
say "$version_line; links: $(readelf -d "$BINARY" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')"

# --- The package tree ------------------------------------------------------------------------------------------
STAGE="$(mktemp -d "$DIST/.stage.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
TREE="$STAGE/tree"
DOC="$TREE/usr/share/doc/$NAME"
install -D -m 0755 "$BINARY" "$TREE/usr/bin/$NAME"
install -D -m 0644 packaging/directus-bridge.service "$TREE/lib/systemd/system/$NAME.service"
install -D -m 0644 packaging/bridge.yaml "$TREE/etc/$NAME/bridge.yaml"
install -D -m 0600 packaging/debian/secrets.env "$TREE/etc/$NAME/secrets.env"
install -D -m 0644 packaging/logrotate "$TREE/etc/logrotate.d/$NAME"
install -d -m 0755 "$TREE/usr/share/man/man1" "$DOC"
sed "s/^\.TH DIRECTUS-BRIDGE 1 \"\" \"directus-bridge\"/.TH DIRECTUS-BRIDGE 1 \"\" \"directus-bridge $VERSION\"/" \
    packaging/directus-bridge.1 | gzip -9n >"$TREE/usr/share/man/man1/$NAME.1.gz"
install -m 0644 README.md docs/configuration.md "$DOC/"
install -m 0644 bridge.yaml "$DOC/bridge.yaml.example"
install -m 0644 packaging/debian/copyright "$DOC/copyright"
install -D -m 0644 packaging/grafana/directus-bridge.json "$TREE/usr/share/$NAME/grafana/directus-bridge.json"
install -D -m 0644 packaging/prometheus/alerts.yaml "$TREE/usr/share/$NAME/prometheus/alerts.yaml"
install -D -m 0644 packaging/completion/directus-bridge.bash "$TREE/usr/share/bash-completion/completions/$NAME"
install -D -m 0644 packaging/completion/_directus-bridge "$TREE/usr/share/zsh/vendor-completions/_$NAME"
install -D -m 0644 packaging/debian/lintian-overrides "$TREE/usr/share/lintian/overrides/$NAME"
# A native package (the project builds it itself): the changelog names the commit it was built from.
{
    printf '%s (%s) stable; urgency=medium\n\n' "$NAME" "$VERSION"
    printf '  * Built from commit %s.\n\n' "$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
    printf ' -- %s  %s\n' "$MAINTAINER" "$(date -R -u -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n >"$DOC/changelog.gz"

CONTROL="$TREE/DEBIAN"
install -d -m 0755 "$CONTROL"
install -m 0755 packaging/debian/postinst packaging/debian/prerm packaging/debian/postrm "$CONTROL/"
printf '/etc/%s/bridge.yaml\n/etc/%s/secrets.env\n/etc/logrotate.d/%s\n' "$NAME" "$NAME" "$NAME" >"$CONTROL/conffiles"

# Depends: exactly the shared libraries the binary links, mapped to packages and minimum versions by
# dpkg-shlibdeps from the installed libraries' symbols files; plus adduser for the postinst.
mkdir -p "$STAGE/shlibs/debian"
printf 'Source: %s\n\nPackage: %s\nArchitecture: any\n' "$NAME" "$NAME" >"$STAGE/shlibs/debian/control"
shlibs="$(cd "$STAGE/shlibs" && dpkg-shlibdeps -O -e"$TREE/usr/bin/$NAME" 2>"$STAGE/shlibdeps.err")" || {
    cat "$STAGE/shlibdeps.err" >&2
    exit 1
}
LIBRARY_DEPENDS="$(sed -n 's/^shlibs:Depends=//p' <<<"$shlibs")"
[[ -n "$LIBRARY_DEPENDS" ]] || { say "dpkg-shlibdeps found no dependencies: $shlibs"; exit 1; }

cat >"$CONTROL/control" <<EOF
Package: $NAME
Version: $VERSION
Architecture: $ARCH
Maintainer: $MAINTAINER
Installed-Size: $(du -sk --exclude=DEBIAN "$TREE" | cut -f1)
Depends: $LIBRARY_DEPENDS, adduser
Recommends: ca-certificates, logrotate
Section: net
Priority: optional
Description: mirrors Directus changes to NDJSON, webhooks and message brokers
 directus-bridge is a long-running service that subscribes to the collections
 of a Directus instance over its realtime WebSocket API (or reads its activity
 log, so that no change is lost while the bridge is down) and writes one JSON
 object per changed item: NDJSON lines on stdout or in a file, HTTP POST
 requests with Standard Webhooks signatures, or messages to Apache Kafka,
 NATS JetStream, Redis Streams, RabbitMQ (AMQP 0-9-1) or MQTT.
 .
 The package holds the binary (Swift standard library linked in), a hardened
 systemd unit (not enabled on install), /etc/directus-bridge/bridge.yaml, a
 logrotate snippet for the events file it writes and the directus-bridge(1)
 manual page, with bash and zsh completions.
EOF
(cd "$TREE" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) \
    >"$CONTROL/md5sums"
chmod 0644 "$CONTROL/control" "$CONTROL/conffiles" "$CONTROL/md5sums"

DEB="$DIST/${NAME}_${VERSION}_$ARCH.deb"
dpkg-deb --root-owner-group -Zxz --build "$TREE" "$DEB" >/dev/null
(cd "$DIST" && sha256sum "$(basename "$BINARY")" "$(basename "$BINARY").debug" "$(basename "$DEB")" >SHA256SUMS)

say "Depends: $LIBRARY_DEPENDS, adduser"
ls -l "$DIST" | sed 1d >&2
echo "$DEB"
