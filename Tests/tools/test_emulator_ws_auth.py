"""The emulator's socket authentication (§2) and JSON heartbeat (§4) against directus-protocol.md."""
from __future__ import annotations

import asyncio
import json

import pytest
import websockets

from directus_emulator.testing import (ADMIN, ADMIN_TOKEN, READER, READER_TOKEN, EmulatorProcess, closed_code,
                                       make_runner, receive, silent, subscribe)


@pytest.fixture(scope="module")
def emulator():
    process = EmulatorProcess()
    yield process
    assert process.stop() == 0
    assert "Traceback" not in process.log(), process.log()  # no unhandled exception in the whole module


@pytest.fixture
def run(emulator):
    return make_runner(emulator)


def auth_error(code: str, message: str, **extra):
    return {"type": "auth", "status": "error", "error": {"code": code, "message": message}, **extra}


# Authentication (§2) ------------------------------------------------------------------------------------------

def test_handshake_login_refresh_and_token(run):
    async def check(api):
        ws = await api.socket()
        await ws.send(json.dumps({"type": "auth", **ADMIN, "uid": 7}))
        ok = await receive(ws)
        assert list(ok) == ["type", "status", "uid", "refresh_token"] and ok["uid"] == 7
        await ws.close()
        ws = await api.socket()
        await ws.send(json.dumps({"type": "auth", "refresh_token": ok["refresh_token"]}))
        rotated = await receive(ws)
        assert rotated["status"] == "ok" and rotated["refresh_token"] != ok["refresh_token"]
        status, _ = await api.call("POST", "/auth/refresh", json_body={"refresh_token": ok["refresh_token"]})
        assert status == 401  # the socket refresh rotated it (§2.3)
        await ws.close()
        ws = await api.socket()
        await ws.send(json.dumps({"type": "auth", "access_token": ADMIN_TOKEN}))
        assert await receive(ws) == {"type": "auth", "status": "ok"}  # no refresh token, no uid
        await ws.close()
    run(check)


def test_handshake_failures(run):
    async def check(api):
        for first in ({"type": "subscribe", "collection": "articles"}, {"type": "auth", **ADMIN, "password": "no"},
                      {"type": "auth"}, "not json"):
            ws = await api.socket()
            await ws.send(first if isinstance(first, str) else json.dumps(first))
            assert await receive(ws) == auth_error("AUTH_FAILED", "Authentication handshake failed.")
            assert await closed_code(ws) == 1005  # close() without a code
        await api.control("settings", {"auth_timeout": 0.2})
        ws = await api.socket()
        # The handshake timeout is AUTH_FAILED too, never AUTH_TIMEOUT (§2.2, §13.2).
        assert await receive(ws) == auth_error("AUTH_FAILED", "Authentication handshake failed.")
        assert await closed_code(ws) == 1005
        assert (await api.stats())["closes"]["handshake_failed"] == 5
    run(check)


def test_frames_before_auth_ok_are_lost(run):
    async def check(api):
        ws = await api.socket()
        await ws.send(json.dumps({"type": "auth", "access_token": ADMIN_TOKEN}))
        await ws.send(json.dumps({"type": "subscribe", "collection": "articles", "uid": "early"}))
        assert await receive(ws) == {"type": "auth", "status": "ok"}
        assert await silent(ws, 0.2)
        assert (await api.stats())["dropped_before_auth"] == 1
        await ws.close()
    run(check)


def test_strict_and_public_modes(run):
    async def check(api):
        await api.control("settings", {"auth_mode": "strict"})
        with pytest.raises(websockets.InvalidStatus) as refused:
            await api.socket()
        assert refused.value.response.status_code == 401  # raw 401 before the upgrade (§2.4)
        with pytest.raises(websockets.InvalidStatus):
            await api.socket("?access_token=wrong")
        ws = await api.socket(f"?access_token={READER_TOKEN}")
        init = await subscribe(ws, "articles", uid="s")  # no `auth ok` on the token path
        assert init["event"] == "init" and len(init["data"]) == 3
        await ws.close()

        await api.control("settings", {"auth_mode": "public"})
        ws = await api.socket()
        reply = await subscribe(ws, "articles", uid="p")
        assert reply["error"]["code"] == "FORBIDDEN" and "uid" not in reply
        await api.control("permissions", {"role": "public", "collection": "articles", "actions": ["read"]})
        assert (await subscribe(ws, "articles", uid="p"))["event"] == "init"
        await ws.send(json.dumps({"type": "auth", "access_token": "bad", "uid": 1}))
        assert await receive(ws) == auth_error("AUTH_FAILED", "Authentication failed.", uid=1)
        assert await silent(ws, 0.2)  # public mode: no close after a failed re-auth
        await ws.close()
    run(check)


def test_in_band_reauth(run):
    async def check(api):
        ws = await api.socket()
        await ws.send(json.dumps({"type": "auth", **READER}))
        first = await receive(ws)
        await ws.send(json.dumps({"type": "auth", "refresh_token": first["refresh_token"], "uid": "r"}))
        second = await receive(ws)
        assert second["uid"] == "r" and second["refresh_token"] != first["refresh_token"]
        await ws.send(json.dumps({"type": "auth"}))  # schema-invalid: silently ignored (§2.5)
        await ws.send(json.dumps({"type": "auth", "email": "not-an-email", "password": "x"}))
        assert await silent(ws, 0.2)
        await ws.send(json.dumps({"type": "auth", "access_token": "bad", "uid": "x"}))
        assert await receive(ws) == auth_error("AUTH_FAILED", "Authentication failed.", uid="x")
        assert await closed_code(ws) == 1005
    run(check)


def test_token_expiry_sequence(run):
    async def check(api):
        await api.control("settings", {"token_ttl_ms": 400, "auth_timeout": 0.5})
        ws = await api.socket()
        await ws.send(json.dumps({"type": "auth", **ADMIN}))
        assert (await receive(ws))["status"] == "ok"
        await subscribe(ws, "articles", uid="a", event="create")
        assert await receive(ws, 1.0) == auth_error("TOKEN_EXPIRED", "Token expired.")
        # Subscriptions stay and events keep flowing in the window (§2.6).
        await api.call("POST", "/items/articles", ADMIN_TOKEN, json_body={"title": "in the window"})
        event = await receive(ws)
        assert event["event"] == "create" and event["data"][0]["title"] == "in the window"
        assert await receive(ws, 1.0) == auth_error("AUTH_TIMEOUT", "Authentication timed out.")
        assert await closed_code(ws) == 1005

        ws = await api.socket()
        await ws.send(json.dumps({"type": "auth", **ADMIN}))
        refresh = (await receive(ws))["refresh_token"]
        assert (await receive(ws, 1.0))["error"]["code"] == "TOKEN_EXPIRED"
        await ws.send(json.dumps({"type": "auth", "refresh_token": refresh}))
        assert (await receive(ws))["status"] == "ok"  # re-armed: expires again later, not closed
        assert (await receive(ws, 1.0))["error"]["code"] == "TOKEN_EXPIRED"
        await ws.close()
        assert (await api.stats())["closes"]["auth_timeout"] == 1
    run(check)


def test_static_token_never_expires(run):
    async def check(api):
        await api.control("settings", {"token_ttl_ms": 100})
        ws = await api.authed_socket(ADMIN_TOKEN)
        assert await silent(ws, 0.4)
        await ws.close()
    run(check)


# Heartbeat (§4) -----------------------------------------------------------------------------------------------

def test_heartbeat_drops_silent_client_and_keeps_answering_one(run):
    async def check(api):
        await api.control("settings", {"heartbeat_period": 0.25})
        silent_ws = await api.authed_socket()
        polite = await api.authed_socket()

        async def answer() -> int:
            pings = 0
            while True:
                message = await receive(polite, 1.0)
                if message == {"type": "ping"}:
                    pings += 1
                    await polite.send(json.dumps({"type": "pong"}))
                    if pings == 5:
                        return pings

        answering = asyncio.ensure_future(answer())
        assert await receive(silent_ws, 1.0) == {"type": "ping"}
        assert await closed_code(silent_ws, 1.5) == 1005  # closed with no code, no message
        assert await answering == 5  # 1.25 s later the answering client is still there
        stats = await api.stats()
        assert stats["closes"]["heartbeat"] == 1 and stats["client_pongs"] >= 5
        await polite.send(json.dumps({"type": "ping", "uid": 3}))
        while (message := await receive(polite)) == {"type": "ping"}:
            await polite.send(json.dumps({"type": "pong"}))
        assert message == {"type": "pong", "uid": 3}
        await polite.close()
    run(check)


def test_auth_frames_do_not_count_as_liveness(run):
    async def check(api):
        await api.control("settings", {"heartbeat_period": 0.2})
        ws = await api.authed_socket()
        assert await receive(ws, 1.0) == {"type": "ping"}
        await ws.send(json.dumps({"type": "auth", "access_token": ADMIN_TOKEN}))
        assert await receive(ws) == {"type": "auth", "status": "ok"}
        assert await closed_code(ws, 1.0) == 1005
    run(check)


def test_no_protocol_pong_and_heartbeat_disabled(run):
    async def check(api):
        ws = await api.authed_socket()
        pong_waiter = await ws.ping()
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(pong_waiter, 0.3)  # autoPong is off (§4, §13.3)
        assert (await api.stats())["protocol_pings"] == 1
        await api.control("settings", {"heartbeat_enabled": False, "heartbeat_period": 0.1})
        await ws.send(json.dumps({"type": "ping"}))
        assert await silent(ws, 0.3)  # no pings from the server and no pong for the client's ping
        await ws.close()
    run(check)
