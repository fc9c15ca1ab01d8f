"""Directus errors: the REST envelope (docs/directus-protocol.md §8.1) and the WebSocket envelope (§3.1, §7.2)."""
from __future__ import annotations

from typing import Any


class DirectusError(Exception):
    """An error Directus reports with a code, an HTTP status and a message."""

    def __init__(self, code: str, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.code = code
        self.status = status
        self.message = message
        self.headers = headers or {}

    def envelope(self) -> dict[str, Any]:
        """The REST body: `{"errors":[{"message":…,"extensions":{"code":…}}]}` (§8.1)."""
        return {"errors": [{"message": self.message, "extensions": {"code": self.code}}]}

    def ws_message(self, context: str, uid: Any = None, with_uid: bool = False) -> dict[str, Any]:
        """The socket error frame (§3.1). Errors from services carry no uid; only handler-built ones do."""
        message: dict[str, Any] = {
            "type": context,
            "status": "error",
            "error": {"code": self.code, "message": self.message},
        }
        if with_uid and uid is not None:
            message["uid"] = uid
        return message


# §8.1 table of codes, statuses and messages.
def invalid_credentials() -> DirectusError:
    return DirectusError("INVALID_CREDENTIALS", 401, "Invalid user credentials.")


def token_expired() -> DirectusError:
    return DirectusError("TOKEN_EXPIRED", 401, "Token expired.")


def invalid_token() -> DirectusError:
    return DirectusError("INVALID_TOKEN", 403, "Invalid token.")


def invalid_otp() -> DirectusError:
    return DirectusError("INVALID_OTP", 401, "Invalid user OTP.")


def user_suspended() -> DirectusError:
    return DirectusError("USER_SUSPENDED", 401, "User suspended.")


def forbidden(reason: str | None = None) -> DirectusError:
    return DirectusError("FORBIDDEN", 403, reason or "You don't have permission to access this.")


def forbidden_collection(collection: str) -> DirectusError:
    # §8.7: the exact text for an unknown or unreadable collection.
    return forbidden(
        f"You don't have permission to access collection \"{collection}\" or it does not exist. Queried in root."
    )


def forbidden_field(field: str, collection: str) -> DirectusError:
    return forbidden(
        f"You don't have permission to access field \"{field}\" in collection \"{collection}\" "
        "or it does not exist. Queried in root."
    )


def invalid_payload(reason: str) -> DirectusError:
    return DirectusError("INVALID_PAYLOAD", 400, f"Invalid payload. {reason.rstrip('.')}.")


def invalid_query(reason: str) -> DirectusError:
    return DirectusError("INVALID_QUERY", 400, f"Invalid query. {reason.rstrip('.')}.")


def record_not_unique(field: str, collection: str) -> DirectusError:
    return DirectusError(
        "RECORD_NOT_UNIQUE", 400, f"Value for field \"{field}\" in collection \"{collection}\" has to be unique."
    )


def route_not_found(path: str) -> DirectusError:
    return DirectusError("ROUTE_NOT_FOUND", 404, f"Route {path} doesn't exist.")


def requests_exceeded(retry_after_ms: int) -> DirectusError:
    seconds = max(1, (retry_after_ms + 999) // 1000)
    return DirectusError(
        "REQUESTS_EXCEEDED",
        429,
        f"Too many requests, retry after {retry_after_ms}ms.",
        {"Retry-After": str(seconds)},
    )


def service_unavailable(service: str, reason: str) -> DirectusError:
    return DirectusError("SERVICE_UNAVAILABLE", 503, f'Service "{service}" is unavailable. {reason}.')


# WebSocket-only errors (§2.2, §2.5, §2.6, §5.2).
def ws_error(context: str, code: str, message: str, uid: Any = None) -> dict[str, Any]:
    """A socket error frame built by a handler (these may carry a uid)."""
    frame: dict[str, Any] = {"type": context, "status": "error", "error": {"code": code, "message": message}}
    if uid is not None:
        frame["uid"] = uid
    return frame


HANDSHAKE_FAILED = "Authentication handshake failed."
AUTH_FAILED = "Authentication failed."
TOKEN_EXPIRED_TEXT = "Token expired."
AUTH_TIMEOUT_TEXT = "Authentication timed out."
INVALID_COLLECTION_TEXT = "The provided collection does not exists or is not accessible."
UNPARSABLE_TEXT = "Unable to parse the incoming message."
