#!/usr/bin/env bash
# The whole test suite, from a fresh Debian/Ubuntu machine: installs what is missing, builds, runs every test.
# Unit tests, the WebSocket conformance suite against Python peers, and integration tests that run the real
# binary against the bundled Directus emulator. Every server a test needs is started and stopped by that test.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
scripts/bootstrap.sh
export PATH="/opt/swift/usr/bin:$PATH"
export BRIDGE_PYTHON="$ROOT/.venv/bin/python"

echo "== build" >&2
swift build --build-tests

if compgen -G "Tests/tools/test_*.py" >/dev/null; then
    echo "== Python test tools self-test" >&2
    .venv/bin/python -m pytest -q -p no:cacheprovider Tests/tools
fi

# Two runs: unit and component tests first, then the integration tests that drive the real binary. Integration
# tests wait on processes synchronously; kept apart, they cannot starve the timing-sensitive unit tests of Swift's
# cooperative threads (two on a 2-core machine).
if (($#)); then
    swift test --skip-build "$@"
else
    echo "== swift test: unit and component tests" >&2
    swift test --skip-build --skip BridgeIntegrationTests
    echo "== swift test: integration tests (the real binary against the emulator)" >&2
    swift test --skip-build --filter BridgeIntegrationTests
    # Every fuzz target briefly over its seed corpus (docs/RELIABILITY.md "Fuzzing"); a crash fails the run.
    # BRIDGE_FUZZ_SECONDS=0 skips it.
    if ((${BRIDGE_FUZZ_SECONDS:-15} > 0)); then
        scripts/fuzz.sh "${BRIDGE_FUZZ_SECONDS:-15}"
    fi
fi
