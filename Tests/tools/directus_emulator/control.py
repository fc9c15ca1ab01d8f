"""The test control API under `/_emulator/*` (no auth, JSON in and out). README.md documents every call."""
from __future__ import annotations

import asyncio
import base64
import time
from typing import TYPE_CHECKING, Any, Awaitable

from aiohttp import web

from . import frames, jsonutil
from .auth import totp
from .blast import blast
from .control_realworld import RealWorldControl
from .control_support import ControlError, Route, json_body, ok as _ok, wrap
from .database import ACTIVITY, REVISIONS
from .endless import EndlessMessages
from .generator import ChangeGenerator, GeneratorJob
from .permissions import CRUD
from .rest_support import json_response
from .seed import ADMIN_ROLE, READER_ROLE
from .writes import ORIGIN

if TYPE_CHECKING:
    from .app import Emulator

ROLE_NAMES = {"reader": READER_ROLE, "admin": ADMIN_ROLE, "public": None}


class Control:
    def __init__(self, emulator: "Emulator"):
        self.emulator = emulator
        self.generator = ChangeGenerator(emulator.db, emulator.auth, emulator.writer)
        self.last_blast: dict[str, Any] | None = None
        self.blast_task: asyncio.Task | None = None
        self.background: set[asyncio.Task] = set()
        self.endless = EndlessMessages(self._connections)

    def register(self, app: web.Application) -> None:
        routes: list[tuple[str, str, Route]] = [
            ("GET", "settings", self.get_settings), ("POST", "settings", self.set_settings),
            ("POST", "reset", self.reset), ("GET", "stats", self.stats),
            ("POST", "drop", self.drop), ("POST", "close", self.close),
            ("POST", "refuse-upgrades", self.refuse_upgrades), ("POST", "restart", self.restart),
            ("POST", "send", self.send), ("POST", "delay-commit", self.delay_commit),
            ("POST", "generator", self.start_generator), ("GET", "generator", self.generator_status),
            ("POST", "generator/wait", self.wait_generator), ("POST", "generator/stop", self.stop_generator),
            ("POST", "users/password", self.set_password), ("POST", "users/revoke", self.revoke),
            ("POST", "users/status", self.set_status), ("POST", "token", self.mint_token),
            ("POST", "expire-tokens", self.expire_tokens),
            ("GET", "otp", self.otp), ("POST", "activity-access", self.activity_access),
            ("POST", "permissions", self.set_permissions), ("POST", "write", self.write),
            ("POST", "blast", self.start_blast), ("GET", "blast", self.blast_status),
            ("POST", "activity-sequence", self.activity_sequence), ("POST", "retention", self.retention),
        ]
        routes += RealWorldControl(self.emulator).routes()
        routes += self.emulator.hostile_answers.routes()
        routes += self.endless.routes()
        for method, path, handler in routes:
            app.router.add_route(method, f"/_emulator/{path}", wrap(handler))

    _body = staticmethod(json_body)

    def stop_background(self) -> None:
        self.generator.stop_all()
        for task in list(self.background) + ([self.blast_task] if self.blast_task else []):
            task.cancel()

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    def _connections(self) -> list:
        return [c for ws in self.emulator.instances.servers() for c in ws.connections]

    def _user(self, email: Any) -> dict[str, Any]:
        user = self.emulator.db.user_by_email(str(email))
        if user is None:
            raise ControlError(f"no user with email {email!r}")
        return user

    # Settings, reset, stats ---------------------------------------------------------------------------------

    async def get_settings(self, request: web.Request) -> web.Response:
        return json_response(self.emulator.settings.as_dict())

    async def set_settings(self, request: web.Request) -> web.Response:
        self.emulator.apply_settings(await self._body(request))
        return json_response(self.emulator.settings.as_dict())

    async def reset(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        self.stop_background()
        self.emulator.reset(body.get("seed"))
        return _ok({"seed": self.emulator.seed_name})

    async def stats(self, request: web.Request) -> web.Response:
        emulator = self.emulator
        servers = emulator.instances.servers()
        activity = emulator.db.table("directus_activity")
        body = emulator.stats.as_dict()
        body.update({
            "connections_current": sum(len(ws.connections) for ws in servers),
            "clients_current": sum(len(ws.clients) for ws in servers),
            "clients": [{**c.describe(), "instance": i} for i, ws in enumerate(servers) for c in ws.clients],
            "subscriptions": [s for ws in servers for s in ws.subscriptions.describe()],
            "activity_max_id": activity.keys[-1] if activity.keys else 0,
            "activity_reserved_max_id": emulator.writer.activity_reserved,
            "activity_count": len(activity),
            "revisions_count": len(emulator.db.table("directus_revisions")),
            "pending_commits": emulator.writer.pending_commits,
            "items": emulator.db.counts(emulator.db.user_collections()),
            "sessions": len(emulator.auth.sessions),
            "generators": [job.describe() for job in self.generator.jobs],
            "heartbeat_running": emulator.ws.heartbeat.task is not None,
        })
        return json_response(body)

    # Connections --------------------------------------------------------------------------------------------

    async def drop(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        dropped = self.emulator.drop_all("drop", reset=bool(body.get("reset", True)))
        return _ok({"dropped": dropped})

    async def close(self, request: web.Request) -> web.Response:
        clients = self._connections()
        for client in clients:
            client.close("server_close")
        return _ok({"closed": len(clients)})

    async def refuse_upgrades(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        ms = float(body.get("ms", 0))
        self.emulator.ws.refuse_until = time.monotonic() + ms / 1000
        self.emulator.ws.refuse_status = int(body.get("status", 503))
        # `count`: the next N upgrades, whenever they come (a window in time assumes an idle machine).
        self.emulator.ws.refuse_count = int(body.get("count", 0))
        return _ok({"ms": ms, "count": self.emulator.ws.refuse_count, "status": self.emulator.ws.refuse_status})

    async def restart(self, request: web.Request) -> web.StreamResponse:
        body = await self._body(request)
        down_ms = float(body.get("down_ms", body.get("ms", 1000)))
        loop = asyncio.get_running_loop()
        # Answer first (this connection is about to go too), then go down.
        loop.call_later(0.05, lambda: self._spawn(self.emulator.restart(down_ms)))
        response = _ok({"down_ms": down_ms})
        response.headers["Connection"] = "close"
        return response

    async def send(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        kind = body.get("kind", "raw")
        size = int(body.get("size", 2 * 1024 * 1024))
        if kind == "raw":
            data = base64.b64decode(body["data_base64"])  # bytes written as they are (any framing)
        elif kind == "invalid_utf8":
            data = frames.encode(frames.TEXT, b'{"type":"ping","x":"\xff\xfe\xfd"}')
        elif kind == "oversize":
            pad = "x" * max(0, size - 30)
            data = frames.text('{"type":"ping","padding":"' + pad + '"}')
        elif kind == "non_json":
            data = frames.text(body.get("text", "this is not json"))
        elif kind == "text":
            data = frames.text(body["text"])
        elif kind == "json":
            data = frames.text(jsonutil.dumpb(body["message"]))
        elif kind == "binary":
            payload = base64.b64decode(body["data_base64"]) if "data_base64" in body else b"\x00\x01\x02\x03"
            data = frames.encode(frames.BINARY, payload)
        else:
            raise ControlError(f"unknown kind {kind!r}")
        clients = [c for c in self._connections() if c.writable]
        for client in clients:
            client.send_bytes(data)
        return _ok({"sockets": len(clients), "bytes": len(data)})

    # Writes -------------------------------------------------------------------------------------------------

    async def delay_commit(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        collection = body["collection"]
        if self.emulator.db.collection(collection) is None:
            raise ControlError(f"unknown collection {collection!r}")
        self.emulator.writer.delay_next_commit(collection, float(body["delay_ms"]))
        return _ok({"queued": len(self.emulator.writer.commit_delays[collection])})

    async def write(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        email = body.get("as", "admin@example.com")
        accountability = self.emulator.auth.accountability(self._user(email)) if email else None
        if accountability is not None:
            accountability = accountability.with_request("127.0.0.1", "directus-emulator/control", None)
        writer, name = self.emulator.writer, body["collection"]
        emit, track, action = bool(body.get("emit_events", True)), bool(body.get("track", True)), body["action"]
        ORIGIN.set(self.emulator.instances.get(int(body.get("instance", 0))).index)
        if action == "create":
            data = body["data"]
            keys = await writer.create(name, data if isinstance(data, list) else [data], accountability, emit, track)
        elif action == "update":
            keys = await writer.update(name, body["keys"], body["data"], accountability, emit, track)
        elif action == "delete":
            keys = await writer.delete(name, body["keys"], accountability, emit, track)
        else:
            raise ControlError("action must be create, update or delete")
        return _ok({"keys": keys})

    async def start_generator(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        job = GeneratorJob(collection=body.get("collection", "articles"), count=int(body.get("count", 10)),
                           interval_ms=float(body.get("interval_ms", 100)), kind=body.get("kind", "mixed"),
                           emit=bool(body.get("emit_events", True)), track=bool(body.get("track", True)))
        self.generator.start(job)
        return _ok(job.describe())

    async def generator_status(self, request: web.Request) -> web.Response:
        jobs = self.generator.jobs
        return json_response({"running": any(j.running for j in jobs), "jobs": [j.describe() for j in jobs]})

    async def wait_generator(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        finished = await self.generator.wait(body.get("ids"), float(body.get("timeout_ms", 30000)) / 1000)
        return json_response({"finished": finished, "jobs": [j.describe() for j in self.generator.jobs]})

    async def stop_generator(self, request: web.Request) -> web.Response:
        self.generator.stop_all()
        return _ok()

    # Users, tokens, permissions -----------------------------------------------------------------------------

    async def set_password(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        user = self._user(body["email"])
        user["_password"] = str(body["password"])
        revoked = self.emulator.auth.revoke(user["id"]) if body.get("revoke_sessions", True) else 0
        return _ok({"revoked": revoked})

    async def revoke(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        user_id = self._user(body["email"])["id"] if body.get("email") else None
        return _ok({"revoked": self.emulator.auth.revoke(user_id)})

    async def set_status(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        status = body["status"]
        if status not in ("active", "suspended", "inactive", "draft", "invited", "archived"):
            raise ControlError(f"unknown status {status!r}")
        self._user(body["email"])["status"] = status
        return _ok()

    async def mint_token(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        user = self._user(body.get("email", "admin@example.com"))
        settings = self.emulator.settings
        saved = settings.token_ttl_ms
        settings.token_ttl_ms = int(body.get("ttl_ms", saved))
        try:
            token, expires = self.emulator.auth.access_token(user)
        finally:
            settings.token_ttl_ms = saved
        return _ok({"access_token": token, "expires": expires})

    async def expire_tokens(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        user_id = self._user(body["email"])["id"] if body.get("email") else None
        expired = 0
        for ws in self.emulator.instances.servers():
            for client in list(ws.clients):
                if user_id is None or (client.accountability and client.accountability.user == user_id):
                    expired += ws.socket_auth.expire_now(client)
        return _ok({"expired": expired})

    async def otp(self, request: web.Request) -> web.Response:
        user = self._user(request.query.get("email", "otp@example.com"))
        secret = user.get("tfa_secret")
        if not secret:
            raise ControlError("that user has no OTP secret")
        return _ok({"otp": totp(secret), "secret": secret})

    async def activity_access(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        self.emulator.apply_settings({"activity_access": body["access"]})
        return _ok({"access": self.emulator.settings.activity_access})

    async def set_permissions(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        role = body.get("role", "reader")
        if role not in ROLE_NAMES:
            raise ControlError(f"role must be one of {list(ROLE_NAMES)}")
        collection = body["collection"]
        actions = body.get("actions", list(CRUD))
        policy = self.emulator.db.policy(ROLE_NAMES[role])
        policy.revoke(collection)
        if actions:
            policy.grant(collection, actions, body.get("filter"))
        return _ok({"role": role, "collection": collection, "actions": actions})

    # Activity log ---------------------------------------------------------------------------------------------

    async def activity_sequence(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        table = self.emulator.db.table(ACTIVITY)
        jump = int(body.get("jump", 0))
        if jump < 0:
            raise ControlError("a sequence only moves forward: jump must be >= 0")
        table.next_auto += jump  # a reseeded sequence: ids in between are never handed out
        return _ok({"next_id": table.next_auto})

    async def retention(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        db = self.emulator.db
        activity, revisions = db.table(ACTIVITY), db.table(REVISIONS)
        doomed = list(activity.scan(high=int(body["before_id"]), high_inclusive=False))
        for row in doomed:  # the retention job deletes old activity; its revisions go with it (FK cascade)
            activity.delete(row["id"])
            for revision_id in db.revisions_by_activity.pop(row["id"], []):
                revisions.delete(revision_id)
        return _ok({"deleted": len(doomed), "oldest_id": activity.keys[0] if activity.keys else None})

    # Blast --------------------------------------------------------------------------------------------------

    async def start_blast(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        if self.blast_task is not None and not self.blast_task.done():
            raise ControlError("a blast is already running")
        clients = list(self.emulator.ws.clients)
        rate = float(body.get("rate", 0))
        if rate < 0:
            raise ControlError("rate is frames per second: 0 (as fast as possible) or more")
        coro = blast(clients, body.get("collection", "articles"), int(body.get("count", 1000)),
                     int(body.get("size", 300)), int(body.get("start_id", 1)), rate,
                     bool(body.get("direct", False)))
        self.last_blast = None
        self.blast_task = asyncio.get_running_loop().create_task(coro)
        self.blast_task.add_done_callback(self._blast_done)
        if body.get("wait", True):
            return _ok(await asyncio.shield(self.blast_task))
        return _ok({"started": True})

    def _blast_done(self, task: asyncio.Task) -> None:
        if not task.cancelled() and task.exception() is None:
            self.last_blast = task.result()

    async def blast_status(self, request: web.Request) -> web.Response:
        running = self.blast_task is not None and not self.blast_task.done()
        return json_response({"running": running, "result": self.last_blast})
