"""scripts/lib/counting.sh fails a suite that ran fewer tests than its floor, printed no count, or (under CI) skipped
a test scripts/test-floors does not allow; a stub `swift` plays the runner, so each case is one fake run."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]

FLOORS = """floor unit 3
skip Mod.Suite/allowed() the reason it may skip
skip Mod.Suite/reasonless()
"""

# Prints $STUB_OUT, writes $STUB_XML where SwiftPM puts Swift Testing's JUnit file, exits $STUB_STATUS.
STUB = """#!/usr/bin/env bash
while (($#)); do
    if [[ "$1" == --xunit-output ]]; then printf '%s' "$STUB_XML" >"${2%.xml}-swift-testing.xml"; fi
    shift
done
printf '%s\\n' "$STUB_OUT"
exit "${STUB_STATUS:-0}"
"""


def junit(passed: list[str], skipped: list[str]) -> str:
    cases = [f'<testcase classname="Mod.Suite" name="{name}" />' for name in passed]
    cases += [f'<testcase classname="Mod.Suite" name="{name}"><skipped /></testcase>' for name in skipped]
    return "<testsuites><testsuite>" + "".join(cases) + "</testsuite></testsuites>"


def summary(count: int, outcome: str = "passed") -> str:
    mark = "\u2714" if outcome == "passed" else "\u2718"
    return f"{mark} Test run with {count} tests in 1 suite {outcome} after 0.1 seconds.\n" \
           "\t Executed 0 tests, with 0 failures (0 unexpected) in 0.0 (0.0) seconds"


@pytest.fixture
def run(tmp_path: Path):
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "test-floors").write_text(FLOORS)
    (tmp_path / "bin").mkdir()
    stub = tmp_path / "bin" / "swift"
    stub.write_text(STUB)
    stub.chmod(stub.stat().st_mode | stat.S_IXUSR)

    def counted(output: str, xml: str, ci: bool, status: int = 0) -> subprocess.CompletedProcess[str]:
        environment = {k: v for k, v in os.environ.items() if k != "CI"}
        environment.update(ROOT=str(tmp_path), BRIDGE_PYTHON=sys.executable, STUB_OUT=output, STUB_XML=xml,
                           STUB_STATUS=str(status), PATH=f"{tmp_path / 'bin'}:{os.environ['PATH']}")
        if ci:
            environment["CI"] = "true"
        script = f'set -euo pipefail; source "{REPOSITORY}/scripts/lib/counting.sh"; counted_swift_test unit'
        return subprocess.run(["bash", "-c", script], env=environment, capture_output=True, text=True, timeout=60)

    return counted


def test_a_run_at_its_floor_passes(run):
    result = run(summary(3), junit(["a()", "b()", "c()"], []), ci=True)
    assert result.returncode == 0, result.stderr
    assert "unit: 3 tests (floor 3)" in result.stderr


def test_a_run_below_its_floor_fails(run):
    result = run(summary(2), junit(["a()", "b()"], []), ci=False)
    assert result.returncode == 1
    assert "fewer than its floor of 3" in result.stderr


def test_a_run_that_printed_no_count_fails(run):
    # A runner that died before its closing line (a crash, a signal) exits non-zero too, but this fails on the
    # count alone: the stub exits 0.
    result = run("Test Suite 'All tests' started", junit([], []), ci=False)
    assert result.returncode == 1
    assert "an unknown number of tests" in result.stderr


def test_xctest_tests_are_counted_with_swift_testing_ones(run):
    output = "\u2714 Test run with 2 tests in 1 suite passed after 0.1 seconds.\n Executed 1 test, with 0 failures"
    assert run(output, junit(["a()", "b()"], []), ci=True).returncode == 0


def test_a_failing_runner_fails_the_suite_whatever_its_count(run):
    result = run(summary(5, "failed"), junit(["a()"] * 5, []), ci=False, status=1)
    assert result.returncode == 1


def test_a_skip_not_allowed_fails_under_ci_only(run):
    xml = junit(["a()", "b()"], ["notAllowed()"])
    in_ci = run(summary(3), xml, ci=True)
    assert in_ci.returncode == 1
    assert "Mod.Suite/notAllowed() skipped itself" in in_ci.stderr
    elsewhere = run(summary(3), xml, ci=False)
    assert elsewhere.returncode == 0, elsewhere.stderr
    assert "Mod.Suite/notAllowed() skipped (CI would fail on it)" in elsewhere.stderr


def test_an_allowed_skip_passes_under_ci(run):
    result = run(summary(3), junit(["a()", "b()"], ["allowed()"]), ci=True)
    assert result.returncode == 0, result.stderr
    assert "allowed() skipped (allowed in scripts/test-floors)" in result.stderr


def test_an_allowlist_line_without_a_reason_allows_nothing(run):
    assert run(summary(3), junit(["a()", "b()"], ["reasonless()"]), ci=True).returncode == 1


def test_a_suite_without_a_floor_fails(run, tmp_path):
    (tmp_path / "scripts" / "test-floors").write_text("floor integration 3\n")
    result = run(summary(3), junit(["a()", "b()", "c()"], []), ci=False)
    assert result.returncode == 1
    assert "no floor for unit" in result.stderr


def test_every_swift_test_a_ci_stage_runs_is_counted():
    """The suites CI runs (scripts/test.sh's `unit_tests` and `integration_tests`) each go through
    `counted_swift_test`: a raw `swift test` whose filter matched nothing would exit 0, and its stage would pass
    having checked nothing (the log schema check ran that way until 2026-12-07)."""
    text = (REPOSITORY / "scripts" / "test.sh").read_text()
    for function in ("unit_tests", "integration_tests"):
        start = text.index(f"\n{function}() {{")
        body = text[start:text.index("\n}\n", start)]
        commands = [line.split("#")[0] for line in body.splitlines()[1:]]
        raw = [line.strip() for line in commands if "swift test" in line and "echo" not in line]
        assert raw == [], f"{function} runs swift test without counting it: {raw}"
