"""What every `/_emulator/*` handler shares: JSON bodies in, JSON answers out, 400 for a bad request."""
from __future__ import annotations

from typing import Any, Awaitable, Callable

from aiohttp import web

from . import errors
from .rest_support import json_response, read_body

Route = Callable[[web.Request], Awaitable[web.StreamResponse]]


class ControlError(Exception):
    """A bad control request: answered with 400 `{"error": …}`."""


def ok(body: dict[str, Any] | None = None) -> web.Response:
    return json_response({"ok": True, **(body or {})})


async def json_body(request: web.Request) -> dict[str, Any]:
    """The request's JSON object (empty when there is no body)."""
    body = await read_body(request)
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise ControlError("the body must be a JSON object")
    return body


def wrap(handler: Route) -> Route:
    """Bad input answers 400 `{"error": …}`; a Directus error answers with its own status and code."""
    async def wrapped(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except (ControlError, ValueError, KeyError, TypeError) as error:
            return json_response({"error": str(error)}, status=400)
        except errors.DirectusError as error:
            return json_response({"error": error.message, "code": error.code}, status=error.status)
    return wrapped
