"""The JSON heartbeat (docs/directus-protocol.md §4): one global tick sends `{"type":"ping"}`; a client silent for a
period is closed."""
from __future__ import annotations

import asyncio
from typing import Callable, Iterable

from .settings import Settings
from .stats import Stats
from .ws_client import OPEN, Client

PING = {"type": "ping"}
NODE_TIMEOUT_MAX_MS = 2**31 - 1  # Node's TIMEOUT_MAX


def node_timer_seconds(period_seconds: float) -> float:
    """The interval Node's `setInterval`/`setTimeout` really run for `WEBSOCKETS_HEARTBEAT_PERIOD` (§14.4).

    Directus passes period × 1000 unchecked; Node takes 1 … 2³¹−1 ms and turns anything else (beyond 2147483.647 s,
    zero, negative) into 1 ms with a TimeoutOverflowWarning. `/server/info` keeps reporting the configured value.
    """
    milliseconds = period_seconds * 1000
    if not 1 <= milliseconds <= NODE_TIMEOUT_MAX_MS:
        milliseconds = 1
    return milliseconds / 1000


class Heartbeat:
    """Starts with the first established client and stops when none remain (§4).

    At every tick the clients pinged at the previous tick that sent no handler-reaching message since are
    closed (no code), then every current client is pinged. So a dead peer goes within two periods of its last
    message, and a client that connected just after a tick is first checked one tick later.
    """

    def __init__(self, settings: Settings, stats: Stats, clients: Callable[[], Iterable[Client]]):
        self.settings = settings
        self.stats = stats
        self.clients = clients
        self.pending: set[Client] = set()
        self.task: asyncio.Task | None = None

    def client_added(self) -> None:
        if self.task is None and self.settings.heartbeat_enabled:
            self.task = asyncio.get_running_loop().create_task(self._run())

    def client_removed(self, client: Client) -> None:
        self.pending.discard(client)
        if not any(True for _ in self.clients()):
            self.stop()

    def alive(self, client: Client) -> None:
        """Any valid, non-auth message reaching the handlers counts (§4, §13.4)."""
        self.pending.discard(client)

    def restart(self) -> None:
        """Applies a new period or enabled flag."""
        self.stop()
        if any(True for _ in self.clients()):
            self.client_added()

    def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.task = None
        self.pending.clear()

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(node_timer_seconds(self.settings.heartbeat_period))
            self.tick()

    def tick(self) -> None:
        if self.settings.silent:
            return  # a hung server neither pings nor drops anyone
        for client in list(self.pending):
            if client.state == OPEN:
                client.close("heartbeat")
        self.pending = {c for c in self.clients() if c.state == OPEN}
        for client in self.pending:
            client.send(PING)
            self.stats.server_pings_sent += 1
