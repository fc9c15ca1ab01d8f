"""Shared REST plumbing: JSON responses, bodies, queries and the caller's accountability (docs/directus-protocol.md
§8.1, §8.2)."""
from __future__ import annotations

from typing import Any

from aiohttp import web

from . import errors, jsonutil
from .auth import Auth
from .permissions import Accountability
from .query import Query, parse_qs_pairs, sanitize



def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(body=jsonutil.dumpb(body), status=status, content_type="application/json",
                        headers=headers)


def error_response(error: errors.DirectusError) -> web.Response:
    return json_response(error.envelope(), error.status, error.headers)


async def read_body(request: web.Request) -> Any:
    """The JSON body, or None when there is none; malformed JSON is INVALID_PAYLOAD (400)."""
    raw = await request.read()
    if not raw.strip():
        return None
    try:
        return jsonutil.loads(raw)
    except (ValueError, UnicodeDecodeError) as error:
        raise errors.invalid_payload(f"Invalid JSON: {error}") from None


def request_query(request: web.Request, body_query: Any = None) -> Query:
    """The sanitized query from the URL (qs nesting), or from a SEARCH body's `query` object."""
    if body_query is not None:
        return sanitize(body_query)
    pairs = [(k, v) for k, v in request.query.items() if k != "access_token"]
    return sanitize(parse_qs_pairs(pairs))


def extract_token(request: web.Request) -> str | None:
    """Bearer header or `?access_token`; both at once is INVALID_PAYLOAD (§8.2)."""
    header = request.headers.get("Authorization")
    query_token = request.query.get("access_token")
    header_token = None
    if header and header.lower().startswith("bearer "):
        header_token = header[7:].strip() or None
    if header_token and query_token:
        raise errors.invalid_payload("The request uses more than one method for including an access token")
    return header_token or query_token or request.cookies.get("directus_session_token")


def accountability_for(request: web.Request, auth: Auth) -> Accountability:
    token = extract_token(request)
    accountability = auth.verify(token)[0] if token else auth.public()
    return accountability.with_request(request.remote, request.headers.get("User-Agent"),
                                       request.headers.get("Origin"))


def caller(request: web.Request) -> Accountability:
    return request["accountability"]
