"""Logins, rotating refresh tokens, JWT access tokens, static tokens and OTP (docs/directus-protocol.md §2.3,
§8.2–§8.5)."""
from __future__ import annotations

import base64
import hashlib
import hmac
import math
import secrets
import struct
import time
from dataclasses import dataclass
from typing import Any

from . import errors, jsonutil
from .database import Database
from .permissions import Accountability, Policy
from .settings import Settings


def now_ms() -> float:
    return time.time() * 1000


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def totp(secret_base32: str, at: float | None = None, step: int = 30, digits: int = 6) -> str:
    """RFC 6238 time-based one-time password (what Directus's otplib `authenticator` checks)."""
    key = base64.b32decode(secret_base32.upper() + "=" * (-len(secret_base32) % 8))
    counter = int((time.time() if at is None else at) // step)
    digest = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    code = (struct.unpack(">I", digest[offset:offset + 4])[0] & 0x7FFFFFFF) % (10 ** digits)
    return str(code).zfill(digits)


@dataclass
class Tokens:
    """What `/auth/login` and `/auth/refresh` return in json mode (§8.3): `expires` is milliseconds."""

    access_token: str
    refresh_token: str
    expires: int


@dataclass
class Session:
    user: str
    expires_at_ms: float


class Auth:
    """Issues and verifies tokens. Access tokens are real HS256 JWTs with issuer `directus`."""

    def __init__(self, db: Database, settings: Settings):
        self.db = db
        self.settings = settings
        self.secret = secrets.token_bytes(32)
        self.sessions: dict[str, Session] = {}

    # Issuing ----------------------------------------------------------------------------------------------

    def login(self, email: Any, password: Any, otp: Any = None) -> Tokens:
        """Local-provider login: raises INVALID_CREDENTIALS, INVALID_OTP or USER_SUSPENDED… (§8.3)."""
        if not isinstance(email, str) or not isinstance(password, str):
            raise errors.invalid_payload('"email" and "password" are required')
        user = self.db.user_by_email(email)
        if user is None or user.get("_password") != password:
            raise errors.invalid_credentials()
        if user.get("status") != "active":
            raise errors.invalid_credentials()  # inactive users fail login with INVALID_CREDENTIALS (§8.1)
        secret = user.get("tfa_secret")
        if secret:
            if not isinstance(otp, str) or not self._otp_ok(secret, otp):
                raise errors.invalid_otp()
        return self._issue(user)

    def refresh(self, refresh_token: Any) -> Tokens:
        """Rotates: the old refresh token stops working at once (§8.4)."""
        if not isinstance(refresh_token, str) or not refresh_token:
            raise errors.invalid_payload("The refresh token is required in either the payload or cookie")
        session = self.sessions.pop(refresh_token, None)
        if session is None or session.expires_at_ms <= now_ms():
            raise errors.invalid_credentials()
        user = self.db.table("directus_users").get(session.user)
        if user is None:
            raise errors.invalid_credentials()
        if user.get("status") == "suspended":
            raise errors.user_suspended()
        if user.get("status") != "active":
            raise errors.invalid_credentials()
        return self._issue(user)

    def logout(self, refresh_token: Any) -> None:
        if isinstance(refresh_token, str):
            self.sessions.pop(refresh_token, None)

    def revoke(self, user_id: str | None = None) -> int:
        """Ends every session (of one user, or of everyone); returns how many."""
        doomed = [t for t, s in self.sessions.items() if user_id is None or s.user == user_id]
        for token in doomed:
            del self.sessions[token]
        return len(doomed)

    def _issue(self, user: dict[str, Any]) -> Tokens:
        refresh_token = secrets.token_urlsafe(48)
        self.sessions[refresh_token] = Session(user["id"], now_ms() + self.settings.refresh_ttl_ms)
        access_token, expires = self.access_token(user, refresh_token)
        return Tokens(access_token, refresh_token, expires)

    def access_token(self, user: dict[str, Any], session: str | None = None) -> tuple[str, int]:
        ttl = int(self.settings.token_ttl_ms)
        issued = int(now_ms())
        role = self.db.role(user.get("role")) or {}
        claims = {
            "id": user["id"],
            "role": user.get("role"),
            "app_access": bool(role.get("app_access")),
            "admin_access": bool(role.get("admin_access")),
            "session": session,
            "iat": int(issued // 1000),
            # JWT `exp` is whole seconds (§13.19); `exp_ms` keeps sub-second test TTLs exact.
            "exp": math.ceil((issued + ttl) / 1000),
            "exp_ms": issued + ttl,
            "iss": "directus",
        }
        header = _b64(jsonutil.dumpb({"alg": "HS256", "typ": "JWT"}))
        body = _b64(jsonutil.dumpb(claims))
        signature = _b64(hmac.new(self.secret, f"{header}.{body}".encode(), hashlib.sha256).digest())
        return f"{header}.{body}.{signature}", ttl

    # Verifying --------------------------------------------------------------------------------------------

    def verify(self, token: str) -> tuple[Accountability, float | None]:
        """Token → (accountability, expiry in ms or None for static tokens) (§8.2).

        Directus JWT: expired → TOKEN_EXPIRED, bad signature → INVALID_TOKEN. Anything else is looked up
        as a static token (`directus_users.token`); unknown → INVALID_CREDENTIALS.
        """
        claims = self._decode(token)
        if claims is not None:
            if not hmac.compare_digest(self._sign(token), token.rsplit(".", 1)[1]):
                raise errors.invalid_token()
            if claims.get("exp_ms", claims.get("exp", 0) * 1000) <= now_ms():
                raise errors.token_expired()
            user = self.db.table("directus_users").get(claims.get("id"))
            if user is None or user.get("status") != "active":
                raise errors.invalid_credentials()
            return self.accountability(user), claims.get("exp_ms", claims["exp"] * 1000)
        user = self.db.user_by_token(token)
        if user is None or user.get("status") != "active":
            raise errors.invalid_credentials()
        return self.accountability(user), None

    def accountability(self, user: dict[str, Any]) -> Accountability:
        role_id = user.get("role")
        role = self.db.role(role_id) or {}
        return Accountability(
            user=user["id"],
            role=role_id,
            admin=bool(role.get("admin_access")),
            app=bool(role.get("app_access")),
            # A user without a role has no policy of its own; the public role's permissions are not theirs.
            policy=self.db.policy(role_id) if role_id else Policy(app_access=False),
        )

    def public(self) -> Accountability:
        """The public role's accountability (§2.1 step 5)."""
        return Accountability(user=None, role=None, admin=False, app=False, public=True, policy=self.db.policy(None))

    def _decode(self, token: str) -> dict[str, Any] | None:
        parts = token.split(".")
        if len(parts) != 3:
            return None
        try:
            claims = jsonutil.loads(_unb64(parts[1]))
        except (ValueError, UnicodeDecodeError):
            return None
        if not isinstance(claims, dict) or claims.get("iss") != "directus":
            return None
        return claims

    def _sign(self, token: str) -> str:
        signed = token.rsplit(".", 1)[0]
        return _b64(hmac.new(self.secret, signed.encode(), hashlib.sha256).digest())

    @staticmethod
    def _otp_ok(secret: str, otp: str) -> bool:
        moment = time.time()
        return any(hmac.compare_digest(totp(secret, moment + drift), otp) for drift in (-30, 0, 30))
