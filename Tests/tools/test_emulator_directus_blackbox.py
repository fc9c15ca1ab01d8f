"""Directus's own black-box WebSocket tests, run against the emulator.

Source: the directus/directus repository, `tests/blackbox/websocket/` — `auth.test.ts`, `general.test.ts` and
`rest.test.ts` — with the helpers they import: `tests/blackbox/common/transport.ts` (blackbox_transport.py here),
`config.ts` (WEBSOCKETS_ENABLED, the default handshake mode and `/websocket` path) and `variables.ts` (the users,
their passwords and static tokens, `TEST_USERS`, `PRIMARY_KEY_TYPES`; `--seed blackbox` holds them).

Every test names the file and the `describe` title it ports, and asserts Directus's expected values. What is not
ported (the GraphQL halves) and the two places where Directus itself changed an expectation since that folder was
written are listed, with the reasons, in directus_emulator/README.md ("Directus's black-box tests").

The auth cases of one `describe` run at once for every mode and user (12 connections), on three emulators (one per
`WEBSOCKETS_REST_AUTH`), so the module takes seconds although each case waits out the 1 s auth timeout.
"""
from __future__ import annotations

import asyncio
import uuid
from typing import Any, Awaitable, Callable

import aiohttp
import pytest

from blackbox_transport import CLOSED, OPEN, BlackboxSocket
from directus_emulator.testing import Api, EmulatorProcess, make_runner

AUTH_TEST = "tests/blackbox/websocket/auth.test.ts"
GENERAL_TEST = "tests/blackbox/websocket/general.test.ts"
REST_TEST = "tests/blackbox/websocket/rest.test.ts"

# variables.ts
USER = {
    "ADMIN": {"TOKEN": "AdminToken", "EMAIL": "admin@default.com", "PASSWORD": "AdminPassword"},
    "APP_ACCESS": {"TOKEN": "AppAccessToken", "EMAIL": "app-access@default.com", "PASSWORD": "AppAccessPassword"},
    "API_ONLY": {"TOKEN": "APIOnlyToken", "EMAIL": "api-only@default.com", "PASSWORD": "APIOnlyPassword"},
    "NO_ROLE": {"TOKEN": "NoRoleToken", "EMAIL": "no-role@default.com", "PASSWORD": "NoRolePassword"},
}
TEST_USERS = ("ADMIN", "APP_ACCESS", "API_ONLY", "NO_ROLE")
PRIMARY_KEY_TYPES = ("integer", "uuid", "string")
# auth.test.ts
AUTH_METHODS = ("public", "handshake", "strict")
AUTHENTICATION_TIMEOUT_SECONDS = 1
SLIGHT_DELAY = 0.1
PATH_REST = "wsRest"
# general.seed.ts / rest.seed.ts
GENERAL_COLLECTION = "test_ws_general_first"
REST_COLLECTION = "test_ws_rest_first"


# Fixtures ----------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def auth_emulators():
    """One emulator per auth method, configured as auth.test.ts configures its Directus."""
    started = EmulatorProcess.start_many(*(
        ("--seed", "blackbox", "--auth-mode", method, "--auth-timeout", str(AUTHENTICATION_TIMEOUT_SECONDS),
         "--websocket-path", f"/{PATH_REST}")
        for method in AUTH_METHODS))
    processes = dict(zip(AUTH_METHODS, started))
    yield processes
    for process in processes.values():
        assert process.stop() == 0
        assert "Traceback" not in process.log(), process.log()


@pytest.fixture(scope="module")
def emulator():
    process = EmulatorProcess("--seed", "blackbox")
    yield process
    assert process.stop() == 0
    assert "Traceback" not in process.log(), process.log()


@pytest.fixture
def run(emulator):
    return make_runner(emulator)


Case = Callable[[Api, str, str], Awaitable[None]]


def run_matrix(emulators: dict[str, EmulatorProcess], case: Case) -> None:
    """Runs `case(api, auth_method, user_key)` for every method and user at once; reports every failure."""
    async def main() -> None:
        async with aiohttp.ClientSession() as session:
            combos = [(method, user) for method in AUTH_METHODS for user in TEST_USERS]
            results = await asyncio.gather(
                *(case(Api(emulators[method], session), method, user) for method, user in combos),
                return_exceptions=True)
        failures = [f"{method}/{user}: {result!r}" for (method, user), result in zip(combos, results)
                    if isinstance(result, BaseException)]
        assert not failures, "\n".join(failures)
    asyncio.run(main())


def socket_url(api: Api, query: str = "", port: int | None = None, path: str = PATH_REST) -> str:
    return f"ws://127.0.0.1:{port or api.emulator.port}/{path}" + (f"?{query}" if query else "")


async def login(api: Api, user: str) -> str:
    """The setup step `request(...).post('/auth/login').send({email, password})` → `data.access_token`."""
    status, body = await api.call("POST", "/auth/login",
                                  json_body={"email": USER[user]["EMAIL"], "password": USER[user]["PASSWORD"]})
    assert status == 200, body
    return body["data"]["access_token"]


# auth.test.ts: "connects …" ----------------------------------------------------------------------------------

STAYS_OPEN, CLOSES, REFUSED = "stays open", "closes", "refused"


async def expect_connection(ws: BlackboxSocket, outcome: str) -> None:
    """The three `switch (authMethod)` branches of the "connects …" cases."""
    try:
        if outcome == STAYS_OPEN:    # waitForState(OPEN); sleep(timeout + slightDelay); waitForState(OPEN)
            await ws.wait_for_state(OPEN)
            await asyncio.sleep(AUTHENTICATION_TIMEOUT_SECONDS + SLIGHT_DELAY)
            await ws.wait_for_state(OPEN)
        elif outcome == CLOSES:      # waitForState(OPEN); sleep(timeout + slightDelay); waitForState(CLOSED)
            await ws.wait_for_state(OPEN)
            await asyncio.sleep(AUTHENTICATION_TIMEOUT_SECONDS + SLIGHT_DELAY)
            await ws.wait_for_state(CLOSED)
        else:                        # waitForState(CLOSED); sleep(timeout); waitForState(CLOSED)
            await ws.wait_for_state(CLOSED)
            await asyncio.sleep(AUTHENTICATION_TIMEOUT_SECONDS)
            await ws.wait_for_state(CLOSED)
            assert not ws.ever_opened
    finally:
        await ws.close()


def connects(outcomes: dict[str, str], auth: Callable[[Api, str], Awaitable[dict[str, str] | None]] | None = None,
             query: Callable[[Api, str], Awaitable[str]] | None = None) -> Case:
    async def case(api: Api, method: str, user: str) -> None:
        socket_auth = await auth(api, user) if auth else None
        socket_query = await query(api, user) if query else ""
        await expect_connection(BlackboxSocket(socket_url(api, socket_query), auth=socket_auth).start(),
                                outcomes[method])
    return case


async def email_auth(api: Api, user: str) -> dict[str, str]:
    return {"email": USER[user]["EMAIL"], "password": USER[user]["PASSWORD"]}


async def jwt_auth(api: Api, user: str) -> dict[str, str]:
    return {"access_token": await login(api, user)}


async def static_auth(api: Api, user: str) -> dict[str, str]:
    return {"access_token": USER[user]["TOKEN"]}


async def jwt_query(api: Api, user: str) -> str:
    return f"access_token={await login(api, user)}"


async def static_query(api: Api, user: str) -> str:
    return f"access_token={USER[user]['TOKEN']}"


def test_connects_without_authentication(auth_emulators):
    """auth.test.ts › Authentication type: %s › "connects without authentication"."""
    run_matrix(auth_emulators, connects({"public": STAYS_OPEN, "handshake": CLOSES, "strict": REFUSED}))


def test_connects_with_email_authentication(auth_emulators):
    """auth.test.ts › Authentication type: %s › "connects with email authentication"."""
    outcomes = {"public": STAYS_OPEN, "handshake": STAYS_OPEN, "strict": REFUSED}
    run_matrix(auth_emulators, connects(outcomes, auth=email_auth))


def test_connects_with_access_token_authentication(auth_emulators):
    """auth.test.ts › Authentication type: %s › "connects with access token authentication"."""
    outcomes = {"public": STAYS_OPEN, "handshake": STAYS_OPEN, "strict": REFUSED}
    run_matrix(auth_emulators, connects(outcomes, auth=jwt_auth))


def test_connects_with_static_access_token_authentication(auth_emulators):
    """auth.test.ts › Authentication type: %s › "connects with static access token authentication"."""
    outcomes = {"public": STAYS_OPEN, "handshake": STAYS_OPEN, "strict": REFUSED}
    run_matrix(auth_emulators, connects(outcomes, auth=static_auth))


def test_connects_with_access_token_in_query_string(auth_emulators):
    """auth.test.ts › Authentication type: %s › "connects with access token in query string".

    handshake: the current expectation (open), as Directus PR #22950 updated it after PR #22888 let a query
    token authenticate in every mode; the folder's older revision expected the handshake timeout to close it.
    """
    outcomes = {"public": STAYS_OPEN, "handshake": STAYS_OPEN, "strict": STAYS_OPEN}
    run_matrix(auth_emulators, connects(outcomes, query=jwt_query))


def test_connects_with_static_access_token_in_query_string(auth_emulators):
    """auth.test.ts › Authentication type: %s › "connects with static access token in query string" (handshake:
    as the previous case, Directus PR #22950)."""
    outcomes = {"public": STAYS_OPEN, "handshake": STAYS_OPEN, "strict": STAYS_OPEN}
    run_matrix(auth_emulators, connects(outcomes, query=static_query))


# auth.test.ts: "pings …" -------------------------------------------------------------------------------------

def pings(answered: dict[str, bool], auth: Callable[[Api, str], Awaitable[dict[str, str]]] | None = None,
          query: Callable[[Api, str], Awaitable[str]] | None = None) -> Case:
    """`sendMessage({type:'ping'})` then `getMessages(1)`: a pong, or `error` defined.

    Directus's "error" branch passes when the socket is no longer open to deliver a reply (its helper gives up
    when the socket is not OPEN). That is asserted here without racing the clock: the socket ends closed (or
    never opened) and no pong was ever received.
    """
    async def case(api: Api, method: str, user: str) -> None:
        socket_auth = await auth(api, user) if auth else None
        socket_query = await query(api, user) if query else ""
        ws = BlackboxSocket(socket_url(api, socket_query), auth=socket_auth, respond_to_ping=False).start()
        try:
            if answered[method]:
                await ws.send_message({"type": "ping"})
                messages = await ws.get_messages(1)
                assert len(messages) == 1 and messages[0]["type"] == "pong", messages
            else:
                await ws.wait_connected()
                if ws.ever_opened:
                    await ws.send_message({"type": "ping"})
                await ws.wait_for_state(CLOSED)
                assert not [m for m in ws.default if m.get("type") == "pong"], ws.default
        finally:
            await ws.close()
    return case


def test_pings_without_authentication(auth_emulators):
    """auth.test.ts › Authentication type: %s › "pings without authentication"."""
    run_matrix(auth_emulators, pings({"public": True, "handshake": False, "strict": False}))


def test_pings_with_access_token_authentication(auth_emulators):
    """auth.test.ts › Authentication type: %s › "pings with access token authentication"."""
    run_matrix(auth_emulators, pings({"public": True, "handshake": True, "strict": False}, auth=static_auth))


def test_pings_with_access_token_in_query_string(auth_emulators):
    """auth.test.ts › Authentication type: %s › "pings with access token in query string" (handshake: a pong, as
    Directus PR #22950 updated the expectation)."""
    run_matrix(auth_emulators, pings({"public": True, "handshake": True, "strict": True}, query=static_query))


# general.test.ts and rest.test.ts -----------------------------------------------------------------------------

ADMIN_AUTH = {"access_token": USER["ADMIN"]["TOKEN"]}
UIDS: tuple[Any, ...] = (None, 1, "two")


def new_item(pk_type: str, name: str) -> dict[str, Any]:
    """`{ id: pkType === 'string' ? uuid() : undefined, name }` (undefined keys vanish from the JSON)."""
    return {"id": str(uuid.uuid4()), "name": name} if pk_type == "string" else {"name": name}


async def create_item(api: Api, collection: str, pk_type: str, name: str, port: int | None = None) -> Any:
    url = f"/items/{collection}"
    if port is not None:
        url = f"http://127.0.0.1:{port}{url}"
        async with api.session.post(url, json=new_item(pk_type, name),
                                    headers={"Authorization": f"Bearer {USER['ADMIN']['TOKEN']}"}) as response:
            assert response.status == 200, await response.text()
            return (await response.json())["data"]["id"]
    status, body = await api.call("POST", url, USER["ADMIN"]["TOKEN"], json_body=new_item(pk_type, name))
    assert status == 200, body
    return body["data"]["id"]


def subscription_message(event: str, data: Any, uid: Any) -> dict[str, Any]:
    """The expected `{type:'subscription', event, data, uid: uid === undefined ? undefined : String(uid)}`."""
    message: dict[str, Any] = {"type": "subscription", "event": event, "data": data}
    if uid is not None:
        message["uid"] = str(uid)
    return message


async def two_instances(api: Api) -> list[int]:
    """general.test.ts starts two Directus instances sharing one database and a Redis messenger."""
    await api.control("settings", {"messenger": "redis"})
    return (await api.control("instances", {"count": 2}))["ports"]


async def barrier(ws: BlackboxSocket) -> None:
    """Everything the server sent before now has been read: a ping with its own uid comes back as a pong after it.

    Added to the port: Directus counts messages right after the write, which proves "no event" only by luck of
    timing; the emulator answers in order, so the pong proves it.
    """
    await ws.send_message({"type": "ping", "uid": "barrier"})
    assert (await ws.get_messages(1, "barrier"))[0]["type"] == "pong"


@pytest.mark.parametrize("pk_type", PRIMARY_KEY_TYPES)
def test_general_subscriptions(run, pk_type):
    """general.test.ts › Primary key type: %s › "Test subscriptions" (the REST-socket half)."""
    collection = f"{GENERAL_COLLECTION}_{pk_type}"

    async def check(api):
        port1, port2 = await two_instances(api)
        ws = BlackboxSocket(socket_url(api, port=port1, path="websocket"), auth=ADMIN_AUTH).start()
        ws2 = BlackboxSocket(socket_url(api, port=port2, path="websocket"), auth=ADMIN_AUTH).start()
        for uid in UIDS:
            await ws.subscribe(collection, uid)
            await ws2.subscribe(collection, uid)
        inserted_name = str(uuid.uuid4())
        inserted_id = await create_item(api, collection, pk_type, inserted_name, port=port1)
        messages = [await ws.get_messages(1, uid) for uid in UIDS]
        messages2 = [await ws2.get_messages(1, uid) for uid in UIDS]
        await ws.close()
        await ws2.close()
        for uid, received in zip(UIDS, messages):
            assert len(received) == 1
            assert received[0] == subscription_message("create", [{"id": inserted_id, "name": inserted_name}], uid)
        assert messages == messages2
    run(check)


@pytest.mark.parametrize("pk_type", PRIMARY_KEY_TYPES)
def test_general_unsubscriptions(run, pk_type):
    """general.test.ts › Primary key type: %s › "Test unsubscriptions" (the REST-socket half)."""
    collection = f"{GENERAL_COLLECTION}_{pk_type}"

    async def check(api):
        port1, port2 = await two_instances(api)
        ws = BlackboxSocket(socket_url(api, port=port1, path="websocket"), auth=ADMIN_AUTH).start()
        ws2 = BlackboxSocket(socket_url(api, port=port2, path="websocket"), auth=ADMIN_AUTH).start()
        for uid in UIDS:
            await ws.subscribe(collection, uid)
            await ws2.subscribe(collection, uid)
            await ws.unsubscribe(uid)
            await ws2.unsubscribe(uid)
        await create_item(api, collection, pk_type, str(uuid.uuid4()), port=port1)
        await barrier(ws)
        await barrier(ws2)
        await ws.close()
        await ws2.close()
        for uid in UIDS:
            assert ws.message_count(uid) == 2  # the init and the unsubscribe acknowledgement, no event
            assert ws2.message_count(uid) == 2
    run(check)


@pytest.mark.parametrize("pk_type", PRIMARY_KEY_TYPES)
def test_general_event_filtering(run, pk_type):
    """general.test.ts › Primary key type: %s › "Test event filtering" (the REST-socket half)."""
    collection = f"{GENERAL_COLLECTION}_{pk_type}"
    event_uids = (None, "create", "update", "delete")

    async def check(api):
        port1, _ = await two_instances(api)
        ws = BlackboxSocket(socket_url(api, port=port1, path="websocket"), auth=ADMIN_AUTH).start()
        for uid in event_uids:
            await ws.subscribe(collection, uid, event=uid)
        inserted_name = str(uuid.uuid4())
        updated_name = f"updated_{uuid.uuid4()}"
        inserted_id = await create_item(api, collection, pk_type, inserted_name, port=port1)
        await asyncio.sleep(0.1)
        status, _ = await api.call("PATCH", f"/items/{collection}/{inserted_id}", USER["ADMIN"]["TOKEN"],
                                   json_body={"name": updated_name})
        assert status == 200
        await asyncio.sleep(0.1)
        status, _ = await api.call("DELETE", f"/items/{collection}/{inserted_id}", USER["ADMIN"]["TOKEN"])
        assert status == 204
        await asyncio.sleep(0.1)
        message_list = await ws.get_messages(3)
        filtered = {uid: await ws.get_messages(1, uid) for uid in event_uids if uid}
        await ws.close()
        assert len(message_list) == 3
        assert message_list[0] == subscription_message("create", [{"id": inserted_id, "name": inserted_name}], None)
        assert message_list[1] == subscription_message("update", [{"id": inserted_id, "name": updated_name}], None)
        assert message_list[2] == subscription_message("delete", [str(inserted_id)], None)
        assert filtered["create"] == [
            subscription_message("create", [{"id": inserted_id, "name": inserted_name}], "create")]
        assert filtered["update"] == [
            subscription_message("update", [{"id": inserted_id, "name": updated_name}], "update")]
        assert filtered["delete"] == [subscription_message("delete", [str(inserted_id)], "delete")]
    run(check)


@pytest.mark.parametrize("pk_type", PRIMARY_KEY_TYPES)
def test_rest_subscriptions(run, pk_type):
    """rest.test.ts › Primary key type: %s › "Test subscriptions".

    The file expects the event's items under `payload`, the key of Directus's pre-release socket; Directus renamed
    it `data` (general.test.ts asserts `data` for the same case) and later deleted rest.test.ts. The port asserts
    the same values under `data`.
    """
    collection = f"{REST_COLLECTION}_{pk_type}"

    async def check(api):
        ws = BlackboxSocket(socket_url(api, path="websocket"), auth=ADMIN_AUTH).start()
        for uid in UIDS:
            await ws.subscribe(collection, uid)
        inserted_name = str(uuid.uuid4())
        inserted_id = await create_item(api, collection, pk_type, inserted_name)
        messages = [await ws.get_messages(1, uid) for uid in UIDS]
        await ws.close()
        for uid, received in zip(UIDS, messages):
            assert len(received) == 1
            assert received[0] == subscription_message("create", [{"id": inserted_id, "name": inserted_name}], uid)
    run(check)
