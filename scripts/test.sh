#!/usr/bin/env bash
# The whole test suite, from a fresh Debian/Ubuntu machine: installs what is missing, builds, runs every test.
# Unit tests, the WebSocket conformance suite against Python peers, and integration tests that run the real
# binary against the bundled Directus emulator. Every server a test needs is started and stopped by that test.
#
# Usage: scripts/test.sh [--sanitize=address|thread] [SWIFT TEST ARGUMENTS…]
#   (nothing)              one debug build with AddressSanitizer (.build-address: the tests, bridge-fuzz), the
#                          release artifacts (scripts/package.sh), the Python tools' tests, every fuzz seed replayed,
#                          integration tests of the shipped binary from dist/ (the real-time suites last, one test
#                          at a time), the unit tests, then every fuzz target for 15 s (BRIDGE_FUZZ_SECONDS; 0 skips
#                          it, refused under CI). Every test process runs under AddressSanitizer. This is what CI
#                          runs, stage by stage.
#   --sanitize=SANITIZER   everything built with AddressSanitizer or ThreadSanitizer (in .build-address or
#                          .build-thread), then the unit and the integration suites; the integration suite runs the
#                          binary built with the same sanitizer. A report from any process fails the run, and the
#                          reports stay in .build-SANITIZER/sanitizer-reports. See docs/RELIABILITY.md "Sanitizers".
#   SWIFT TEST ARGUMENTS   run only those tests (e.g. --filter WebSocketTests), with or without a sanitizer.
#   --stage=STAGE          one stage of the whole run (build, package, tools, replay, integration, unit, fuzz).
# Each whole suite's count, as its runner reports it, must reach its floor in scripts/test-floors, and with CI=true a
# test that skipped itself fails the run unless that file allows it (docs/RELIABILITY.md "What CI runs").
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# Under CI nothing may quietly test less: another binary than the one just built, or no fuzzing at all.
if [[ "${CI:-}" == true ]]; then
    if [[ -n "${BRIDGE_BINARY:-}" ]]; then
        echo "test.sh: BRIDGE_BINARY is set ($BRIDGE_BINARY); CI tests the binary it builds, unset it" >&2
        exit 2
    fi
    if [[ "${BRIDGE_FUZZ_SECONDS:-15}" == 0 ]]; then
        echo "test.sh: BRIDGE_FUZZ_SECONDS=0 would skip fuzzing, which CI runs; unset it or give seconds" >&2
        exit 2
    fi
fi

scripts/bootstrap.sh
export PATH="/opt/swift/usr/bin:$PATH"
export BRIDGE_PYTHON="$ROOT/.venv/bin/python"
# floor, check_count, check_skips, counted_swift_test: each suite counted against scripts/test-floors.
source scripts/lib/counting.sh

build_flags=()
reports=""

# Builds into .build-$1 with sanitizer $1 from now on; every process of the run (the test runner, the bridge the
# integration tests start) writes its reports to files in $reports, which `check_reports` reads.
use_sanitizer() {
    local build=".build-$1"
    build_flags=(--sanitize="$1" --build-path "$build")
    reports="$ROOT/$build/sanitizer-reports"
    rm -rf "$reports"
    mkdir -p "$reports"
    # Swift's crash backtracer reads the stack in a way AddressSanitizer reports as a stack-buffer-underflow. Without
    # it a Swift trap that prints nothing (an arithmetic overflow) ended a test runner with "signal code 4" and no
    # stack (the clean-clone CI of da712e8): handle_sigill makes AddressSanitizer report it, with the stack, as any
    # other of its reports (check_reports).
    export SWIFT_BACKTRACE=enable=no
    export ASAN_OPTIONS="log_path=$reports/asan:detect_leaks=1:strict_string_checks=1:check_initialization_order=1:handle_sigill=1"
    export LSAN_OPTIONS="suppressions=$ROOT/Tests/sanitizers/lsan.supp:print_suppressions=0"
    export TSAN_OPTIONS="log_path=$reports/tsan:suppressions=$ROOT/Tests/sanitizers/tsan.supp:print_suppressions=0"
}

# LeakSanitizer's suppressions checked before any AddressSanitizer suite, on Tests/sanitizers/lsan_curl_check.c: a
# curl handle never cleaned up must still be reported with lsan.supp, and one cleaned up must not be (the run stops
# otherwise). A rule naming libcurl once hid every leak of the bridge's own curl use. docs/RELIABILITY.md
# "Suppressions".
lsan_curl_check() {
    local check="$ROOT/.build-address/lsan-curl-check" leak=0 clean=0
    clang -fsanitize=address -fuse-ld=lld -g -O1 -Wall -Wextra -Werror -o "$check" \
        Tests/sanitizers/lsan_curl_check.c -lcurl
    # Its own options: the run's ASAN_OPTIONS write reports to files that would fail the run (check_reports).
    ASAN_OPTIONS=detect_leaks=1 "$check" leak >/dev/null 2>"$check.leak.log" || leak=$?
    ASAN_OPTIONS=detect_leaks=1 "$check" clean >/dev/null 2>"$check.clean.log" || clean=$?
    if ((leak == 0)) || ! grep -q "detected memory leaks" "$check.leak.log"; then
        echo "test.sh: with Tests/sanitizers/lsan.supp, LeakSanitizer did not report a curl handle never cleaned" \
            "up (exit $leak): a suppression hides the bridge's own curl leaks" >&2
        exit 1
    fi
    if ((clean != 0)); then
        echo "test.sh: LeakSanitizer reported a curl handle that was cleaned up:" >&2
        cat "$check.clean.log" >&2
        exit 1
    fi
    echo "== LeakSanitizer suppressions checked: a leaked curl handle reported, a freed one clean" >&2
}

# OpenSSL's setup before main checked on Tests/sanitizers/openssl_exit_check.c: a thread that used OpenSSL and ends
# while the process exits leaves its per-thread state to LeakSanitizer under OpenSSL's default atexit cleanup (the
# check must see that report, or it could not fail), and leaves nothing with Sources/COpenSSLInit/openssl_init.c,
# which every binary of the bridge links. docs/RELIABILITY.md "Suppressions".
openssl_exit_check() {
    local check="$ROOT/.build-address/openssl-exit-check" default=0 setup=0
    local flags=(-fsanitize=address -fuse-ld=lld -g -O1 -Wall -Wextra -Werror)
    clang "${flags[@]}" -o "$check-default" Tests/sanitizers/openssl_exit_check.c -lssl -lcrypto
    clang "${flags[@]}" -ISources/COpenSSLInit/include -o "$check-setup" Tests/sanitizers/openssl_exit_check.c \
        Sources/COpenSSLInit/openssl_init.c -lssl -lcrypto
    ASAN_OPTIONS=detect_leaks=1 "$check-default" >/dev/null 2>"$check-default.log" || default=$?
    ASAN_OPTIONS=detect_leaks=1 "$check-setup" >/dev/null 2>"$check-setup.log" || setup=$?
    if ((default == 0)) || ! grep -q "detected memory leaks" "$check-default.log"; then
        echo "test.sh: LeakSanitizer did not report OpenSSL's state of a thread ending at exit under OpenSSL's" \
            "default cleanup (exit $default): Tests/sanitizers/openssl_exit_check.c no longer shows the problem" >&2
        exit 1
    fi
    if ((setup != 0)); then
        echo "test.sh: with Sources/COpenSSLInit/openssl_init.c, a thread ending at exit still leaks OpenSSL's state:" >&2
        cat "$check-setup.log" >&2
        exit 1
    fi
    echo "== OpenSSL's setup checked: a thread ending at exit leaks its state by default, nothing with the setup" >&2
}

# ThreadSanitizer cannot see Swift's Mutex hand a contended lock over (a futex) nor glibc's C11 threads
# (librdkafka's); Tests/sanitizers/tsan_*.c show it both, preloaded into every process of the run. First checked on a
# program with a known race and a known non-race (Tests/sanitizers/tsan_mutex_check.swift): the library must keep
# the race reported and stop the false report. docs/RELIABILITY.md "Sanitizers".
tsan_preload() {
    local build="$ROOT/.build-thread" check
    clang -shared -fPIC -O1 -Wall -Wextra -Werror -o "$build/libtsan_preload.so" \
        Tests/sanitizers/tsan_swift_mutex.c Tests/sanitizers/tsan_c11_threads.c
    check="$build/tsan-mutex-check"
    swiftc -sanitize=thread -Onone Tests/sanitizers/tsan_mutex_check.swift -o "$check"
    local locked=0 unlocked=0 bare=0
    LD_PRELOAD="$build/libtsan_preload.so" TSAN_OPTIONS= "$check" locked >/dev/null 2>"$check.locked.log" || locked=$?
    LD_PRELOAD="$build/libtsan_preload.so" TSAN_OPTIONS= "$check" unlocked >/dev/null 2>&1 || unlocked=$?
    TSAN_OPTIONS= "$check" locked >/dev/null 2>&1 || bare=$?
    if ((locked != 0)); then
        echo "test.sh: with libtsan_preload.so, ThreadSanitizer still reports Mutex-ordered accesses:" >&2
        cat "$check.locked.log" >&2
        exit 1
    fi
    if ((unlocked != 66)); then
        echo "test.sh: with libtsan_preload.so, ThreadSanitizer missed a real race (exit $unlocked)" >&2
        exit 1
    fi
    echo "== ThreadSanitizer preload checked: a real race reported, Mutex-ordered accesses clean" \
        "(without the library: exit $bare, 66 = the false report)" >&2
    export LD_PRELOAD="$build/libtsan_preload.so"
}

# Prints the sanitizer reports any process wrote and fails the run when there is one, or when $1 (the exit status
# of the suites) is not 0: a process that AddressSanitizer stopped fails its suite, and its report says why.
check_reports() {
    local status="$1"
    if compgen -G "$reports/*" >/dev/null; then
        echo "test.sh: sanitizer reports in $reports:" >&2
        cat "$reports"/* >&2
        # Each report's first lines again, last: the error and the stack of the thread it stopped, which a log cut
        # to its head and tail (CI's) lost in the middle of a long report (the project's CI of ebaf82f).
        local report
        for report in "$reports"/*; do
            echo "test.sh: the start of $(basename "$report"):" >&2
            awk '/^==[0-9]+==(ERROR|WARNING)/ { found = 1 } found && shown < 40 { print; shown++ }
                END { if (!found) exit 1 }' "$report" >&2 || head -40 "$report" >&2
        done
        exit 1
    fi
    ((status == 0)) || exit "$status"
}

# Two runs: unit and component tests, and the integration tests that drive the real binary. Integration tests wait
# on processes synchronously; kept apart, they cannot starve the timing-sensitive unit tests of Swift's cooperative
# threads (two on a 2-core machine).
unit_tests() {
    echo "== swift test${reports:+ (${build_flags[0]})}: unit and component tests" >&2
    counted_swift_test unit "${build_flags[@]}" --skip BridgeIntegrationTests
}
# The integration suites whose tests hold real-time bounds (heartbeats, token lives, leases, shutdown deadlines, a
# SIGTERM racing deliveries) run after the others in a pass of their own, one test at a time (`--no-parallel`), so
# no other suite's bridges and peers compete with them for the cores. Each pass is counted against its own floor.
REALTIME_SUITES='BridgeIntegrationTests\.(LiveResilienceTests|LiveSessionTests|WebhookRecoveryTests|SharedStateTests|'
REALTIME_SUITES+='ShutdownTests|HeartbeatRuleTests)/'
# Every bridge of both passes leaves a JSON copy of its log in $collected (BRIDGE_LOG_COLLECTOR); afterwards every
# line is checked against the schema of docs/configuration.md "Log fields" (LogSchemaTests).
#
# Under AddressSanitizer the runner's own leaks are not checked here (LeakSanitizer's detect_leaks=0 for it; each bridge
# gets detect_leaks back, TestEnvironment.bridgeEnvironment): the runner holds only test support, and Foundation's
# `Process`, which it starts about two thousand helpers with, is never freed. Over a whole pass everything those
# objects hold is more than LeakSanitizer considers (the first 5,000 leak stacks): past that its suppressions stop
# covering what hangs off them and it reported 6,457 blocks of ours and Foundation's, all held by such objects. The
# bridge's code is checked for leaks in process by the unit stage, and at every sanitized bridge's exit by
# `--sanitize=address` (scripts/extended.sh).
integration_tests() {
    local status=0 collected="$ROOT/.build/test-logs/bridge-logs"
    local LSAN_OPTIONS="${LSAN_OPTIONS:-}"
    [[ -z "$reports" ]] || LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}detect_leaks=0"
    export LSAN_OPTIONS
    rm -rf "$collected"
    mkdir -p "$collected"
    export BRIDGE_LOG_COLLECTOR="$collected"
    echo "== swift test${reports:+ (${build_flags[0]})}: integration tests (the real binary against the emulator)" >&2
    counted_swift_test integration "${build_flags[@]}" --filter BridgeIntegrationTests --skip "$REALTIME_SUITES" ||
        status=$?
    echo "== swift test${reports:+ (${build_flags[0]})}: real-time integration tests, one at a time" >&2
    counted_swift_test integration-realtime "${build_flags[@]}" --filter "$REALTIME_SUITES" --no-parallel ||
        status=$?
    unset BRIDGE_LOG_COLLECTOR
    echo "== every log line of the integration tests against docs/configuration.md \"Log fields\"" >&2
    # Counted like the suites: a filter that matched nothing (the test renamed) would pass with nothing checked.
    export BRIDGE_LOG_COLLECTED="$collected"
    counted_swift_test log-schema "${build_flags[@]}" --filter 'LogSchemaTests/everyLoggedLineFitsTheSchema' ||
        status=$?
    unset BRIDGE_LOG_COLLECTED
    return "$status"
}

if [[ "${1:-}" == --sanitize=* ]]; then
    sanitizer="${1#--sanitize=}"
    shift
    [[ "$sanitizer" == address || "$sanitizer" == thread ]] || {
        echo "test.sh: --sanitize takes address or thread" >&2
        exit 2
    }
    use_sanitizer "$sanitizer"
    echo "== build (${build_flags[0]})" >&2
    swift build --build-tests "${build_flags[@]}"
    [[ "$sanitizer" != thread ]] || tsan_preload
    [[ "$sanitizer" != address ]] || { lsan_curl_check; openssl_exit_check; }
    status=0
    if (($#)); then
        swift test --skip-build "${build_flags[@]}" "$@" || status=$?
    else
        unit_tests || status=$?
        integration_tests || status=$?
    fi
    check_reports "$status"
    exit
fi

# The stages of the whole run, in order. `scripts/test.sh --stage=NAME` runs one of them alone, as .ci/run does to
# bound and time each; the stages after `build` use what it built.
STAGES=(build package tools replay integration unit fuzz)

# The one debug build of a whole run, with AddressSanitizer: the unit suite, the integration suite's runner and the
# seeds' replay all use it, so a memory error or a leak in any of them fails the run, and CI builds the debug code
# once (a plain build beside it cost 3.5–7 minutes of the 40-minute budget). The LeakSanitizer check runs here, before
# any suite relies on the suppressions. Each stage is a subshell that sets the sanitizer's options for itself: they must
# not reach the fuzzers, which report through libFuzzer's log.
stage_build() (
    use_sanitizer address
    echo "== build (${build_flags[0]})" >&2
    swift build --build-tests "${build_flags[@]}"
    lsan_curl_check
    openssl_exit_check
)

# The release artifacts (scripts/package.sh): the integration stage tests the binary that ships, built once here.
stage_package() {
    scripts/package.sh
}

stage_tools() {
    echo "== Python test tools self-test" >&2
    mkdir -p .build/test-logs
    .venv/bin/python -m pytest -q -rs -p no:cacheprovider Tests/tools 2>&1 | tee .build/test-logs/python-tools.log
    # pytest's own closing line: "83 passed in 31.37s", with ", N skipped" when some skipped themselves (listed
    # above it by -rs). No allowlist here: under CI a skip fails.
    check_count python-tools "$(grep -oE '[0-9]+ passed' .build/test-logs/python-tools.log | tail -1 | cut -d' ' -f1)"
    if [[ "${CI:-}" == true ]] && grep -qE '[0-9]+ skipped' .build/test-logs/python-tools.log; then
        echo "test.sh: Python tool tests skipped themselves (listed above); CI fails on a skipped test" >&2
        return 1
    fi
}

# Every checked-in fuzz seed once through the plain debug build of bridge-fuzz (seconds): a seed that now crashes or
# breaks an invariant fails the run before the fuzzing stage, whose build takes minutes.
stage_replay() {
    scripts/fuzz.sh --replay .build-address/debug/bridge-fuzz
}

# The integration suites run the binary that ships (dist/, the one in the .deb: release, static Swift runtime,
# stripped), not the debug build the unit tests cover; ShippedBinaryTests checks that it is. A BRIDGE_BINARY given
# outside CI still wins (a developer trying another build).
stage_integration() (
    use_sanitizer address
    local shipped status=0
    shipped="$ROOT/dist/directus-bridge-$(tr -d '[:space:]' <VERSION)-linux-$(dpkg --print-architecture)"
    if [[ -n "${BRIDGE_BINARY:-}" ]]; then
        integration_tests || status=$?
        check_reports "$status"
        return
    fi
    if [[ ! -x "$shipped" ]]; then
        echo "test.sh: no $shipped: the integration stage tests the shipped binary; run --stage=package first" >&2
        return 1
    fi
    # Built from this commit, so a dist/ left from an older checkout is never what passes.
    local head
    if head="$(git rev-parse HEAD 2>/dev/null | cut -c1-12)" && [[ -n "$head" ]] && ! "$shipped" --version | grep -q "commit $head"; then
        echo "test.sh: $shipped says \"$("$shipped" --version)\", not commit $head: run --stage=package first" >&2
        return 1
    fi
    BRIDGE_BINARY="$shipped" BRIDGE_SHIPPED_BINARY=1 integration_tests || status=$?
    check_reports "$status"
)

# The unit tests, built by `build` with AddressSanitizer: they catch what a plain run catches and memory errors
# besides.
stage_unit() (
    use_sanitizer address
    status=0
    unit_tests || status=$?
    check_reports "$status"
)

# Every fuzz target briefly over its seed corpus (docs/RELIABILITY.md "Fuzzing"); a crash fails the run. A fixed
# seed: CI explores the same inputs on the same code (as many as the machine manages in the time), so a red run
# points at a change, not at luck; the long runs (scripts/fuzz.sh 600) are where new inputs are found.
stage_fuzz() {
    if ((${BRIDGE_FUZZ_SECONDS:-15} > 0)); then
        BRIDGE_FUZZ_SEED="${BRIDGE_FUZZ_SEED:-1}" scripts/fuzz.sh "${BRIDGE_FUZZ_SECONDS:-15}"
    fi
}

if [[ "${1:-}" == --stage=* ]]; then
    stage="${1#--stage=}"
    [[ " ${STAGES[*]} " == *" $stage "* ]] || {
        echo "test.sh: --stage takes one of: ${STAGES[*]}" >&2
        exit 2
    }
    "stage_${stage//-/_}"
    exit
fi

if (($#)); then
    swift build --build-tests
    stage_tools
    swift test --skip-build "$@"
    exit
fi
stage_build
stage_package
stage_tools
stage_replay
stage_integration
stage_unit
stage_fuzz
