"""The emulator's subscriptions (§5), envelopes (§3), closes (§7) and control API against directus-protocol.md."""
from __future__ import annotations

import asyncio
import json

import pytest
import websockets

from directus_emulator.testing import (ADMIN_TOKEN, READER_TOKEN, EmulatorProcess, closed_code, make_runner, receive,
                                       silent, subscribe)


@pytest.fixture(scope="module")
def emulator():
    process = EmulatorProcess()
    yield process
    assert process.stop() == 0
    assert "Traceback" not in process.log(), process.log()  # no unhandled exception in the whole module


@pytest.fixture
def run(emulator):
    return make_runner(emulator)


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
        await api.control("settings", {"max_payload": 1000})
        big = await api.authed_socket()
        await big.send(json.dumps({"type": "ping", "padding": "x" * 2000}))
        assert await closed_code(big) == 1009  # the server side of the ws library closes over-size frames (§7.1)
        polite = await api.authed_socket()
        await polite.close(1000)
        assert polite.close_code == 1000  # a client close is echoed with its code
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


def test_direct_blast_replays_whole_frames_in_order(run):
    async def check(api):
        ws = await api.authed_socket()
        await subscribe(ws, "tags", uid="a", event="create")
        await subscribe(ws, "tags", uid="b")
        result = await api.control("blast", {"collection": "tags", "count": 3000, "size": 300, "direct": True})
        assert result["frames"] == 6000 and result["subscriptions"] == 2
        received = [json.loads(await ws.recv()) for _ in range(6000)]  # one socket: two threads would tear frames
        for uid in ("a", "b"):
            assert [m["data"][0]["id"] for m in received if m["uid"] == uid] == list(range(1, 3001))
        await api.control("blast", {"collection": "tags", "count": 1, "size": 300})  # writable again afterwards
        assert len((await receive(ws))["data"]) == 1 and (await receive(ws))["uid"] in ("a", "b")
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
