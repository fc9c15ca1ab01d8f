# Counting what a test run ran (sourced by scripts/test.sh): each whole suite's count, as its own runner reports it,
# against its floor in scripts/test-floors, and the tests that skipped themselves, which fail a CI run (CI=true)
# unless that file allows them with a reason. Needs ROOT (the repository) and BRIDGE_PYTHON (the test venv's Python,
# which reads Swift Testing's JUnit file). Checked by Tests/tools/test_counting.py with a stub `swift`.

# The floor of suite $1 in scripts/test-floors; a suite without one is an error, not a floor of 0.
floor() {
    local value
    value="$(awk -v suite="$1" '$1 == "floor" && $2 == suite { print $3 }' "$ROOT/scripts/test-floors")"
    [[ "$value" =~ ^[0-9]+$ ]] || { echo "test.sh: no floor for $1 in scripts/test-floors" >&2; return 1; }
    echo "$value"
}

# Fails when suite $1 counted $2 tests (empty: the runner never printed its count, e.g. it crashed) below its floor.
check_count() {
    local suite="$1" counted="$2" minimum
    minimum="$(floor "$suite")" || return 1
    if [[ -z "$counted" ]] || ((counted < minimum)); then
        echo "test.sh: the $suite suite ran ${counted:-an unknown number of} tests, fewer than its floor of $minimum" \
            "(scripts/test-floors): a test, a target or a filter went missing" >&2
        return 1
    fi
    echo "== $suite: $counted tests (floor $minimum)" >&2
}

# The Swift tests that skipped themselves, as module.Suite/name(), from Swift Testing's JUnit file $1. Under CI each
# fails the run unless scripts/test-floors allows it with a reason; elsewhere they are only named.
check_skips() {
    local suite="$1" xunit="$2" test skipped unexpected=0
    [[ -f "$xunit" ]] || { echo "test.sh: the $suite suite wrote no $xunit" >&2; return 1; }
    skipped="$("$BRIDGE_PYTHON" -c '
import sys, xml.etree.ElementTree as tree
for case in tree.parse(sys.argv[1]).iter("testcase"):
    if case.find("skipped") is not None:
        print(case.get("classname") + "/" + case.get("name"))' "$xunit")" || {
        echo "test.sh: cannot read $xunit" >&2
        return 1
    }
    while read -r test; do
        [[ -n "$test" ]] || continue
        if awk -v test="$test" '$1 == "skip" && $2 == test && NF > 2 { found = 1 } END { exit !found }' \
            "$ROOT/scripts/test-floors"; then
            echo "== $suite: $test skipped (allowed in scripts/test-floors)" >&2
        elif [[ "${CI:-}" == true ]]; then
            echo "test.sh: $test skipped itself; CI fails on a skipped test that scripts/test-floors does not allow" >&2
            unexpected=1
        else
            echo "== $suite: $test skipped (CI would fail on it)" >&2
        fi
    done <<<"$skipped"
    return "$unexpected"
}

# The tests a `swift test` log $1 counted, as the runners report them: Swift Testing's closing line ("Test run with N
# tests in M suites passed/failed", skipped tests included) plus XCTest's last "Executed N tests" (its whole run;
# 0 today, the package has no XCTest tests). Empty when Swift Testing printed no closing line (the runner died).
swift_test_count() {
    local swift_testing xctest
    swift_testing="$(sed -n 's/.*Test run with \([0-9]*\) tests\{0,1\} .*/\1/p' "$1" | tail -1)"
    xctest="$(sed -n 's/.*Executed \([0-9]*\) tests\{0,1\},.*/\1/p' "$1" | tail -1)"
    if [[ -n "$swift_testing" ]]; then echo $((swift_testing + ${xctest:-0})); fi
}

# `swift test` for suite $1 with the remaining arguments, counted (swift_test_count) and checked for skips. A filter
# matching nothing exits 0; the floor catches it.
counted_swift_test() {
    local suite="$1" logs="$ROOT/.build/test-logs" status=0 counted
    shift
    mkdir -p "$logs"
    rm -f "$logs/$suite".* "$logs/$suite"-swift-testing.xml
    swift test --skip-build --xunit-output "$logs/$suite.xml" "$@" 2>&1 | tee "$logs/$suite.log" || status=$?
    counted="$(swift_test_count "$logs/$suite.log")"
    check_count "$suite" "$counted" || status=1
    check_skips "$suite" "$logs/$suite-swift-testing.xml" || status=1
    return "$status"
}
