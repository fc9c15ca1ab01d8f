"""scripts/lib/hang_report.py, which .ci/run starts beside each stage: it must name the tests a Swift Testing log
started and never finished, and print the stacks of the stage's test processes (found by process group and name)
grouped by their innermost frames, so a stage that hangs on CI says where."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "scripts" / "lib"))

import hang_report  # noqa: E402

LOG = """\u25c7 Test run started.
\u25c7 Suite SignalHandlersTests started.
\u25c7 Test aSignalRightAfterInstallingIsHandled() started.
\u25c7 Test settingsAreChecked() started.
\u25c7 Test settingsAreChecked() started.
\u25c7 Test echoesTextOfBoundarySizes(size:) started.
\u25c7 Test case passing 1 argument size \u2192 125 to echoesTextOfBoundarySizes(size:) started.
\u25c7 Test writesAfterASIGHUPGoToTheNewFileRetriesToo() started.
\u25c7 Test "a display name with spaces" started.
\u2714 Test settingsAreChecked() passed after 0.012 seconds.
\u2714 Test echoesTextOfBoundarySizes(size:) with 6 test cases passed after 31.519 seconds.
\u2718 Test aSignalRightAfterInstallingIsHandled() recorded an issue at SignalHandlersTests.swift:28:13: Expectation failed
\u2718 Test aSignalRightAfterInstallingIsHandled() failed after 1.5 seconds with 1 issue.
\u2714 Suite SignalHandlersTests passed after 32.1 seconds.
"""


def test_the_tests_started_and_not_finished_are_named_once_each() -> None:
    assert hang_report.unfinished_tests(LOG) == [
        "settingsAreChecked()",
        "writesAfterASIGHUPGoToTheNewFileRetriesToo()",
        '"a display name with spaces"',
    ]
    finished = LOG + "\u2714 Test settingsAreChecked() passed after 0.1 seconds.\n"
    assert "settingsAreChecked()" not in hang_report.unfinished_tests(finished)


BACKTRACE = """
Thread 3 (Thread 0x7f00 (LWP 12) "bridge-blocking"):
#0  0x00007f in __futex_abstimed_wait_common64 (private=0) at ./nptl/futex-internal.c:57
#1  __pthread_cond_wait_common (abstime=0x0) at ./nptl/pthread_cond_wait.c:503
#2  0x0000aa in $s12BridgeSystem16BlockingExecutorC10workerLoopyyF () at /x/BlockingExecutor.swift:130

Thread 2 (Thread 0x7f01 (LWP 11) "bridge-blocking"):
#0  0x00007f in __futex_abstimed_wait_common64 (private=0) at ./nptl/futex-internal.c:57
#1  __pthread_cond_wait_common (abstime=0x0) at ./nptl/pthread_cond_wait.c:503
#2  0x0000aa in $s12BridgeSystem16BlockingExecutorC10workerLoopyyF () at /x/BlockingExecutor.swift:130

Thread 1 (Thread 0x7f02 (LWP 10) "xctest"):
#0  0x00007f in __GI___clock_nanosleep (clock_id=0) at ../sysdeps/unix/sysv/linux/clock_nanosleep.c:71
#1  0x0000bb in main ()
"""


def test_threads_with_the_same_stack_are_one_line_with_their_count() -> None:
    lines = hang_report.grouped_stacks(BACKTRACE)
    assert len(lines) == 2
    assert lines[0].startswith("  2 x __futex_abstimed_wait_common64 <- __pthread_cond_wait_common <- ")
    assert "workerLoop" in lines[0]
    assert lines[1] == "  1 x __GI___clock_nanosleep <- main"


@pytest.mark.skipif(shutil.which("gdb") is None, reason="gdb is not installed (scripts/bootstrap.sh installs it)")
def test_a_watched_stage_reports_its_unfinished_tests_and_its_processes_stacks(tmp_path: Path) -> None:
    logs = tmp_path / "test-logs"
    logs.mkdir()
    # A process group like the one `timeout` leads in .ci/run, with a process that hangs in a sleep.
    stage = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        # A log of an earlier stage is left out; the one the stage writes after the watcher started is read.
        (logs / "integration.log").write_text(LOG)
        os.utime(logs / "integration.log", (time.time() - 60, time.time() - 60))
        watcher = subprocess.Popen(
            [sys.executable, str(REPOSITORY / "scripts/lib/hang_report.py"), "watch", "--after", "2",
             "--pgid", str(stage.pid), "--stage", "unit", "--logs", str(logs), "--processes", "^sleep$"],
            stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        (logs / "unit.log").write_text(LOG)
        _, report = watcher.communicate(timeout=240)
    finally:
        stage.kill()
        stage.wait()
    assert watcher.returncode == 0, report
    assert "integration.log" not in report
    assert "unit.log: 3 test(s) started and not finished" in report
    assert "writesAfterASIGHUPGoToTheNewFileRetriesToo()" in report
    assert f"process {stage.pid} (sleep 60)" in report, report
    assert "nanosleep" in report, report
    assert (logs / f"stacks-unit-{stage.pid}.txt").read_text().count("Thread ") >= 1
