"""The emulator's fault knobs for the bridge's risky-path tests: a silent server, early token expiry, TLS."""
from __future__ import annotations

import asyncio
import json
import os
import ssl
import subprocess
import sys
import tempfile

import aiohttp
import pytest
import websockets

import certs
from directus_emulator.testing import (ADMIN, ADMIN_TOKEN, EmulatorProcess, closed_code, make_runner, receive,
                                       silent, subscribe)

TOOLS = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def emulator():
    process = EmulatorProcess()
    yield process
    assert process.stop() == 0
    assert "Traceback" not in process.log(), process.log()


@pytest.fixture
def run(emulator):
    return make_runner(emulator)


def test_silent_server_sends_nothing_and_closes_nothing(run):
    async def check(api):
        established = await api.authed_socket()
        await subscribe(established, "articles", uid="a")
        await api.control("settings", {"silent": True, "heartbeat_period": 0.2, "auth_timeout": 0.3})
        await api.call("POST", "/items/articles", ADMIN_TOKEN, json_body={"title": "unheard"})
        await established.send(json.dumps({"type": "ping"}))
        # An upgrade still succeeds, but neither the handshake answer nor its timeout's close arrives.
        fresh = await api.socket()
        await fresh.send(json.dumps({"type": "auth", **ADMIN}))
        assert await silent(established, 1.0) and await silent(fresh, 0.1)
        stats = await api.stats()
        assert stats["server_pings_sent"] == 0 and stats["closes"] == {}
        assert stats["connections_current"] == 2

        await api.control("settings", {"silent": False})
        assert await receive(established, 1.0) == {"type": "ping"}  # the heartbeat is back
        await fresh.close()
        await established.close()
    run(check)


def test_expire_tokens_sends_token_expired_now(run):
    async def check(api):
        login = await api.socket()
        await login.send(json.dumps({"type": "auth", **ADMIN}))
        refresh = (await receive(login))["refresh_token"]
        static = await api.authed_socket(ADMIN_TOKEN)
        await api.control("settings", {"auth_timeout": 0.5})
        answer = await api.control("expire-tokens", {"email": ADMIN["email"]})
        assert answer["expired"] == 1  # the static token never expires on the socket (docs/directus-protocol.md §13.16)
        assert await receive(login) == {"type": "auth", "status": "error",
                                        "error": {"code": "TOKEN_EXPIRED", "message": "Token expired."}}
        assert await silent(static, 0.2)
        await login.send(json.dumps({"type": "auth", "refresh_token": refresh}))
        assert (await receive(login))["status"] == "ok"  # re-authenticated in band: not closed
        assert await silent(login, 0.7)
        assert (await api.control("expire-tokens", {}))["expired"] == 1
        assert (await receive(login))["error"]["code"] == "TOKEN_EXPIRED"
        assert (await receive(login, 1.0))["error"]["code"] == "AUTH_TIMEOUT"
        assert await closed_code(login) == 1005
        stats = await api.stats()
        assert stats["tokens_expired"] == 2 and stats["closes"]["auth_timeout"] == 1
        await static.close()
    run(check)


def test_tls_front_pipes_https_and_wss_and_counts_refusals(emulator):
    async def check(port: int, stats_port: int, ca: str) -> None:
        context = ssl.create_default_context(cafile=ca)
        async with aiohttp.ClientSession() as session:
            async with session.get(f"https://127.0.0.1:{port}/server/ping", ssl=context) as response:
                assert response.status == 200 and await response.text() == "pong"
            with pytest.raises(aiohttp.ClientConnectorCertificateError):
                await session.get(f"https://127.0.0.1:{port}/server/ping", ssl=ssl.create_default_context())
            ws = await websockets.connect(f"wss://127.0.0.1:{port}/websocket", ssl=context, ping_interval=None)
            await ws.send(json.dumps({"type": "auth", "access_token": ADMIN_TOKEN}))
            assert await receive(ws) == {"type": "auth", "status": "ok"}
            await ws.close()
            async with session.get(f"http://127.0.0.1:{stats_port}/_front/stats") as response:
                stats = await response.json(content_type=None)
            assert stats["handshake_failures"] == 1 and stats["piped"] == 2

    with tempfile.TemporaryDirectory() as directory:
        files = certs.write_set(directory, ["127.0.0.1", "localhost"])
        front = subprocess.Popen(
            [sys.executable, "-u", os.path.join(TOOLS, "http_peers", "tls_front.py"), "--target", str(emulator.port),
             "--tls-cert", files.cert, "--tls-key", files.key], stdout=subprocess.PIPE, text=True)
        try:
            port = int(front.stdout.readline().split()[1])
            stats_port = int(front.stdout.readline().split()[1])
            asyncio.run(check(port, stats_port, files.ca))
        finally:
            front.terminate()
            assert front.wait(5) == 0


def test_limit_cap_cuts_every_read_short(run):
    async def check(api):
        try:
            await api.control("settings", {"limit_cap": 2})
            _, page = await api.call("GET", "/items/articles", ADMIN_TOKEN, limit="500", sort="id")
            assert [row["id"] for row in page["data"]] == [1, 2]
            _, rest = await api.call("GET", "/items/articles", ADMIN_TOKEN, limit="-1",
                                     filter=json.dumps({"id": {"_gt": 2}}))
            assert [row["id"] for row in rest["data"]] == [3]
            _, keyed = await api.call("GET", "/items/articles", ADMIN_TOKEN, limit="3",
                                      filter=json.dumps({"id": {"_in": [1, 2, 3]}}))
            assert len(keyed["data"]) == 2
        finally:
            await api.control("settings", {"limit_cap": 0})
        _, whole = await api.call("GET", "/items/articles", ADMIN_TOKEN, limit="500")
        assert len(whole["data"]) >= 3
    run(check)


def test_query_limit_max_refuses_a_larger_limit_as_directus_does(run):
    async def check(api):
        try:
            await api.control("settings", {"query_limit_max": 2})
            status, refused = await api.call("GET", "/items/articles", ADMIN_TOKEN, limit="3")
            assert status == 400 and refused["errors"][0]["extensions"]["code"] == "INVALID_QUERY"
            assert '"limit" must be less than or equal to 2' in refused["errors"][0]["message"]
            _, held = await api.call("GET", "/items/articles", ADMIN_TOKEN, limit="-1")
            assert len(held["data"]) == 2
            _, info = await api.call("GET", "/server/info", ADMIN_TOKEN)
            assert info["data"]["queryLimit"]["max"] == 2
        finally:
            await api.control("settings", {"query_limit_max": -1})
        _, whole = await api.call("GET", "/items/articles", ADMIN_TOKEN, limit="-1")
        assert len(whole["data"]) >= 3
    run(check)


def test_server_info_and_the_refusal_can_name_another_query_limit_max(run):
    async def check(api):
        try:
            await api.control("settings", {"query_limit_max": 2, "info_query_limit_max": "1e300",
                                           "limit_refusal_names": "1e+300"})
            _, info = await api.call("GET", "/server/info", ADMIN_TOKEN)
            assert info["data"]["queryLimit"]["max"] == 1e300
            status, refused = await api.call("GET", "/items/articles", ADMIN_TOKEN, limit="3")
            assert status == 400 and '"limit" must be less than or equal to 1e+300' in refused["errors"][0]["message"]
        finally:
            await api.control("settings", {"query_limit_max": -1, "info_query_limit_max": "",
                                           "limit_refusal_names": ""})
        _, info = await api.call("GET", "/server/info", ADMIN_TOKEN)
        assert info["data"]["queryLimit"]["max"] == -1
    run(check)
