#!/usr/bin/env python3
"""What a CI stage is doing when it is about to run out of time: the tests its Swift Testing logs started and never
finished, and every thread's stack in its test processes (gdb), grouped by stack.

.ci/run starts `hang_report.py watch` beside each stage, timed to fire shortly before the stage's limit, so a stage
that hangs says where before `timeout` kills it. Without it, the unit stage of 2026-12-06 that hung on the project's
CI left only "did not finish within 900 s" (docs/RELIABILITY.md "What CI runs"). Checked by
Tests/tools/test_hang_report.py.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

# Swift Testing's lines for a test (not a suite): "◇ Test name() started.", "✔ Test name() passed after 1.2
# seconds.", "✘ Test name(x:) with 3 test cases failed after 4.5 seconds with 1 issue.", "➜ Test name() skipped."
STARTED = re.compile(r"^\S+ Test (.+?) started\.$")
FINISHED = re.compile(r"^\S+ Test (.+?)(?: with \d+ test cases?)? (?:passed|failed) after ")

# One frame's function in `thread apply all bt` output (threads start with "Thread N (").
FRAME = re.compile(r"^#\d+\s+(?:0x[0-9a-f]+ in )?(\S+?)(?: \(| at |$)")

FRAMES_SHOWN = 8


def unfinished_tests(log: str) -> list[str]:
    """Tests the log started and never finished, in the order they started (a name started twice and finished once,
    as two suites' tests of the same name can be, counts once)."""
    started: list[str] = []
    finished: collections.Counter[str] = collections.Counter()
    for line in log.splitlines():
        line = line.strip()
        # The whole run's own lines, and a parameterised test's cases (a "started" line each, never a finished one).
        if line[1:].startswith((" Test run ", " Test case ")):
            continue
        if match := STARTED.match(line):
            started.append(match.group(1))
        elif match := FINISHED.match(line):
            finished[match.group(1)] += 1
    unfinished = []
    for name in started:
        if finished[name] > 0:
            finished[name] -= 1
        else:
            unfinished.append(name)
    return unfinished


def thread_stacks(backtrace: str) -> list[list[str]]:
    """Each thread's frames (function names, innermost first) from gdb's `thread apply all bt`."""
    stacks: list[list[str]] = []
    for line in backtrace.splitlines():
        if line.startswith("Thread "):
            stacks.append([])
        elif stacks and (match := FRAME.match(line)):
            stacks[-1].append(match.group(1))
    return stacks


def demangled(names: set[str]) -> dict[str, str]:
    """Swift names made readable by the toolchain's demangler when it is there; the names as they are otherwise."""
    ordered = sorted(names)
    tool = shutil.which("swift-demangle")
    command = [tool] if tool else (["swift", "demangle"] if shutil.which("swift") else None)
    if not command or not ordered:
        return {name: name for name in ordered}
    try:
        result = subprocess.run(command + ["--simplified", "--compact"], input="\n".join(ordered) + "\n",
                                capture_output=True, text=True, timeout=60)
        lines = result.stdout.splitlines()
        if result.returncode == 0 and len(lines) == len(ordered):
            return dict(zip(ordered, lines))
    except (OSError, subprocess.SubprocessError):
        pass
    return {name: name for name in ordered}


def grouped_stacks(backtrace: str) -> list[str]:
    """One line per distinct stack (its first frames, innermost first), the most common first, with its count."""
    stacks = [stack[:FRAMES_SHOWN] for stack in thread_stacks(backtrace)]
    names = demangled({frame for stack in stacks for frame in stack})
    counts = collections.Counter(" <- ".join(names[frame][:140] for frame in stack) for stack in stacks)
    return [f"{count:3d} x {stack}" for stack, count in counts.most_common()]


def stage_processes(group: int, pattern: re.Pattern[str]) -> list[tuple[int, str]]:
    """The processes of process group `group` whose executable's name matches `pattern`."""
    listing = subprocess.run(["ps", "-e", "-o", "pid=,pgid=,args="], capture_output=True, text=True).stdout
    found = []
    for line in listing.splitlines():
        fields = line.split(None, 2)
        if len(fields) == 3 and int(fields[1]) == group and pattern.search(os.path.basename(fields[2].split()[0])):
            found.append((int(fields[0]), fields[2]))
    return found


def backtrace_of(pid: int) -> str:
    """gdb's `thread apply all bt` of a running process (attached and detached again)."""
    result = subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx", "-ex", "set pagination off",
                             "-ex", "thread apply all bt 30"], capture_output=True, text=True, timeout=180)
    return result.stdout


def report(stage: str, group: int, pattern: re.Pattern[str], logs: Path, since: float, out) -> None:
    print(f"hang report: stage {stage} is about to reach its time limit", file=out)
    for log in sorted(logs.glob("*.log")) if logs.is_dir() else []:
        if log.stat().st_mtime < since:
            continue
        unfinished = unfinished_tests(log.read_text(errors="replace"))
        print(f"hang report: {log.name}: {len(unfinished)} test(s) started and not finished", file=out)
        for name in unfinished:
            print(f"    {name}", file=out)
    processes = stage_processes(group, pattern)
    if not processes:
        print(f"hang report: no process of the stage matches {pattern.pattern}", file=out)
    if processes and not shutil.which("gdb"):
        print("hang report: gdb is not installed: no stacks (scripts/bootstrap.sh installs it)", file=out)
        return
    for pid, command in processes:
        try:
            backtrace = backtrace_of(pid)
        except (OSError, subprocess.SubprocessError) as error:
            print(f"hang report: gdb on {pid} failed: {error}", file=out)
            continue
        saved = logs / f"stacks-{stage}-{pid}.txt"
        try:
            logs.mkdir(parents=True, exist_ok=True)
            saved.write_text(backtrace)
        except OSError:
            saved = None
        print(f"hang report: process {pid} ({command[:120]}), threads grouped by their innermost frames"
              f"{f' (whole: {saved})' if saved else ''}:", file=out)
        for line in grouped_stacks(backtrace):
            print(f"  {line}", file=out)
    out.flush()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["watch"])
    parser.add_argument("--after", type=float, required=True, help="seconds to wait before reporting")
    parser.add_argument("--pgid", type=int, required=True, help="the stage's process group")
    parser.add_argument("--stage", required=True)
    parser.add_argument("--logs", type=Path, required=True, help="the folder of the stage's test logs")
    parser.add_argument("--processes", default=r"\.xctest$", help="executables to take stacks of (a regex)")
    arguments = parser.parse_args()
    since = time.time()
    time.sleep(max(0.0, arguments.after))
    report(arguments.stage, arguments.pgid, re.compile(arguments.processes), arguments.logs, since, sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
