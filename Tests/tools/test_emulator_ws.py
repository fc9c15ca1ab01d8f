"""The emulator's `/websocket` endpoint against directus-protocol.md §1–§7, §12 and §13."""
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


# Subscriptions (§5) -------------------------------------------------------------------------------------------

def test_subscribe_replies_and_errors(run):
    async def check(api):
        ws = await api.authed_socket(READER_TOKEN)
        published = {"fields": ["id"], "filter": {"status": {"_eq": "published"}}}
        init = await subscribe(ws, "articles", uid=5, query=published)
        assert init == {"type": "subscription", "event": "init", "data": [{"id": 1}, {"id": 3}], "uid": "5"}
        assert await subscribe(ws, "articles", uid="e", event="update") == {
            "type": "subscription", "event": "init", "uid": "e"}
        assert (await subscribe(ws, "articles", uid="i", item=2, query={"fields": "id,title"}))["data"] == {
            "id": 2, "title": "Draft notes"}
        reply = await subscribe(ws, "nope", uid="n")
        assert reply == {"type": "subscribe", "status": "error", "uid": "n", "error": {
            "code": "INVALID_COLLECTION", "message": "The provided collection does not exists or is not accessible."}}
        reply = await subscribe(ws, "secrets", uid="s")
        assert reply["error"]["code"] == "FORBIDDEN" and "uid" not in reply
        reply = await subscribe(ws, "articles", uid="q", query={"filter": "{broken"})
        assert reply["error"]["code"] == "INVALID_QUERY" and "uid" not in reply
        reply = await subscribe(ws, "articles", uid="q", event="upsert")
        assert reply["type"] == "subscribe" and reply["error"]["code"] == "INVALID_PAYLOAD" and "uid" not in reply
        stats = await api.stats()
        assert sorted(s["uid"] for s in stats["subscriptions"]) == ["5", "e", "i"]
        await ws.send(json.dumps({"type": "unsubscribe", "uid": 5}))
        assert await receive(ws) == {"type": "subscription", "event": "unsubscribe", "uid": 5}
        await ws.send(json.dumps({"type": "unsubscribe"}))
        assert await receive(ws) == {"type": "subscription", "event": "unsubscribe"}
        assert (await api.stats())["subscriptions"] == []
        await ws.close()
    run(check)


def test_init_is_capped_and_uid_replaces(run):
    async def check(api):
        await api.call("POST", "/items/comments", ADMIN_TOKEN, json_body=[{"text": str(i)} for i in range(150)])
        ws = await api.authed_socket()
        assert len((await subscribe(ws, "comments", uid="c"))["data"]) == 100  # §13.7
        assert len((await subscribe(ws, "comments", uid="c", query={"limit": 2}))["data"]) == 2
        assert len((await api.stats())["subscriptions"]) == 1  # replaced by uid
        await api.call("POST", "/items/comments", ADMIN_TOKEN, json_body={"text": "one"})
        assert (await receive(ws))["data"][0]["text"] == "one"
        assert await silent(ws, 0.1)  # the replaced subscription sends nothing
        await ws.close()
    run(check)


def test_event_shapes(run):
    async def check(api):
        ws = await api.authed_socket(READER_TOKEN)
        await subscribe(ws, "articles", uid="a", event=None, query={"fields": ["id", "status"],
                                                                     "filter": {"status": {"_neq": "hidden"}}})
        await subscribe(ws, "articles", uid="one", item=1, query={"fields": ["id"]})
        await api.call("POST", "/items/articles", ADMIN_TOKEN, json_body=[{"status": "x"}, {"status": "y"}])
        assert await receive(ws) == {"type": "subscription", "event": "create", "data": [{"id": 4, "status": "x"}],
                                     "uid": "a"}
        assert (await receive(ws))["data"] == [{"id": 5, "status": "y"}]  # one message per created item
        await api.call("PATCH", "/items/articles", ADMIN_TOKEN, json_body={"keys": [4, 5], "data": {"status": "z"}})
        assert await receive(ws) == {"type": "subscription", "event": "update",
                                     "data": [{"id": 4, "status": "z"}, {"id": 5, "status": "z"}], "uid": "a"}
        await api.call("PATCH", "/items/articles", ADMIN_TOKEN, json_body={"keys": [4], "data": {"status": "hidden"}})
        assert await silent(ws, 0.15)  # it left the filter: no message at all
        await api.call("PATCH", "/items/articles/1", ADMIN_TOKEN, json_body={"title": "t"})
        first, second = await receive(ws), await receive(ws)
        assert {first["uid"], second["uid"]} == {"a", "one"}
        assert [m["data"] for m in (first, second) if m["uid"] == "one"] == [{"id": 1}]  # item: a single object
        await api.call("DELETE", "/items/articles/5", ADMIN_TOKEN)
        assert await receive(ws) == {"type": "subscription", "event": "delete", "data": ["5"], "uid": "a"}
        await api.call("DELETE", "/items/articles", ADMIN_TOKEN, json_body=[4])
        assert await receive(ws) == {"type": "subscription", "event": "delete", "data": [4], "uid": "a"}
        await api.call("DELETE", "/items/articles/1", ADMIN_TOKEN)
        messages = [await receive(ws), await receive(ws)]
        assert {"type": "subscription", "event": "delete", "data": "1", "uid": "one"} in messages
        await api.call("POST", "/items/secrets", ADMIN_TOKEN, json_body={"value": "v"})
        assert await silent(ws, 0.1)
        await ws.close()
    run(check)


def test_subscription_meta_on_events(run):
    async def check(api):
        ws = await api.authed_socket()
        init = await subscribe(ws, "tags", uid="m", query={"fields": ["slug"], "meta": "total_count"})
        assert init["meta"] == {"total_count": 3}
        await api.call("POST", "/items/tags", ADMIN_TOKEN, json_body={"slug": "new"})
        assert await receive(ws) == {"type": "subscription", "event": "create", "data": [{"slug": "new"}],
                                     "meta": {"total_count": 4}, "uid": "m"}
        await ws.close()
    run(check)


def test_message_envelopes(run):
    async def check(api):
        ws = await api.authed_socket()
        await ws.send("{nope")
        assert await receive(ws) == {"type": "server", "status": "error", "error": {
            "code": "INVALID_PAYLOAD", "message": "Unable to parse the incoming message."}}
        await ws.send("[1,2]")
        reply = await receive(ws)
        assert reply["type"] == "server" and reply["error"]["message"].startswith("Validation error")
        await ws.send(json.dumps({"type": "something-new", "uid": 1}))
        assert await silent(ws, 0.15)  # unknown types are ignored
        await ws.close()
    run(check)


# Control API (drops, restarts, hostile frames, generator, blast) ----------------------------------------------------

def test_drops_closes_and_refusals(run):
    async def check(api):
        ws = await api.authed_socket()
        assert (await api.control("drop"))["dropped"] == 1
        assert await closed_code(ws) == 1006
        ws = await api.authed_socket()
        await api.control("close")
        assert await closed_code(ws) == 1005
        await api.control("refuse-upgrades", {"ms": 300, "status": 502})
        with pytest.raises(websockets.InvalidStatus) as refused:
            await api.socket()
        assert refused.value.response.status_code == 502
        await asyncio.sleep(0.35)
        await (await api.authed_socket()).close()
        await api.control("settings", {"websockets_enabled": False})
        with pytest.raises(websockets.InvalidStatus) as refused:
            await api.socket()
        assert refused.value.response.status_code == 404
        await api.control("settings", {"websockets_enabled": True})
        with pytest.raises(asyncio.TimeoutError):  # any other path is never answered (§1.1)
            await asyncio.wait_for(api.socket_at("/websocket/"), 0.3)
    run(check)


def test_restart_refuses_connections_and_keeps_data(run):
    async def check(api):
        await api.call("POST", "/items/articles", ADMIN_TOKEN, json_body={"title": "kept"})
        ws = await api.authed_socket()
        await api.control("restart", {"down_ms": 400})
        assert await closed_code(ws) == 1006
        with pytest.raises(OSError):
            await api.socket()  # connection refused while "restarting"
        await asyncio.sleep(0.5)
        await api.session.close()
        async with type(api.session)() as session:
            api.session = session
            _, body = await api.call("GET", "/items/articles/4", ADMIN_TOKEN)
            assert body["data"]["title"] == "kept"
            await (await api.authed_socket()).close()
    run(check)


def test_hostile_frames(run):
    async def check(api):
        ws = await api.authed_socket()
        await api.control("send", {"kind": "non_json"})
        assert await ws.recv() == "this is not json"
        await api.control("send", {"kind": "binary", "data_base64": "AAEC"})
        assert await ws.recv() == b"\x00\x01\x02"
        await api.control("send", {"kind": "invalid_utf8"})
        await closed_code(ws)
        assert ws.protocol.close_sent.code == 1007  # the client library failed the connection
        small = await api.socket(max_size=1024)
        await small.send(json.dumps({"type": "auth", "access_token": ADMIN_TOKEN}))
        await receive(small)
        await api.control("send", {"kind": "oversize", "size": 4096})
        await closed_code(small)
        assert small.protocol.close_sent.code == 1009
    run(check)


def test_generator_events_and_blast(run):
    async def check(api):
        ws = await api.authed_socket()
        await subscribe(ws, "tags", uid="t", event="create")
        job = await api.control("generator", {"collection": "tags", "count": 20, "interval_ms": 5, "kind": "create"})
        assert (await api.control("generator/wait", {"ids": [job["id"]], "timeout_ms": 5000}))["finished"]
        events = [await receive(ws) for _ in range(20)]
        assert all(e["event"] == "create" and e["uid"] == "t" for e in events)
        assert len({e["data"][0]["slug"] for e in events}) == 20
        result = await api.control("blast", {"collection": "tags", "count": 5000, "size": 300})
        assert result["frames"] == 5000 and result["frames_per_second"] > 0
        received = [json.loads(await ws.recv()) for _ in range(5000)]
        assert received[0]["data"][0]["id"] == 1 and received[-1]["data"][0]["id"] == 5000
        assert 280 <= len(json.dumps(received[0]["data"][0], separators=(",", ":"))) <= 320
        assert (await api.stats())["items"]["tags"] == 23  # blasted items are not stored
        await ws.close()
    run(check)


def test_sigterm_stops_promptly():
    process = EmulatorProcess("--heartbeat-period", "5")

    async def connect_then_stop() -> int | None:
        ws = await websockets.connect(process.ws + f"?access_token={ADMIN_TOKEN}", ping_interval=None)
        loop = asyncio.get_running_loop()
        started = loop.time()
        stopping = loop.run_in_executor(None, process.stop)
        code = await closed_code(ws)
        assert await stopping == 0 and loop.time() - started < 3
        return code

    assert asyncio.run(connect_then_stop()) == 1006  # Directus terminate(): TCP destroyed, no close frame


def test_rate_and_connection_limits(run):
    async def check(api):
        await api.control("settings", {"rate_limit_points": 3, "rate_limit_duration": 10, "conn_limit": 1})
        ws = await api.authed_socket()
        for index in range(4):
            await ws.send(json.dumps({"type": "ping", "uid": index}))
        replies = [await receive(ws) for _ in range(4)]
        # The auth frame cost nothing (handshake phase); pings 0-2 pass, the fourth is dropped with an error.
        assert replies[:3] == [{"type": "pong", "uid": i} for i in range(3)]
        assert replies[3]["type"] == "server" and replies[3]["error"]["code"] == "REQUESTS_EXCEEDED"
        with pytest.raises(websockets.InvalidStatus) as refused:
            await api.socket()  # one established client already: raw 403 (§1.3)
        assert refused.value.response.status_code == 403
        await ws.close()
    run(check)


def test_demo_seed_with_generator():
    process = EmulatorProcess("--seed", "demo", "--generate", "40")

    async def watch() -> list:
        ws = await websockets.connect(process.ws, ping_interval=None)
        await ws.send(json.dumps({"type": "auth", "access_token": READER_TOKEN}))
        await receive(ws)
        init = await subscribe(ws, "articles", uid="a", query={"limit": -1})
        assert len(init["data"]) >= 30  # the demo seed has more rows than the default one
        events = [await receive(ws, 2.0) for _ in range(3)]
        await ws.close()
        return events

    try:
        events = asyncio.run(watch())
        assert {e["event"] for e in events} <= {"create", "update", "delete"}
    finally:
        assert process.stop() == 0
