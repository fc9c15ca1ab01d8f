"""A private nginx answering 204 to everything, for the HTTP/2 test and the delivery benchmark.

Writes a config into a temporary directory, starts `nginx -c <conf> -p <dir>` in the foreground
(`daemon off;`, no access log) on a free 127.0.0.1 port, prints `READY <port>` once it accepts connections,
and stops nginx when it receives SIGTERM/SIGINT or stdin closes. With --tls-cert/--tls-key it serves HTTPS
with HTTP/2 offered through ALPN.

    python Tests/tools/http_peers/nginx_peer.py [--tls-cert PEM --tls-key KEY] [--workers N]
"""
from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

CONFIG = """
daemon off;
master_process on;
worker_processes {workers};
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 4096; multi_accept on; }}
http {{
    access_log off;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    keepalive_requests 1000000;
    keepalive_timeout 60s;
    client_body_buffer_size 64k;
    server {{
        listen 127.0.0.1:{port}{listen_extra};
        {tls}
        location / {{ {location} }}
    }}
    server {{
        listen unix:{dir}/backend.sock;
        location / {{ return 204; }}
    }}
}}
"""


def die_with_parent() -> None:
    """In the nginx child: get SIGTERM when this script dies, even by SIGKILL, so no nginx is left behind."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def listens(pid: int, port: int) -> bool:
    """Whether process `pid` holds a socket listening on 127.0.0.1:`port`. A connection that succeeds proves less:
    when another process took the port between `free_port` and nginx's bind, it reaches that process."""
    with open("/proc/net/tcp") as table:
        rows = [line.split() for line in table.readlines()[1:]]
    wanted = {f"socket:[{row[9]}]" for row in rows if row[3] == "0A" and row[1] == f"0100007F:{port:04X}"}
    try:
        descriptors = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for descriptor in descriptors:
        try:
            if os.readlink(f"/proc/{pid}/fd/{descriptor}") in wanted:
                return True
        except OSError:
            continue
    return False


def wait_listening(port: int, process: subprocess.Popen, timeout: float = 10.0) -> bool:
    # Stretched like every wait of the tests (BRIDGE_TEST_PATIENCE, set by the test support): a loaded machine
    # can take longer than 10 s to start nginx.
    deadline = time.monotonic() + timeout * float(os.environ.get("BRIDGE_TEST_PATIENCE") or 1)
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        if listens(process.pid, port):  # nginx's master process binds and listens before it starts its workers
            return True
        time.sleep(0.05)
    return False


def unblock_signals() -> None:
    """A parent may start us with SIGTERM/SIGINT blocked (Foundation's Process on Linux passes its thread's
    signal mask on); unblock them so `stop()` ends us gracefully and children inherit a clean mask."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT})


def main() -> int:
    unblock_signals()
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--read-body", action="store_true",
                        help="read each request body before answering (proxied to a local 204 backend); "
                             "libcurl 7.88 reports an HTTP/2 stream error when a server answers a POST "
                             "before reading its body")
    parser.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx")
    args = parser.parse_args()

    directory = tempfile.mkdtemp(prefix="bridge-nginx-")
    os.chmod(directory, 0o755)  # workers run as an unprivileged user and must reach backend.sock
    port = free_port()
    tls = ""
    listen_extra = ""
    if args.tls_cert:
        listen_extra = " ssl http2"
        tls = f"ssl_certificate {args.tls_cert}; ssl_certificate_key {args.tls_key};"
    with open(os.path.join(directory, "nginx.conf"), "w") as conf:
        conf.write(CONFIG.format(dir=directory, port=port, tls=tls, listen_extra=listen_extra,
                                 workers=args.workers,
                                 location=(f"proxy_pass http://unix:{directory}/backend.sock;" if args.read_body
                                           else "return 204;")))
    process = subprocess.Popen([args.nginx, "-c", os.path.join(directory, "nginx.conf"), "-p", directory],
                               stdout=sys.stderr, stderr=sys.stderr, preexec_fn=die_with_parent)

    class Stop(Exception):
        pass

    def request_stop(*_):
        raise Stop()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    status = 0
    try:
        if not wait_listening(port, process):
            log = os.path.join(directory, "error.log")
            sys.stderr.write(open(log).read() if os.path.exists(log) else "nginx did not start\n")
            status = 1
        else:
            print(f"READY {port}", flush=True)
            while process.poll() is None:  # polling: a signal handler must not race a blocking wait()
                time.sleep(0.2)
    except Stop:
        pass
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=3)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(directory, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
