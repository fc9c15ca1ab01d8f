"""The emulator's knobs for real-world Directus behaviours (docs/directus-protocol.md §14)."""
from __future__ import annotations

import pytest

from directus_emulator.testing import (ADMIN_TOKEN, EmulatorProcess, closed_code, make_runner, receive, silent,
                                       subscribe)


@pytest.fixture(scope="module")
def emulator():
    process = EmulatorProcess()
    yield process
    assert process.stop() == 0
    assert "Traceback" not in process.log(), process.log()  # no unhandled exception in the whole module


@pytest.fixture
def run(emulator):
    return make_runner(emulator)


async def socket_on(api, port: int):
    ws = await api.socket_at_port(port)
    await ws.send('{"type":"auth","access_token":"%s"}' % ADMIN_TOKEN)
    assert (await receive(ws))["status"] == "ok"
    return ws


# Socket events are not guaranteed (§14.1) ----------------------------------------------------------------------

def test_lost_events_and_writes_without_events(run):
    async def check(api):
        ws = await api.authed_socket()
        await subscribe(ws, "articles", uid="a")
        # A dispatch race: the create commits (with its activity row) but its message never comes.
        await api.control("lose-events", {"action": "create", "count": 1})
        await api.call("POST", "/items/articles", ADMIN_TOKEN, json_body={"title": "lost"})
        assert await silent(ws, 0.3)
        status, body = await api.call("POST", "/items/articles", ADMIN_TOKEN, json_body={"title": "seen"})
        assert (await receive(ws))["data"][0]["title"] == "seen"
        # A Flow without "Emit Events" running with a user's permissions: activity, no event.
        await api.control("write", {"collection": "articles", "action": "update", "keys": [1],
                                    "data": {"title": "by a flow"}, "as": "reader@example.com",
                                    "emit_events": False})
        # The same Flow with full access: neither activity nor event.
        await api.control("write", {"collection": "articles", "action": "update", "keys": [2],
                                    "data": {"title": "full access"}, "as": None, "emit_events": False})
        assert await silent(ws, 0.3)
        _, activity = await api.call("GET", "/activity", ADMIN_TOKEN, sort="id", fields="action,item,user")
        assert [(a["action"], a["item"]) for a in activity["data"]] == [
            ("create", "4"), ("create", "5"), ("update", "1")]
        stats = await api.stats()
        assert stats["events_lost"] == 1 and stats["events_sent"] == 1
        await ws.close()
    run(check)


# Several instances (§14.2) ------------------------------------------------------------------------------------

def test_local_messenger_tells_only_the_instance_that_handled_the_write(run):
    async def check(api):
        ports = (await api.control("instances", {"count": 2}))["ports"]
        assert ports[0] == api.emulator.port and len(set(ports)) == 2
        first, second = await socket_on(api, ports[0]), await socket_on(api, ports[1])
        await subscribe(first, "articles", uid="a")
        await subscribe(second, "articles", uid="a")
        # A write handled by the second instance: only its sockets hear it; the data is shared.
        status, body = await api.call("POST", f"http://127.0.0.1:{ports[1]}/items/articles", ADMIN_TOKEN,
                                      json_body={"title": "via B"})
        assert status == 200
        assert (await receive(second))["data"][0]["title"] == "via B"
        assert await silent(first, 0.3)
        await api.control("write", {"collection": "articles", "action": "update", "keys": [1],
                                    "data": {"title": "via A"}, "instance": 0})
        assert (await receive(first))["data"][0]["title"] == "via A"
        assert await silent(second, 0.3)
        stats = await api.stats()
        assert sorted(c["instance"] for c in stats["clients"]) == [0, 1] and stats["activity_count"] == 2
        # Redis: every instance hears every write.
        await api.control("settings", {"messenger": "redis"})
        await api.control("write", {"collection": "articles", "action": "delete", "keys": [1], "instance": 1})
        assert (await receive(first))["data"] == [1] and (await receive(second))["data"] == [1]
        await first.close()
        await second.close()
        # A reset goes back to one instance.
        await api.control("reset")
        assert (await api.control("instances", method="GET"))["ports"] == [api.emulator.port]
    run(check)


# Manual sorting (§14.3) ---------------------------------------------------------------------------------------

async def chapter_order(api) -> dict[int, int]:
    _, body = await api.call("GET", "/items/chapters", ADMIN_TOKEN, fields="id,sort", sort="id")
    return {row["id"]: row["sort"] for row in body["data"]}


def test_manual_sort_moves_items_without_activity_and_sends_one_update(run):
    async def check(api):
        ws = await api.authed_socket()
        await subscribe(ws, "chapters", uid="c", query={"fields": ["id", "sort"]})
        status, body = await api.call("POST", "/utils/sort/chapters", ADMIN_TOKEN, json_body={"item": 1, "to": 4})
        assert (status, body) == (200, None)
        assert await chapter_order(api) == {1: 4, 2: 1, 3: 2, 4: 3, 5: 5}
        # One `update` for the dragged item, read back; nothing for the three it pushed up.
        assert await receive(ws) == {"type": "subscription", "event": "update", "data": [{"id": 1, "sort": 4}],
                                     "uid": "c"}
        assert await silent(ws, 0.3)
        _, activity = await api.call("GET", "/activity", ADMIN_TOKEN)
        assert activity["data"] == []  # written with plain queries: no activity, no revision
        # Upwards, with the key as text: the event carries it as sent.
        await api.call("POST", "/utils/sort/chapters", ADMIN_TOKEN, json_body={"item": "5", "to": "2"})
        assert await chapter_order(api) == {1: 5, 2: 2, 3: 3, 4: 4, 5: 1}
        assert (await receive(ws))["data"] == [{"id": 5, "sort": 1}]
        stats = await api.stats()
        assert stats["activity_count"] == 0 and stats["revisions_count"] == 0
        await ws.close()
    run(check)


def test_manual_sort_fills_and_renumbers_first(run):
    async def check(api):
        # A row without a sort value and a duplicate: Directus numbers the empty one after the highest, then,
        # seeing duplicates, renumbers every row 1…n in sort order before moving.
        await api.call("PATCH", "/items/chapters/2", ADMIN_TOKEN, json_body={"sort": None})
        await api.call("PATCH", "/items/chapters/4", ADMIN_TOKEN, json_body={"sort": 3})
        await api.call("POST", "/utils/sort/chapters", ADMIN_TOKEN, json_body={"item": 5, "to": 1})
        # filled: 2 → 6; values 1,6,3,3,5 renumbered by sort: 1→1, 3→2, 4→3, 5→4, 2→5; then 5 moves to 1's place.
        assert await chapter_order(api) == {1: 2, 2: 5, 3: 3, 4: 4, 5: 1}
    run(check)


def test_manual_sort_errors(run):
    async def check(api):
        status, body = await api.call("POST", "/utils/sort/articles", ADMIN_TOKEN, json_body={"item": 1, "to": 2})
        assert status == 400 and body["errors"][0]["message"] == (
            'Invalid payload. Collection "articles" doesn\'t have a sort field.')
        status, _ = await api.call("POST", "/utils/sort/nope", ADMIN_TOKEN, json_body={"item": 1, "to": 2})
        assert status == 403
        status, _ = await api.call("POST", "/utils/sort/chapters", ADMIN_TOKEN, json_body={"item": 1})
        assert status == 400
        status, _ = await api.call("POST", "/utils/sort/chapters", json_body={"item": 1, "to": 2})
        assert status == 403  # the public role may not update chapters
        status, body = await api.call("POST", "/utils/sort/chapters", ADMIN_TOKEN, json_body={"item": 1, "to": 99})
        assert status == 500 and body["errors"][0]["extensions"]["code"] == "INTERNAL_SERVER_ERROR"
        _, body = await api.call("GET", "/collections/chapters", ADMIN_TOKEN)
        assert body["data"]["meta"]["sort_field"] == "sort"
    run(check)


# A heartbeat period Node's timers ignore (§14.4) ----------------------------------------------------------------

def test_a_period_beyond_nodes_timer_limit_pings_every_millisecond(run):
    async def check(api):
        await api.control("settings", {"heartbeat_period": 3_000_000})
        _, info = await api.call("GET", "/server/info", ADMIN_TOKEN)
        assert info["data"]["websocket"]["heartbeat"] == 3_000_000  # what the server says, not what it does
        ws = await api.authed_socket()
        # Node runs the interval, and the reply deadline, every millisecond: a client that does not answer the
        # first ping within that millisecond is closed at the next tick.
        assert await closed_code(ws, timeout=5) == 1005
        stats = await api.stats()
        assert stats["closes"].get("heartbeat") == 1 and stats["server_pings_sent"] >= 1
        # A period Node takes runs as configured.
        await api.control("settings", {"heartbeat_period": 2_147_483.647})
        ws = await api.authed_socket()
        assert await silent(ws, 0.3)
        await ws.close()
    run(check)
