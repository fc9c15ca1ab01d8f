"""`/items/:collection` CRUD (docs/directus-protocol.md §8.7) and the read-only `/activity` and `/revisions` (§8.8)."""
from __future__ import annotations

import asyncio
from typing import Any, Callable

from aiohttp import web

from . import errors
from .database import ACTIVITY, REVISIONS
from .reader import Reader
from .rest_support import caller, json_response, read_body, request_query
from .writes import Writer


class ItemRoutes:
    def __init__(self, reader: Reader, writer: Writer, sorted_page_delay_ms: Callable[[], int] = lambda: 0):
        self.reader = reader
        self.writer = writer
        self.sorted_page_delay_ms = sorted_page_delay_ms

    def register(self, app: web.Application) -> None:
        router = app.router
        router.add_route("GET", "/items/{collection}", self.list_items)
        router.add_route("SEARCH", "/items/{collection}", self.search_items)
        router.add_route("POST", "/items/{collection}", self.create)
        router.add_route("PATCH", "/items/{collection}", self.update_many)
        router.add_route("DELETE", "/items/{collection}", self.delete_many)
        router.add_route("GET", "/items/{collection}/{key}", self.get_one)
        router.add_route("PATCH", "/items/{collection}/{key}", self.update_one)
        router.add_route("DELETE", "/items/{collection}/{key}", self.delete_one)
        for path, collection in (("/activity", ACTIVITY), ("/revisions", REVISIONS)):
            router.add_route("GET", path, self._system_list(collection))
            router.add_route("SEARCH", path, self._system_list(collection, search=True))
            router.add_route("GET", path + "/{key}", self._system_one(collection))

    @staticmethod
    def _user_collection(request: web.Request) -> str:
        name = request.match_info["collection"]
        if name.startswith("directus_"):
            raise errors.forbidden_collection(name)  # system collections have their own endpoints (§8.7)
        return name

    def _list(self, name: str, request: web.Request, body_query: Any = None) -> web.Response:
        result = self.reader.read(name, request_query(request, body_query), caller(request))
        body: dict[str, Any] = {"data": result.rows}
        if result.meta is not None:
            body["meta"] = result.meta
        return json_response(body)

    async def list_items(self, request: web.Request) -> web.Response:
        name = self._user_collection(request)
        # A slow database under a snapshot: tests stop a bridge while its pages are still being read.
        delay = self.sorted_page_delay_ms()
        if delay > 0 and "sort" in request.query:
            await asyncio.sleep(delay / 1000)
        return self._list(name, request)

    async def search_items(self, request: web.Request) -> web.Response:
        body = await read_body(request)
        return self._list(self._user_collection(request), request, (body or {}).get("query") or {})

    async def get_one(self, request: web.Request) -> web.Response:
        name = self._user_collection(request)
        row = self.reader.read_one(name, request.match_info["key"], request_query(request), caller(request))
        return json_response({"data": row})

    def _read_back(self, name: str, request: web.Request, keys: list[Any], single: bool) -> web.Response:
        """Writes answer with the items as the caller may read them; 204 when they may not (Directus)."""
        try:
            if single:
                return json_response({"data": self.reader.read_one(name, keys[0], request_query(request),
                                                                   caller(request))})
            rows = self.reader.read(name, request_query(request), caller(request), keys=keys, use_limit=False).rows
            return json_response({"data": rows})
        except errors.DirectusError as error:
            if error.code == "FORBIDDEN":
                return web.Response(status=204)
            raise

    async def create(self, request: web.Request) -> web.Response:
        name = self._user_collection(request)
        body = await read_body(request)
        if isinstance(body, list):
            keys = await self.writer.create(name, body, caller(request))
            return self._read_back(name, request, keys, single=False)
        if not isinstance(body, dict):
            raise errors.invalid_payload("Payload has to be an object or an array of objects")
        keys = await self.writer.create(name, [body], caller(request))
        return self._read_back(name, request, keys, single=True)

    async def update_many(self, request: web.Request) -> web.Response:
        name = self._user_collection(request)
        body = await read_body(request)
        acc = caller(request)
        if isinstance(body, list):
            keys = await self.writer.update_batch(name, body, acc)
        elif isinstance(body, dict) and isinstance(body.get("keys"), list):
            keys = await self.writer.update(name, body["keys"], body.get("data"), acc)
        elif isinstance(body, dict) and isinstance(body.get("query"), dict):
            keys = self._keys_for_query(name, body["query"], request)
            keys = await self.writer.update(name, keys, body.get("data"), acc)
        else:
            raise errors.invalid_payload('Either "keys", "query" or an array of items is required')
        return self._read_back(name, request, keys, single=False)

    async def update_one(self, request: web.Request) -> web.Response:
        name = self._user_collection(request)
        key = request.match_info["key"]  # a string: the event carries ["7"] (§5.3)
        await self.writer.update(name, [key], await read_body(request), caller(request))
        return self._read_back(name, request, [key], single=True)

    async def delete_many(self, request: web.Request) -> web.Response:
        name = self._user_collection(request)
        body = await read_body(request)
        if isinstance(body, list):
            keys = body  # as passed: `[7]` gives a delete event with [7] (§5.3)
        elif isinstance(body, dict) and isinstance(body.get("keys"), list):
            keys = body["keys"]
        elif isinstance(body, dict) and isinstance(body.get("query"), dict):
            keys = self._keys_for_query(name, body["query"], request)
        else:
            raise errors.invalid_payload('Either "keys", "query" or an array of keys is required')
        await self.writer.delete(name, keys, caller(request))
        return web.Response(status=204)

    async def delete_one(self, request: web.Request) -> web.Response:
        name = self._user_collection(request)
        await self.writer.delete(name, [request.match_info["key"]], caller(request))
        return web.Response(status=204)

    def _keys_for_query(self, name: str, raw_query: dict[str, Any], request: web.Request) -> list[Any]:
        collection = self.reader.db.collection(name)
        query = request_query(request, raw_query)
        query.fields = [collection.pk] if collection else ["*"]
        rows = self.reader.read(name, query, caller(request)).rows
        return [row[collection.pk] for row in rows] if collection else []

    def _system_list(self, name: str, search: bool = False):
        async def handler(request: web.Request) -> web.Response:
            body_query = None
            if search:
                body_query = ((await read_body(request)) or {}).get("query") or {}
            return self._list(name, request, body_query)
        return handler

    def _system_one(self, name: str):
        async def handler(request: web.Request) -> web.Response:
            row = self.reader.read_one(name, request.match_info["key"], request_query(request), caller(request))
            return json_response({"data": row})
        return handler
