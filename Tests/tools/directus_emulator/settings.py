"""Every tunable of the emulator: start-up flags and `POST /_emulator/settings` change the same fields."""
from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass, fields
from typing import Any

AUTH_MODES = ("handshake", "strict", "public")
MESSENGERS = ("local", "redis")
ACTIVITY_ACCESS = ("none", "partial", "full")


@dataclass
class Settings:
    """Defaults follow Directus's (docs/directus-protocol.md §1.3) except where a test needs the emulator to be useful
    out of the box."""

    token_ttl_ms: int = 900_000              # ACCESS_TOKEN_TTL 15m
    refresh_ttl_ms: int = 604_800_000        # REFRESH_TOKEN_TTL 7d
    websockets_enabled: bool = True          # WEBSOCKETS_ENABLED (Directus defaults to false; useless here)
    auth_mode: str = "handshake"             # WEBSOCKETS_REST_AUTH
    auth_timeout: float = 10.0               # WEBSOCKETS_REST_AUTH_TIMEOUT, seconds
    heartbeat_enabled: bool = True           # WEBSOCKETS_HEARTBEAT_ENABLED
    heartbeat_period: float = 30.0           # WEBSOCKETS_HEARTBEAT_PERIOD, seconds; runs as Node would (§14.4)
    conn_limit: int | None = None            # WEBSOCKETS_REST_CONN_LIMIT (None = unlimited)
    rate_limit_points: int = 0               # RATE_LIMITER_POINTS per socket; 0 = RATE_LIMITER_ENABLED=false
    rate_limit_duration: float = 1.0         # RATE_LIMITER_DURATION, seconds
    query_limit_default: int = 100           # QUERY_LIMIT_DEFAULT
    query_limit_max: int = -1                # QUERY_LIMIT_MAX: a larger `limit` is refused (400); -1 = none
    limit_cap: int = 0                       # rows per read at most, whatever `limit` asks; 0 = off (not Directus's)
    info_query_limit_max: str = ""           # raw JSON `/server/info` shows as queryLimit.max; "" = query_limit_max (not Directus's)
    limit_refusal_names: str = ""            # the text a refusal of a too-large `limit` names; "" = query_limit_max (not Directus's)
    max_payload: int = 100 * 1024 * 1024     # ws default maxPayload (Directus sets none, §1.3)
    login_stall_ms: int = 0                  # LOGIN_STALL_TIME (Directus: 500) — failed logins last at least this
    handshake_delay_ms: int = 20             # simulated async auth work; frames arriving meanwhile are lost (§2.2)
    activity_access: str = "partial"         # the non-admin roles' read access to directus_activity/revisions
    websocket_path: str = "/websocket"       # WEBSOCKETS_REST_PATH
    messenger: str = "local"                 # the bus between instances: local (in-process) or redis (§14.2)
    silent: bool = False                     # a hung server: no frame and no close on any socket; upgrades work
    sorted_page_delay_ms: int = 0            # a slow database: each sorted `GET /items` (a snapshot page) waits this long

    def update(self, changes: dict[str, Any]) -> None:
        """Applies a partial update; raises ValueError naming the bad key or value."""
        known = {f.name: f for f in fields(self)}
        for key, value in changes.items():
            if key not in known:
                raise ValueError(f"unknown setting {key!r}; known: {', '.join(sorted(known))}")
            setattr(self, key, _convert(key, value, getattr(self, key)))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _convert(key: str, value: Any, current: Any) -> Any:
    if key == "auth_mode":
        value = str(value).lower()
        if value not in AUTH_MODES:
            raise ValueError(f"auth_mode must be one of {AUTH_MODES}")
        return value
    if key == "activity_access":
        if value not in ACTIVITY_ACCESS:
            raise ValueError(f"activity_access must be one of {ACTIVITY_ACCESS}")
        return value
    if key == "messenger":
        if value not in MESSENGERS:
            raise ValueError(f"messenger must be one of {MESSENGERS}")
        return value
    if key == "conn_limit":
        return None if value in (None, "", 0) else int(value)
    if key in ("websocket_path", "info_query_limit_max", "limit_refusal_names"):
        return str(value)
    if isinstance(current, bool):
        if isinstance(value, str):
            return value.lower() in ("1", "true", "yes", "on")
        return bool(value)
    if isinstance(current, float):
        number = float(value)
        if number <= 0 and key not in ("rate_limit_duration", "heartbeat_period"):
            raise ValueError(f"{key} must be positive")
        return number
    if isinstance(current, int):
        return int(value)
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """One `--kebab-case` flag per setting (booleans take true/false)."""
    for spec in fields(Settings):
        flag = "--" + spec.name.replace("_", "-")
        parser.add_argument(flag, dest=spec.name, default=None, metavar=spec.name.upper(),
                            help=f"(default {getattr(Settings, spec.name, None)!r})")


def from_arguments(namespace: argparse.Namespace) -> Settings:
    settings = Settings()
    changes = {f.name: getattr(namespace, f.name) for f in fields(Settings) if getattr(namespace, f.name) is not None}
    settings.update(changes)
    return settings
