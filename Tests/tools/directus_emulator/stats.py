"""Counters the control API reports (`GET /_emulator/stats`)."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Stats:
    connections_total: int = 0            # sockets upgraded since start (or reset)
    closes: Counter = field(default_factory=Counter)   # reason → count (heartbeat, auth_timeout, …)
    client_close_codes: Counter = field(default_factory=Counter)  # close code a client sent ("none" = no code)
    upgrades_rejected: Counter = field(default_factory=Counter)  # reason → count (401, 403, refused, …)
    server_pings_sent: int = 0            # JSON {"type":"ping"} frames sent by the heartbeat
    client_pongs: int = 0                 # {"type":"pong"} received
    client_pings: int = 0                 # {"type":"ping"} received
    protocol_pings: int = 0               # opcode 0x9 frames received (never answered, docs/directus-protocol.md §4)
    auth_messages: int = 0                # frames with type "auth" received (handshake and in-band)
    auth_ok: int = 0
    auth_failed: int = 0
    tokens_expired: int = 0               # TOKEN_EXPIRED messages sent (the token's expiry or expire-tokens)
    dropped_before_auth: int = 0          # frames that arrived while the handshake auth was still running
    messages_received: int = 0            # every data frame received on a socket
    events_sent: int = 0                  # subscription event frames (create/update/delete) sent
    events_lost: int = 0                  # write events that never reached the sockets (`lose-events`, §14.1)
    rate_limited: int = 0
    http_requests: int = 0

    def as_dict(self) -> dict[str, Any]:
        result = dict(self.__dict__)
        result["closes"] = dict(self.closes)
        result["client_close_codes"] = dict(self.client_close_codes)
        result["upgrades_rejected"] = dict(self.upgrades_rejected)
        return result
