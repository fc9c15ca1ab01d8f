"""Runs nats-server for a test so that it never outlives the test process that started it.

    python nats_server.py NATS_SERVER_PATH [ARGS...]

Starts nats-server as a child, prints `PID <pid>` (the test kills that process itself to simulate a crash), and
exits with the child. A thread checks every half second whether the test process (our parent) is gone; then it
kills nats-server and exits, so a test run that crashed or was killed leaves no server behind.
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
    child = subprocess.Popen(sys.argv[1:])
    print(f"PID {child.pid}", flush=True)

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                child.kill()
                os._exit(0)

    threading.Thread(target=watch, daemon=True).start()
    sys.exit(child.wait())


if __name__ == "__main__":
    main()
