"""`/utils` endpoints a bridge meets: manual sorting (`POST /utils/sort/:collection`, docs/directus-protocol.md
§14.3)."""
from __future__ import annotations

from typing import Any

from aiohttp import web

from . import errors
from .database import Database
from .rest_support import caller, read_body
from .sorting import manual_sort
from .writes import ItemEvent, Writer


def _key(value: Any) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


class UtilsRoutes:
    def __init__(self, db: Database, writer: Writer):
        self.db = db
        self.writer = writer

    def register(self, app: web.Application) -> None:
        app.router.add_post("/utils/sort/{collection}", self.sort)

    async def sort(self, request: web.Request) -> web.Response:
        name = request.match_info["collection"]
        body = await read_body(request)
        if self.db.collection(name) is None:
            raise errors.forbidden()  # `collectionExists` runs before the body is looked at
        valid = isinstance(body, dict) and not set(body) - {"item", "to"} and _key(body.get("item")) \
            and _key(body.get("to"))
        if not valid:
            raise errors.invalid_payload('Validation error: "item" and "to" are required strings or numbers')
        manual_sort(self.db, name, body["item"], body["to"], caller(request))
        # `items.sort` → the socket's `update` of the dragged item, its key as the body had it (§5.5, §14.3).
        self.writer.publish(ItemEvent("update", name, [body["item"]]))
        return web.Response(status=200)
