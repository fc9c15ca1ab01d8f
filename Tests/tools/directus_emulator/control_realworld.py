"""Control calls for real-world Directus behaviours (docs/directus-protocol.md §14): several instances and lost
socket events. README.md documents each call."""
from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from .control_support import ControlError, Route, json_body, ok

if TYPE_CHECKING:
    from .app import Emulator


class RealWorldControl:
    def __init__(self, emulator: "Emulator"):
        self.emulator = emulator

    def routes(self) -> list[tuple[str, str, Route]]:
        return [
            ("POST", "instances", self.add_instances), ("GET", "instances", self.list_instances),
            ("POST", "lose-events", self.lose_events),
        ]

    async def add_instances(self, request: web.Request) -> web.Response:
        """Runs `count` instances on this database (§14.2)."""
        count = int((await json_body(request)).get("count", 2))
        if not 1 <= count <= 16:
            raise ControlError("count must be between 1 and 16")
        return ok({"ports": await self.emulator.add_instances(count)})

    async def list_instances(self, request: web.Request) -> web.Response:
        return ok({"ports": [i.port or self.emulator.port for i in self.emulator.instances]})

    async def lose_events(self, request: web.Request) -> web.Response:
        """The next `count` events of `action` commit their write (and activity) but reach no socket (§14.1)."""
        body = await json_body(request)
        action = body.get("action", "create")
        if action not in ("create", "update", "delete"):
            raise ControlError("action must be create, update or delete")
        lost = self.emulator.lost_events
        lost[action] = lost.get(action, 0) + int(body.get("count", 1))
        return ok({"pending": dict(lost)})
