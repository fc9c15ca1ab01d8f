"""Socket authentication: auth message schema and flows (docs/directus-protocol.md §2.3), handshake (§2.2), re-auth
(§2.5), expiry (§2.6)."""
from __future__ import annotations

import asyncio
import re
from typing import Any, Callable

from . import errors
from .auth import Auth, now_ms
from .permissions import Accountability
from .settings import Settings
from .stats import Stats
from .ws_client import AUTHENTICATING, HANDSHAKE, OPEN, Client

_EMAIL = re.compile(r"^[^\s@]+@[^\s@]+\.[^\s@]+$")


def valid_auth_message(message: Any) -> bool:
    """`WebSocketAuthMessage`: type auth, optional uid, and email+password | access_token | refresh_token."""
    if not isinstance(message, dict) or message.get("type") != "auth":
        return False
    uid = message.get("uid", None)
    if "uid" in message and (isinstance(uid, bool) or not isinstance(uid, (str, int, float))):
        return False
    email, password = message.get("email"), message.get("password")
    if isinstance(email, str) and _EMAIL.match(email) and isinstance(password, str):
        return True
    return isinstance(message.get("access_token"), str) or isinstance(message.get("refresh_token"), str)


class SocketAuth:
    """Runs the auth flows for clients and keeps the expiry timers (§2.6)."""

    def __init__(self, auth: Auth, settings: Settings, stats: Stats, established: Callable[[Client], None]):
        self.auth = auth
        self.settings = settings
        self.stats = stats
        self.established = established

    def authenticate(self, message: dict[str, Any]) -> tuple[Accountability, float | None, str | None]:
        """§2.3: login / refresh run if present, but `access_token` wins. The access token is never returned."""
        refresh_token = None
        token = None
        if isinstance(message.get("email"), str) and isinstance(message.get("password"), str):
            tokens = self.auth.login(message["email"], message["password"])  # no OTP field on the socket
            token, refresh_token = tokens.access_token, tokens.refresh_token
        elif isinstance(message.get("refresh_token"), str):
            tokens = self.auth.refresh(message["refresh_token"])
            token, refresh_token = tokens.access_token, tokens.refresh_token
        if isinstance(message.get("access_token"), str):
            token = message["access_token"]
        assert token is not None
        accountability, expires = self.auth.verify(token)
        if accountability.user is None:
            raise errors.invalid_credentials()
        return accountability, expires, refresh_token

    # Handshake (§2.2) ---------------------------------------------------------------------------------------

    def start_handshake(self, client: Client) -> None:
        loop = asyncio.get_running_loop()
        client.handshake_timer = loop.call_later(self.settings.auth_timeout, self.handshake_failed, client)

    def handshake_failed(self, client: Client) -> None:
        """Timeout or any problem: AUTH_FAILED without uid (never AUTH_TIMEOUT), then close without code."""
        if client.state not in (HANDSHAKE, AUTHENTICATING):
            return
        self.stats.auth_failed += 1
        client.send(errors.ws_error("auth", "AUTH_FAILED", errors.HANDSHAKE_FAILED))
        client.close("handshake_failed")

    def first_frame(self, client: Client, message: Any) -> None:
        if client.handshake_timer is not None:
            client.handshake_timer.cancel()
            client.handshake_timer = None
        if isinstance(message, dict) and message.get("type") == "auth":
            self.stats.auth_messages += 1
        if not valid_auth_message(message):
            self.handshake_failed(client)
            return
        client.state = AUTHENTICATING
        asyncio.get_running_loop().create_task(self._finish_handshake(client, message))

    async def _finish_handshake(self, client: Client, message: dict[str, Any]) -> None:
        # Directus attaches the message listener only after this async work: frames meanwhile are lost (§2.2).
        await asyncio.sleep(self.settings.handshake_delay_ms / 1000)
        if client.state != AUTHENTICATING:
            return
        try:
            accountability, expires, refresh_token = self.authenticate(message)
        except errors.DirectusError:
            self.handshake_failed(client)
            return
        self.accept(client, accountability, expires)
        self.stats.auth_ok += 1
        client.send(self._ok(message, refresh_token))

    def accept(self, client: Client, accountability: Accountability, expires: float | None) -> None:
        """The client is established (counted, pinged, served), with its accountability and expiry timer."""
        client.accountability = accountability.with_request(client.ip, client.user_agent, client.origin)
        client.state = OPEN
        self.established(client)
        self.arm_expiry(client, expires)

    @staticmethod
    def _ok(message: dict[str, Any], refresh_token: str | None) -> dict[str, Any]:
        ok: dict[str, Any] = {"type": "auth", "status": "ok"}  # key order: type, status, uid, refresh_token
        if "uid" in message:
            ok["uid"] = message["uid"]
        if refresh_token is not None:
            ok["refresh_token"] = refresh_token
        return ok

    # In-band re-auth (§2.5) and expiry (§2.6) --------------------------------------------------------------------

    def auth_frame(self, client: Client, message: dict[str, Any]) -> None:
        """A frame with type auth on an established socket (never counts for the heartbeat, §13.4)."""
        self.stats.auth_messages += 1
        if client.reauth_deadline is not None:
            # The post-expiry wait only checks the type, valid or not (§2.6 step 2).
            client.reauth_deadline.cancel()
            client.reauth_deadline = None
        if not valid_auth_message(message):
            return  # schema-invalid auth is silently ignored (§2.5, §13.14)
        try:
            accountability, expires, refresh_token = self.authenticate(message)
        except errors.DirectusError:
            self.stats.auth_failed += 1
            client.accountability = None
            client.send(errors.ws_error("auth", "AUTH_FAILED", errors.AUTH_FAILED, message.get("uid")))
            if self.settings.auth_mode != "public":
                client.close("reauth_failed")
            return
        # ip / user agent / origin stay those of the upgrade request.
        client.accountability = accountability.with_request(client.ip, client.user_agent, client.origin)
        self.arm_expiry(client, expires)
        self.stats.auth_ok += 1
        client.send(self._ok(message, refresh_token))

    def arm_expiry(self, client: Client, expires_at_ms: float | None) -> None:
        for timer in (client.expiry_timer, client.reauth_deadline):
            if timer is not None:
                timer.cancel()
        client.expiry_timer = client.reauth_deadline = None
        client.expires_at_ms = expires_at_ms
        if expires_at_ms is None:
            return  # static tokens never expire on the socket (§13.16)
        delay = max(0.0, (expires_at_ms - now_ms()) / 1000)
        client.expiry_timer = asyncio.get_running_loop().call_later(delay, self._expired, client)

    def expire_now(self, client: Client) -> bool:
        """The control API's early expiry: the socket's token runs out now, whatever its `exp` (§2.6)."""
        if client.state != OPEN or client.expires_at_ms is None or client.expiry_timer is None:
            return False  # static tokens never expire on the socket; an expired one is already in its window
        client.expiry_timer.cancel()
        self._expired(client)
        return True

    def _expired(self, client: Client) -> None:
        client.expiry_timer = None
        if client.state != OPEN:
            return
        self.stats.tokens_expired += 1
        client.accountability = None  # subscriptions stay and keep receiving events (§2.6)
        client.send(errors.ws_error("auth", "TOKEN_EXPIRED", errors.TOKEN_EXPIRED_TEXT))
        loop = asyncio.get_running_loop()
        client.reauth_deadline = loop.call_later(self.settings.auth_timeout, self._auth_timeout, client)

    def _auth_timeout(self, client: Client) -> None:
        client.reauth_deadline = None
        if client.state != OPEN:
            return
        client.send(errors.ws_error("auth", "AUTH_TIMEOUT", errors.AUTH_TIMEOUT_TEXT))
        if self.settings.auth_mode != "public":
            client.close("auth_timeout")
