"""Runs a test peer script so that it never outlives the test process that started it.

    python run_peer.py SCRIPT [ARGS...]

Tests start every Python helper through this wrapper (Tests/BridgeTestSupport/PythonServer.swift). It unblocks the
signals a Swift parent may have blocked (Foundation's Process passes its thread's signal mask on), starts a daemon
thread that exits the process when its parent is gone (a test run that crashed or was killed leaves no server
behind), and then runs SCRIPT as `__main__` with ARGS.
"""
import os
import runpy
import signal
import sys
import threading
import time


def _exit_when_orphaned(parent: int) -> None:
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(0)


def main() -> None:
    if len(sys.argv) < 2:
        print("usage: run_peer.py SCRIPT [ARGS...]", file=sys.stderr)
        sys.exit(64)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT})
    threading.Thread(target=_exit_when_orphaned, args=(os.getppid(),), daemon=True).start()
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
