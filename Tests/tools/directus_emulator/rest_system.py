"""Auth (§8.3–§8.5), server (§8.6), users/me, permissions/me (§8.9), fields and collections endpoints."""
from __future__ import annotations

import asyncio
import time
from typing import Any

from aiohttp import web

from . import errors, jsonutil
from .auth import Auth
from .database import USERS, Database
from .permissions import permission, permissions_me
from .reader import Reader
from .rest_support import caller, json_response, read_body, request_query
from .settings import Settings

VERSION = "11.14.1"  # the Directus release whose behaviour directus-protocol.md was cross-checked against


_RAW_MAX = "__info_query_limit_max__"


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


class SystemRoutes:
    def __init__(self, db: Database, auth: Auth, reader: Reader, settings: Settings):
        self.db = db
        self.auth = auth
        self.reader = reader
        self.settings = settings

    def register(self, app: web.Application) -> None:
        router = app.router
        router.add_get("/server/ping", self.ping)
        router.add_get("/server/info", self.info)
        router.add_get("/server/health", self.health)
        router.add_post("/auth/login", self.login)
        router.add_post("/auth/refresh", self.refresh)
        router.add_post("/auth/logout", self.logout)
        router.add_get("/users/me", self.me)
        router.add_get("/permissions/me", self.permissions_me)
        router.add_get("/fields", self.all_fields)
        router.add_get("/fields/{collection}", self.fields)
        router.add_get("/fields/{collection}/{field}", self.field)
        router.add_get("/collections", self.collections)
        router.add_get("/collections/{collection}", self.collection)

    # Server ------------------------------------------------------------------------------------------------

    async def ping(self, request: web.Request) -> web.Response:
        # Express `res.send('pong')`: text/html (§8.6). Registered before authentication.
        return web.Response(text="pong", content_type="text/html")

    async def health(self, request: web.Request) -> web.Response:
        return web.Response(text='{"status":"ok"}', content_type="application/health+json")

    async def info(self, request: web.Request) -> web.Response:
        s = self.settings
        data: dict[str, Any] = {
            "project": {"project_name": "Directus emulator", "project_descriptor": None, "default_language": "en-US"},
        }
        acc = caller(request)
        if acc.user is not None:
            # §8.6: the websocket block only for an authenticated user; `false` when websockets are off.
            data["rateLimit"] = {"points": s.rate_limit_points, "duration": s.rate_limit_duration} \
                if s.rate_limit_points > 0 else False
            # `info_query_limit_max`: raw text in place of the number (a broken proxy or a hostile server), set below.
            data["queryLimit"] = {"default": s.query_limit_default,
                                  "max": _RAW_MAX if s.info_query_limit_max else s.query_limit_max}
            data["websocket"] = {
                "rest": {"authentication": s.auth_mode, "path": s.websocket_path},
                "graphql": False,  # the emulator has no GraphQL socket
                "heartbeat": _number(s.heartbeat_period) if s.heartbeat_enabled else False,
                "logs": False,
            } if s.websockets_enabled else False
            data["version"] = VERSION
        if s.info_query_limit_max and acc.user is not None:
            body = jsonutil.dumpb({"data": data}).replace(jsonutil.dumpb(_RAW_MAX), s.info_query_limit_max.encode())
            return web.Response(body=body, content_type="application/json")
        return json_response({"data": data})

    # Auth --------------------------------------------------------------------------------------------------

    async def login(self, request: web.Request) -> web.Response:
        started = time.monotonic()
        body = await read_body(request)
        if not isinstance(body, dict):
            raise errors.invalid_payload('"email" is required')
        mode = body.get("mode", "json")
        try:
            tokens = self.auth.login(body.get("email"), body.get("password"), body.get("otp"))
        except errors.DirectusError:
            # LOGIN_STALL_TIME pads failures so timing tells nothing (§8.3).
            remaining = self.settings.login_stall_ms / 1000 - (time.monotonic() - started)
            if remaining > 0:
                await asyncio.sleep(remaining)
            raise
        return self._tokens_response(tokens, mode)

    def _tokens_response(self, tokens, mode: str) -> web.Response:
        if mode == "cookie":
            response = json_response({"data": {"expires": tokens.expires, "access_token": tokens.access_token}})
            response.set_cookie("directus_refresh_token", tokens.refresh_token, httponly=True, path="/")
            return response
        if mode == "session":
            response = json_response({"data": {"expires": tokens.expires}})
            response.set_cookie("directus_session_token", tokens.access_token, httponly=True, path="/")
            return response
        if mode != "json":
            raise errors.invalid_payload('"mode" must be one of json, cookie, session')
        return json_response({"data": {"expires": tokens.expires, "refresh_token": tokens.refresh_token,
                                        "access_token": tokens.access_token}})

    @staticmethod
    def _mode_and_token(request: web.Request, body: Any) -> tuple[str, Any]:
        body = body if isinstance(body, dict) else {}
        token = body.get("refresh_token")
        mode = body.get("mode") or ("json" if token else "cookie")  # §8.4 mode defaults
        if token is None and mode == "cookie":
            token = request.cookies.get("directus_refresh_token")
        return mode, token

    async def refresh(self, request: web.Request) -> web.Response:
        mode, token = self._mode_and_token(request, await read_body(request))
        return self._tokens_response(self.auth.refresh(token), mode)

    async def logout(self, request: web.Request) -> web.Response:
        _, token = self._mode_and_token(request, await read_body(request))
        self.auth.logout(token)
        response = web.Response(status=204)  # even when the token was unknown (§8.5)
        if request.cookies.get("directus_refresh_token"):
            response.del_cookie("directus_refresh_token")
        return response

    # Users and permissions --------------------------------------------------------------------------------

    async def me(self, request: web.Request) -> web.Response:
        acc = caller(request)
        if acc.user is None:
            raise errors.invalid_credentials()
        # Read as the system (the app-access permission lets users read themselves and their role).
        row = self.reader.read_one(USERS, acc.user, request_query(request), None)
        return json_response({"data": row})

    async def permissions_me(self, request: web.Request) -> web.Response:
        acc = caller(request)
        if acc.user is None and acc.role is None:
            raise errors.forbidden()
        return json_response({"data": permissions_me(acc, list(self.db.collections))})

    # Schema ------------------------------------------------------------------------------------------------

    def _visible(self, request: web.Request, name: str) -> bool:
        return self.db.collection(name) is not None and permission(caller(request), name, "read") is not None

    def _require(self, request: web.Request, name: str):
        if not self._visible(request, name):
            raise errors.forbidden_collection(name)
        return self.db.collections[name]

    async def all_fields(self, request: web.Request) -> web.Response:
        data = [f.describe(name) for name, c in self.db.collections.items() if self._visible(request, name)
                for f in c.fields.values()]
        return json_response({"data": data})

    async def fields(self, request: web.Request) -> web.Response:
        collection = self._require(request, request.match_info["collection"])
        return json_response({"data": [f.describe(collection.name) for f in collection.fields.values()]})

    async def field(self, request: web.Request) -> web.Response:
        collection = self._require(request, request.match_info["collection"])
        spec = collection.fields.get(request.match_info["field"])
        if spec is None:
            raise errors.forbidden_field(request.match_info["field"], collection.name)
        return json_response({"data": spec.describe(collection.name)})

    async def collections(self, request: web.Request) -> web.Response:
        data = [c.describe() for name, c in self.db.collections.items() if self._visible(request, name)]
        return json_response({"data": data})

    async def collection(self, request: web.Request) -> web.Response:
        return json_response({"data": self._require(request, request.match_info["collection"]).describe()})
