"""Control knobs that bend the activity log: a jump of the id sequence, and the retention job."""
from __future__ import annotations

import pytest

from directus_emulator.testing import ADMIN_TOKEN, EmulatorProcess, make_runner


@pytest.fixture(scope="module")
def emulator():
    process = EmulatorProcess()
    yield process
    assert process.stop() == 0
    assert "Traceback" not in process.log(), process.log()


@pytest.fixture
def run(emulator):
    return make_runner(emulator)


async def activity(api, **params):
    _, body = await api.call("GET", "/activity", ADMIN_TOKEN, fields="id,item", sort="id", limit="-1", **params)
    return body["data"]


async def revisions(api):
    _, body = await api.call("GET", "/revisions", ADMIN_TOKEN, fields="activity", sort="id", limit="-1")
    return [row["activity"] for row in body["data"]]


def test_a_jump_of_the_activity_sequence(run):
    async def check(api):
        await api.call("POST", "/items/articles", ADMIN_TOKEN, json_body={"title": "before"})
        answer = await api.control("activity-sequence", {"jump": 10**12})
        assert answer["next_id"] == 10**12 + 2
        await api.call("POST", "/items/articles", ADMIN_TOKEN, json_body={"title": "after"})
        assert [row["id"] for row in await activity(api)] == [1, 10**12 + 2]
        # Reads of a range inside the jump cost nothing and find nothing.
        assert await activity(api, filter='{"id":{"_between":[2,1000000000001]}}') == []
        _, body = await api.call("GET", "/activity", ADMIN_TOKEN, fields="id", sort="-id", limit="1")
        assert body["data"] == [{"id": 10**12 + 2}]
        status, body = await api.call("POST", "/_emulator/activity-sequence", json_body={"jump": -1})
        assert status == 400 and "forward" in body["error"]
    run(check)


def test_retention_deletes_old_activity_and_its_revisions(run):
    async def check(api):
        for n in range(5):
            await api.call("POST", "/items/articles", ADMIN_TOKEN, json_body={"title": f"article {n}"})
        assert [row["id"] for row in await activity(api)] == [1, 2, 3, 4, 5]
        answer = await api.control("retention", {"before_id": 4})
        assert answer == {"ok": True, "deleted": 3, "oldest_id": 4}
        assert [row["id"] for row in await activity(api)] == [4, 5]
        assert await revisions(api) == [4, 5]
        _, body = await api.call("GET", "/activity", ADMIN_TOKEN, fields="id", sort="id", limit="1")
        assert body["data"] == [{"id": 4}]
        # The sequence goes on: ids are never reused.
        await api.call("POST", "/items/articles", ADMIN_TOKEN, json_body={"title": "later"})
        assert [row["id"] for row in await activity(api)] == [4, 5, 6]
        assert (await api.control("retention", {"before_id": 100})) == {"ok": True, "deleted": 3, "oldest_id": None}
        assert await activity(api) == []
    run(check)
