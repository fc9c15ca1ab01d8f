"""Runs nats-server for a test so that it never outlives the test process that started it.

    python nats_server.py NATS_SERVER_PATH [ARGS...]

Starts nats-server as a child, prints `PID <pid>` (the test kills that process itself to simulate a crash), and
exits with the child. A thread checks every half second whether the test process (our parent) is gone; then it
kills nats-server and exits, so a test run that crashed or was killed leaves no server behind.

Any server binary runs under it. The server runs in a process group of its own, and whatever of that group is left
goes with it (SIGKILL) when the test process is gone or the server exits: rabbitmq-server is a script whose Erlang
VM is its child, which outlived a script killed alone. A daemon a server starts for the whole machine (epmd) leaves
the group by itself and stays.
"""
import os
import signal
import subprocess
import sys
import threading
import time


def main() -> None:
    # Foundation's Process passes its thread's blocked signals on; nats-server must see SIGTERM and SIGINT.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT})
    parent = os.getppid()
    child = subprocess.Popen(sys.argv[1:], start_new_session=True)
    print(f"PID {child.pid}", flush=True)

    def kill_group() -> None:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # nothing of it is left

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                kill_group()
                os._exit(0)

    threading.Thread(target=watch, daemon=True).start()
    status = child.wait()
    kill_group()
    sys.exit(status)


if __name__ == "__main__":
    main()
