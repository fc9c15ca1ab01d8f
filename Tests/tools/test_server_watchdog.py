"""broker_peers/nats_server.py, the watchdog every test server runs under (WatchedServer, the soak's servers), takes
the server's own children with it. rabbitmq-server is a script that runs the Erlang VM as its child: killing the
script alone left the VM running (and its port, Mnesia directory and memory taken) after every test run that used a
shared RabbitMQ node, since a suite's shared node is never stopped by the test process itself.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

WATCHDOG = Path(__file__).resolve().parent / "broker_peers" / "nats_server.py"
# A "server" that runs a child of its own, as rabbitmq-server runs the VM, and writes the child's pid.
SERVER = "sleep 300 & echo $! > {pid_file}; wait"


def gone(pid: int) -> bool:
    """Whether `pid` no longer runs (never started, reaped, or a zombie waiting for its new parent)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2] == "Z"


def wait_for(condition, seconds: float = 20) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def start_server_child(tmp_path: Path, parent_code: str) -> tuple[subprocess.Popen, int]:
    """A stand-in for the test process (`parent_code` runs after it started the watchdog as `watchdog`, on a server
    whose child writes its pid); returns it and the server's child's pid."""
    pid_file = tmp_path / "child.pid"
    command = [sys.executable, str(WATCHDOG), "sh", "-c", SERVER.format(pid_file=pid_file)]
    parent = subprocess.Popen([sys.executable, "-c", f"""
import os, signal, subprocess, sys, time
watchdog = subprocess.Popen({command!r}, stdout=subprocess.PIPE)
server = int(watchdog.stdout.readline().split()[1])
{parent_code}
time.sleep(300)
"""])
    assert wait_for(lambda: pid_file.exists() and pid_file.read_text().strip().isdigit()), "the server never started"
    return parent, int(pid_file.read_text())


def test_the_servers_children_go_when_the_test_process_is_gone(tmp_path: Path) -> None:
    parent, child = start_server_child(tmp_path, "")
    assert not gone(child)
    parent.kill()
    parent.wait()
    assert wait_for(lambda: gone(child)), "the server's child outlived the test process"


def test_the_servers_children_go_when_the_server_is_killed(tmp_path: Path) -> None:
    # The test kills the server itself (a crash as clients see it): its children must not stay behind either.
    parent, child = start_server_child(tmp_path, "time.sleep(0.5); os.kill(server, signal.SIGKILL)")
    try:
        assert wait_for(lambda: gone(child)), "the killed server's child stayed"
    finally:
        parent.kill()
        parent.wait()
