"""http_peers/nginx_peer.py reports READY only for a port its own nginx listens on."""
from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

TOOLS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(TOOLS, "http_peers"))

import nginx_peer  # noqa: E402

pytestmark = pytest.mark.skipif(not os.path.exists("/usr/sbin/nginx"), reason="scripts/bootstrap.sh installs nginx")


def test_ready_port_accepts_connections():
    process = subprocess.Popen([sys.executable, os.path.join(TOOLS, "http_peers", "nginx_peer.py")],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = process.stdout.readline().strip()
        assert line.startswith("READY "), line
        socket.create_connection(("127.0.0.1", int(line.split()[1])), timeout=5).close()
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_port_another_process_took_is_not_reported_ready(monkeypatch, capfd):
    # The port nginx is given is taken before nginx binds it: a connection to it succeeds (it reaches the other
    # listener), which the peer once took for nginx being ready.
    squatter = socket.socket()
    squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    squatter.bind(("127.0.0.1", 0))
    squatter.listen()
    with squatter:
        monkeypatch.setattr(nginx_peer, "free_port", lambda: squatter.getsockname()[1])
        monkeypatch.setattr(sys, "argv", ["nginx_peer.py"])
        monkeypatch.setattr(sys, "stderr", sys.__stderr__)  # nginx's output goes there: a real descriptor
        assert nginx_peer.main() == 1
    assert "READY" not in capfd.readouterr().out
