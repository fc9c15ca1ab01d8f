"""The emulator's REST surface against directus-protocol.md §8 (auth, items, activity, revisions, schema)."""
from __future__ import annotations

import asyncio

import pytest

from directus_emulator.testing import ADMIN, ADMIN_TOKEN, READER, READER_TOKEN, EmulatorProcess, make_runner


@pytest.fixture(scope="module")
def emulator():
    process = EmulatorProcess()
    yield process
    assert process.stop() == 0
    assert "Traceback" not in process.log(), process.log()  # no unhandled exception in the whole module


@pytest.fixture
def run(emulator):
    return make_runner(emulator)


def code_of(body) -> str:
    return body["errors"][0]["extensions"]["code"]


def test_ping_and_server_info(run):
    async def check(api):
        async with api.session.get(api.emulator.http + "/server/ping") as response:
            assert response.status == 200 and await response.text() == "pong"
        status, body = await api.call("GET", "/server/info")
        assert status == 200 and "websocket" not in body["data"]  # only for an authenticated user (§8.6)
        status, body = await api.call("GET", "/server/info", ADMIN_TOKEN)
        assert body["data"]["websocket"]["rest"] == {"authentication": "handshake", "path": "/websocket"}
        assert body["data"]["websocket"]["heartbeat"] == 30
        await api.control("settings", {"websockets_enabled": False})
        _, body = await api.call("GET", "/server/info", ADMIN_TOKEN)
        assert body["data"]["websocket"] is False
        status, body = await api.call("GET", "/nowhere")
        assert status == 404 and code_of(body) == "ROUTE_NOT_FOUND"
    run(check)


def test_login_refresh_rotation_logout(run):
    async def check(api):
        data = await api.login()
        assert data["expires"] == 900_000  # milliseconds (§8.3)
        status, me = await api.call("GET", "/users/me", data["access_token"], fields="id,email,role.admin_access")
        assert status == 200 and me["data"]["email"] == "admin@example.com"
        assert me["data"]["role"] == {"admin_access": True}
        status, refreshed = await api.call("POST", "/auth/refresh", json_body={"refresh_token": data["refresh_token"]})
        assert status == 200 and refreshed["data"]["refresh_token"] != data["refresh_token"]
        # Rotation: the old refresh token is dead at once (§8.4).
        status, body = await api.call("POST", "/auth/refresh", json_body={"refresh_token": data["refresh_token"]})
        assert status == 401 and code_of(body) == "INVALID_CREDENTIALS"
        status, body = await api.call("POST", "/auth/refresh", json_body={})
        assert status == 400 and code_of(body) == "INVALID_PAYLOAD"
        latest = refreshed["data"]["refresh_token"]
        status, _ = await api.call("POST", "/auth/logout", json_body={"refresh_token": latest})
        assert status == 204
        status, body = await api.call("POST", "/auth/refresh",
                                      json_body={"refresh_token": refreshed["data"]["refresh_token"]})
        assert status == 401
        status, body = await api.call("POST", "/auth/login", json_body={**ADMIN, "password": "wrong"})
        assert status == 401 and code_of(body) == "INVALID_CREDENTIALS"
        assert body["errors"][0]["message"] == "Invalid user credentials."
    run(check)


def test_otp_user(run):
    async def check(api):
        credentials = {"email": "otp@example.com", "password": "otp-password"}
        status, body = await api.call("POST", "/auth/login", json_body=credentials)
        assert status == 401 and code_of(body) == "INVALID_OTP"
        otp = (await api.control("otp?email=otp@example.com", method="GET"))["otp"]
        status, body = await api.call("POST", "/auth/login", json_body={**credentials, "otp": otp})
        assert status == 200 and body["data"]["access_token"]
    run(check)


def test_token_errors(run):
    async def check(api):
        expired = (await api.control("token", {"email": "admin@example.com", "ttl_ms": -1000}))["access_token"]
        status, body = await api.call("GET", "/users/me", expired)
        assert status == 401 and code_of(body) == "TOKEN_EXPIRED"
        # Every route after the auth middleware rejects a stale token, /auth/refresh included (§8.2).
        status, body = await api.call("POST", "/auth/refresh", expired, json_body={"refresh_token": "x"})
        assert status == 401 and code_of(body) == "TOKEN_EXPIRED"
        status, body = await api.call("GET", "/users/me", "no-such-token")
        assert status == 401 and code_of(body) == "INVALID_CREDENTIALS"
        good = (await api.login())["access_token"]
        tampered = good[:-4] + ("AAAA" if not good.endswith("AAAA") else "BBBB")
        status, body = await api.call("GET", "/users/me", tampered)
        assert status == 403 and code_of(body) == "INVALID_TOKEN"
        status, body = await api.call("GET", "/users/me", ADMIN_TOKEN, access_token=ADMIN_TOKEN)
        assert status == 400 and code_of(body) == "INVALID_PAYLOAD"
        status, body = await api.call("GET", "/users/me")
        assert status == 401
        status, body = await api.call("GET", "/items/articles")  # anonymous: 403, not 401 (§8.2)
        assert status == 403 and code_of(body) == "FORBIDDEN"
        await api.control("settings", {"token_ttl_ms": 150})
        short = (await api.login())["access_token"]
        assert (await api.call("GET", "/users/me", short))[0] == 200
        await asyncio.sleep(0.2)
        assert code_of((await api.call("GET", "/users/me", short))[1]) == "TOKEN_EXPIRED"
    run(check)


def test_permissions_me_and_activity_access(run):
    async def check(api):
        _, body = await api.call("GET", "/permissions/me", ADMIN_TOKEN)
        assert body["data"]["directus_activity"]["read"]["access"] == "full"
        assert body["data"]["secrets"]["delete"]["access"] == "full"
        _, body = await api.call("GET", "/permissions/me", READER_TOKEN)
        assert body["data"]["directus_activity"]["read"]["access"] == "partial"
        assert body["data"]["articles"]["read"]["access"] == "full"
        assert "secrets" not in body["data"]
        await api.control("activity-access", {"access": "full"})
        _, body = await api.call("GET", "/permissions/me", READER_TOKEN)
        assert body["data"]["directus_activity"]["read"]["access"] == "full"
        await api.control("activity-access", {"access": "none"})
        _, body = await api.call("GET", "/permissions/me", READER_TOKEN)
        assert "directus_activity" not in body["data"]  # no permission at all: the collection is absent
        status, body = await api.call("GET", "/activity", READER_TOKEN)
        assert status == 403 and code_of(body) == "FORBIDDEN"
    run(check)


def test_schema_endpoints(run):
    async def check(api):
        _, body = await api.call("GET", "/fields/tags", READER_TOKEN)
        keys = [f["field"] for f in body["data"] if f["schema"] and f["schema"]["is_primary_key"]]
        assert keys == ["slug"]  # the key is not always `id`
        _, body = await api.call("GET", "/collections/tags", READER_TOKEN)
        assert body["data"]["meta"]["accountability"] == "activity"
        _, body = await api.call("GET", "/collections/notes_untracked", ADMIN_TOKEN)
        assert body["data"]["meta"]["accountability"] is None
        status, body = await api.call("GET", "/fields/secrets", READER_TOKEN)
        assert status == 403
    run(check)


def test_item_queries(run):
    async def check(api):
        get = lambda **params: api.call("GET", "/items/articles", ADMIN_TOKEN, **params)  # noqa: E731
        _, body = await get(**{"filter[id][_in]": "1,3", "fields": "id,title", "sort": "-id", "meta": "*"})
        assert body["data"] == [{"id": 3, "title": "Release 1.0"}, {"id": 1, "title": "Hello world"}]
        assert body["meta"] == {"total_count": 3, "filter_count": 2}
        _, body = await get(filter='{"_or":[{"status":{"_eq":"draft"}},{"id":{"_gte":3}}]}', fields="id")
        assert [r["id"] for r in body["data"]] == [2, 3]
        _, body = await get(**{"filter[title][_contains]": "world", "fields": "id"})
        assert body["data"] == [{"id": 1}]
        _, body = await get(**{"filter[body][_null]": "true"})
        assert body["data"] == []
        _, body = await get(**{"filter[status][_nin]": "draft", "filter[id][_lt]": "3", "fields": "id"})
        assert body["data"] == [{"id": 1}]
        _, body = await get(limit="1", offset="1", fields="id")
        assert body["data"] == [{"id": 2}]
        _, body = await get(limit="1", page="3", fields="id")
        assert body["data"] == [{"id": 3}]
        _, body = await api.call("GET", "/items/articles/2", ADMIN_TOKEN)
        assert body["data"]["title"] == "Draft notes"
        status, body = await api.call("GET", "/items/articles/999", ADMIN_TOKEN)
        assert status == 403
        _, body = await api.call("GET", "/items/comments", ADMIN_TOKEN, fields="id,article.title",
                                 **{"filter[id][_eq]": "3"})
        assert body["data"] == [{"id": 3, "article": {"title": "Release 1.0"}}]
        status, body = await api.call("GET", "/items/secrets", READER_TOKEN)
        assert status == 403 and body["errors"][0]["message"] == (
            'You don\'t have permission to access collection "secrets" or it does not exist. Queried in root.')
        status, body = await api.call("GET", "/items/nope", ADMIN_TOKEN)
        assert status == 403 and code_of(body) == "FORBIDDEN"
        status, body = await get(fields="id,nope")
        assert status == 403
        status, body = await get(**{"filter[id][_gt]": "abc"})
        assert status == 200 and body["data"] == []  # a bound of the wrong type matches nothing, no crash
        status, body = await get(filter="{not json")
        assert status == 400 and code_of(body) == "INVALID_QUERY"
        for index in range(120):
            await api.call("POST", "/items/tags", ADMIN_TOKEN, json_body={"slug": f"t{index:03d}"})
        _, body = await api.call("GET", "/items/tags", ADMIN_TOKEN)
        assert len(body["data"]) == 100  # QUERY_LIMIT_DEFAULT
        _, body = await api.call("GET", "/items/tags", ADMIN_TOKEN, limit="-1")
        assert len(body["data"]) == 123
    run(check)


def test_writes_activity_and_revisions(run):
    async def check(api):
        status, body = await api.call("POST", "/items/articles", READER_TOKEN,
                                      json_body={"title": "A", "status": "draft"})
        assert status == 200 and body["data"]["id"] == 4
        _, body = await api.call("POST", "/items/articles", ADMIN_TOKEN, json_body=[{"title": "B"}, {"title": "C"}])
        assert [r["id"] for r in body["data"]] == [5, 6]
        _, body = await api.call("PATCH", "/items/articles/4", ADMIN_TOKEN, json_body={"status": "published"})
        assert body["data"]["status"] == "published" and body["data"]["date_updated"]
        await api.call("PATCH", "/items/articles", ADMIN_TOKEN, json_body={"keys": [5, 6], "data": {"status": "x"}})
        await api.call("PATCH", "/items/articles", ADMIN_TOKEN, json_body=[{"id": 5, "title": "B2"}])
        assert (await api.call("DELETE", "/items/articles/6", ADMIN_TOKEN))[0] == 204
        assert (await api.call("DELETE", "/items/articles", ADMIN_TOKEN, json_body=[5]))[0] == 204
        await api.call("POST", "/items/tags", ADMIN_TOKEN, json_body={"slug": "new", "label": "New"})
        await api.call("POST", "/items/notes_untracked", ADMIN_TOKEN, json_body={"text": "nothing logged"})

        _, body = await api.call("GET", "/activity", ADMIN_TOKEN, sort="id",
                                 fields="id,action,collection,item,user,revisions.data,revisions.delta")
        rows = body["data"]
        assert [(r["action"], r["collection"], r["item"]) for r in rows] == [
            ("create", "articles", "4"), ("create", "articles", "5"), ("create", "articles", "6"),
            ("update", "articles", "4"), ("update", "articles", "5"), ("update", "articles", "6"),
            ("update", "articles", "5"), ("delete", "articles", "6"), ("delete", "articles", "5"),
            ("create", "tags", "new"),  # notes_untracked: accountability null → nothing (§8.8)
        ]
        assert [r["id"] for r in rows] == list(range(1, 11))
        assert rows[0]["user"] == "0c0ffee0-0000-4000-8000-000000000002"  # the reader made the first one
        assert rows[0]["revisions"] == [{"data": {"title": "A", "status": "draft"},
                                         "delta": {"title": "A", "status": "draft"}}]
        update = rows[3]["revisions"][0]
        assert update["data"]["title"] == "A" and update["data"]["status"] == "published"
        assert update["delta"]["status"] == "published" and "title" not in update["delta"]
        assert rows[7]["revisions"] == []   # deletes: activity, no revision
        assert rows[9]["revisions"] == []   # tags: accountability "activity" → no revisions
        _, body = await api.call("GET", "/activity", ADMIN_TOKEN, fields="ip,user_agent,timestamp", limit="1")
        assert body["data"][0]["ip"] == "127.0.0.1" and body["data"][0]["timestamp"].endswith("Z")
        _, body = await api.call("GET", "/revisions", ADMIN_TOKEN, fields="activity,item",
                                 **{"filter[activity][_in]": "1,4"})
        assert body["data"] == [{"activity": 1, "item": "4"}, {"activity": 4, "item": "4"}]
        # §8.8: a non-admin with the default app access sees only their own rows.
        _, body = await api.call("GET", "/activity", READER_TOKEN, fields="id")
        assert body["data"] == [{"id": 1}]
        _, body = await api.call("GET", "/revisions", READER_TOKEN, fields="activity")
        assert body["data"] == [{"activity": 1}]
        await api.control("activity-access", {"access": "full"})
        _, body = await api.call("GET", "/activity", READER_TOKEN, fields="id", **{"filter[id][_gt]": "8"})
        assert body["data"] == [{"id": 9}, {"id": 10}]
        stats = await api.stats()
        assert stats["activity_max_id"] == 10 and stats["items"]["articles"] == 4
    run(check)


def test_delayed_commit_out_of_id_order(run):
    async def check(api):
        await api.control("delay-commit", {"collection": "articles", "delay_ms": 400})
        slow = asyncio.ensure_future(api.call("POST", "/items/articles", ADMIN_TOKEN, json_body={"title": "slow"}))
        await asyncio.sleep(0.05)
        _, body = await api.call("POST", "/items/articles", ADMIN_TOKEN, json_body={"title": "fast"})
        assert body["data"]["id"] == 5  # the slow insert reserved 4 first
        _, body = await api.call("GET", "/activity", ADMIN_TOKEN, fields="id,item")
        assert body["data"] == [{"id": 2, "item": "5"}]  # id 1 is not committed yet
        _, body = await api.call("GET", "/items/articles", ADMIN_TOKEN, fields="id", **{"filter[id][_gt]": "3"})
        assert body["data"] == [{"id": 5}]
        assert (await api.stats())["pending_commits"] == 1
        status, body = await slow
        assert status == 200 and body["data"]["id"] == 4
        _, body = await api.call("GET", "/activity", ADMIN_TOKEN, fields="id,item")
        assert body["data"] == [{"id": 1, "item": "4"}, {"id": 2, "item": "5"}]
    run(check)


def test_paging_a_large_activity_log(run):
    async def check(api):
        job = await api.control("generator", {"collection": "comments", "count": 3000, "interval_ms": 0,
                                              "kind": "mixed"})
        result = await api.control("generator/wait", {"ids": [job["id"]], "timeout_ms": 20000})
        assert result["finished"] and result["jobs"][0]["done"] == 3000
        seen, cursor = [], 0
        while True:
            _, body = await api.call("GET", "/activity", ADMIN_TOKEN, sort="id", limit="500",
                                     fields="id,action,collection,item",
                                     **{"filter[id][_gt]": str(cursor), "filter[collection][_in]": "articles,comments",
                                        "filter[action][_in]": "create,update,delete"})
            seen += [row["id"] for row in body["data"]]
            if len(body["data"]) < 500:
                break
            cursor = body["data"][-1]["id"]
        assert seen == list(range(1, 3001))
        stats = await api.stats()
        assert stats["activity_count"] == 3000 and stats["generators"][0]["errors"] == 0
    run(check)


def test_backdoor_writes_and_user_controls(run):
    async def check(api):
        await api.control("write", {"collection": "articles", "action": "create", "data": {"title": "quiet"},
                                    "emit_events": False, "track": False})
        _, body = await api.call("GET", "/activity", ADMIN_TOKEN)
        assert body["data"] == []
        await api.control("users/password", {"email": "reader@example.com", "password": "changed"})
        status, _ = await api.call("POST", "/auth/login", json_body=READER)
        assert status == 401
        session = await api.login(ADMIN)
        assert (await api.control("users/revoke", {"email": "admin@example.com"}))["revoked"] == 1
        status, _ = await api.call("POST", "/auth/refresh", json_body={"refresh_token": session["refresh_token"]})
        assert status == 401
        await api.control("users/status", {"email": "admin@example.com", "status": "suspended"})
        assert (await api.call("GET", "/users/me", ADMIN_TOKEN))[0] == 401
    run(check)


def test_timestamp_filters_search_and_aggregates(run):
    async def check(api):
        await api.call("POST", "/items/articles", ADMIN_TOKEN, json_body={"title": "first"})
        _, body = await api.call("GET", "/activity", ADMIN_TOKEN, fields="timestamp")
        stamp = body["data"][0]["timestamp"]
        await asyncio.sleep(0.01)
        await api.call("POST", "/items/articles", ADMIN_TOKEN, json_body={"title": "second"})
        _, body = await api.call("GET", "/activity", ADMIN_TOKEN, fields="id", **{"filter[timestamp][_gt]": stamp})
        assert body["data"] == [{"id": 2}]
        _, body = await api.call("GET", "/activity", ADMIN_TOKEN, fields="id",
                                 filter='{"timestamp":{"_lte":"%s"}}' % stamp.replace("Z", "+00:00"))
        assert body["data"] == [{"id": 1}]
        _, body = await api.call("GET", "/activity", ADMIN_TOKEN, fields="id", **{"filter[item][_eq]": "5"})
        assert body["data"] == [{"id": 2}]
        async with api.session.request("SEARCH", api.emulator.http + "/items/articles",
                                       headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
                                       json={"query": {"filter": {"title": {"_eq": "second"}}, "fields": ["id"]}}) as r:
            assert (await r.json())["data"] == [{"id": 5}]
        _, body = await api.call("GET", "/items/articles", ADMIN_TOKEN, search="RELEASE", fields="id")
        assert body["data"] == [{"id": 3}]
        _, body = await api.call("GET", "/activity", ADMIN_TOKEN, **{"aggregate[max]": "id", "aggregate[count]": "*"})
        assert body["data"] == [{"max": {"id": 2}, "count": 2}]
    run(check)
