"""Item writes with their activity and revision rows (docs/directus-protocol.md §8.8) and the events they emit (§5.3,
§5.5).

A write is planned (validated, keys and activity ids reserved), then committed: the item change, its activity
row and revision become visible together, then the event goes to the socket layer. A queued commit delay makes
one write wait between the two steps while later writes commit at once — so activity ids become visible out of
id order, like two database transactions committing in the other order.
"""
from __future__ import annotations

import asyncio
import contextvars
import copy
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from . import errors
from .database import ACTIVITY, REVISIONS, Database
from .filters import FilterCompiler, FilterContext, coerce, now_iso
from .jsonutil import js_string
from .permissions import Accountability, permission
from .schema import BOOLEAN, FLOAT, INTEGER, UUID, Collection


# The Directus instance whose request (or control call) is running; its writes' events start there (§14.2).
ORIGIN: contextvars.ContextVar[int] = contextvars.ContextVar("instance", default=0)


@dataclass
class ItemEvent:
    """What the `items.create|update|delete` action hook publishes: the keys exactly as the write had them, and
    the instance that handled the write (the messenger decides which instances' sockets hear it)."""

    action: str
    collection: str
    keys: list[Any]
    instance: int = field(default_factory=ORIGIN.get)


@dataclass
class _Change:
    action: str
    key: Any                      # stored key
    payload: dict[str, Any]       # fields written (create/update); empty for delete
    activity_id: int | None = None
    revision_id: int | None = None


@dataclass
class _Plan:
    collection: Collection
    accountability: Accountability | None
    changes: list[_Change]
    events: list[ItemEvent]
    timestamp: str
    revisions: bool
    emit: bool
    result_keys: list[Any] = field(default_factory=list)


def _forbidden_action(action: str, collection: str) -> errors.DirectusError:
    return errors.forbidden(f'You don\'t have permission to "{action}" from collection "{collection}" '
                            "or it does not exist.")


class Writer:
    """Creates, updates and deletes items as a caller; `listeners` receive every committed `ItemEvent`."""

    def __init__(self, db: Database):
        self.db = db
        self.listeners: list[Callable[[ItemEvent], None]] = []
        self.commit_delays: dict[str, deque[float]] = {}
        self.pending_commits = 0
        self.activity_reserved = 0  # highest activity id handed out (committed or not)

    def delay_next_commit(self, collection: str, delay_ms: float) -> None:
        self.commit_delays.setdefault(collection, deque()).append(delay_ms)

    # Operations ----------------------------------------------------------------------------------------------

    async def create(self, name: str, payloads: list[dict[str, Any]], acc: Accountability | None,
                     emit: bool = True, track: bool = True) -> list[Any]:
        collection = self._writable(name, acc, "create")
        table = self.db.table(name)
        changes: list[_Change] = []
        seen: set[Any] = set()
        for raw in payloads:
            if not isinstance(raw, dict):
                raise errors.invalid_payload("Each item has to be an object")
            payload = self._clean(collection, raw)
            key = payload.get(collection.pk)
            pk_field = collection.pk_field
            if key is None:
                if pk_field.auto_increment:
                    key = table.reserve()
                elif pk_field.type == UUID:
                    key = str(uuid.uuid4())
                else:
                    raise errors.invalid_payload(f'"{collection.pk}" is required')
                if not pk_field.auto_increment:
                    payload[collection.pk] = key
            elif table.get(key) is not None or key in seen:
                raise errors.record_not_unique(collection.pk, name)
            elif isinstance(key, int) and key >= table.next_auto:
                table.next_auto = key + 1
            seen.add(key)
            if "date_created" in collection.fields and "date_created" not in payload:
                payload["date_created"] = now_iso()
            changes.append(_Change("create", key, payload))
        events = [ItemEvent("create", name, [c.key]) for c in changes]  # §5.3: one event per created item
        plan = self._plan(collection, acc, changes, events, emit, track)
        plan.result_keys = [c.key for c in changes]
        await self._run(plan)
        return plan.result_keys

    async def update(self, name: str, raw_keys: list[Any], data: Any, acc: Accountability | None,
                     emit: bool = True, track: bool = True) -> list[Any]:
        """updateMany: one event carrying every key as passed (§5.3)."""
        collection = self._writable(name, acc, "update")
        if not isinstance(data, dict):
            raise errors.invalid_payload('"data" has to be an object')
        payload = self._clean(collection, data)
        payload.pop(collection.pk, None)
        self._touch(collection, payload)
        keys = self._existing(collection, raw_keys, acc, "update")
        changes = [_Change("update", key, dict(payload)) for key in keys]
        plan = self._plan(collection, acc, changes, [ItemEvent("update", name, list(raw_keys))], emit, track)
        plan.result_keys = list(raw_keys)
        await self._run(plan)
        return plan.result_keys

    async def update_batch(self, name: str, items: list[Any], acc: Accountability | None,
                           emit: bool = True, track: bool = True) -> list[Any]:
        """updateBatch: each object names its own key; one event per item (§5.3)."""
        collection = self._writable(name, acc, "update")
        changes, events, raw_keys = [], [], []
        for item in items:
            if not isinstance(item, dict) or item.get(collection.pk) is None:
                raise errors.invalid_payload(f'Each item has to be an object with its "{collection.pk}"')
            raw_key = item[collection.pk]
            (key,) = self._existing(collection, [raw_key], acc, "update")
            payload = self._clean(collection, item)
            payload.pop(collection.pk, None)
            self._touch(collection, payload)
            changes.append(_Change("update", key, payload))
            events.append(ItemEvent("update", name, [raw_key]))
            raw_keys.append(raw_key)
        plan = self._plan(collection, acc, changes, events, emit, track)
        plan.result_keys = raw_keys
        await self._run(plan)
        return raw_keys

    async def delete(self, name: str, raw_keys: list[Any], acc: Accountability | None,
                     emit: bool = True, track: bool = True) -> list[Any]:
        """deleteMany: the event carries the keys exactly as passed, strings included (§5.3)."""
        collection = self._writable(name, acc, "delete")
        if acc is None or acc.admin:
            # Directus checks nothing for admins: deleting a missing key still logs activity (§8.8).
            keys = [self.db.key_for(collection, k) for k in raw_keys]
        else:
            keys = self._existing(collection, raw_keys, acc, "delete")
        changes = [_Change("delete", key, {}) for key in keys]
        plan = self._plan(collection, acc, changes, [ItemEvent("delete", name, list(raw_keys))], emit, track)
        plan.result_keys = list(raw_keys)
        await self._run(plan)
        return plan.result_keys

    # Planning -----------------------------------------------------------------------------------------------

    def _writable(self, name: str, acc: Accountability | None, action: str) -> Collection:
        collection = self.db.collection(name)
        if collection is None or collection.system or permission(acc, name, action) is None:
            raise _forbidden_action(action, name)
        return collection

    def _clean(self, collection: Collection, raw: dict[str, Any]) -> dict[str, Any]:
        """Known, non-alias fields only, cast like the database column would cast them."""
        cleaned = {}
        for name, value in raw.items():
            spec = collection.fields.get(name)
            if spec is None or spec.is_alias:
                continue
            if spec.type in (INTEGER, FLOAT, BOOLEAN) and isinstance(value, str):
                value = coerce(value, spec.type)
            cleaned[name] = copy.deepcopy(value)
        return cleaned

    @staticmethod
    def _touch(collection: Collection, payload: dict[str, Any]) -> None:
        # The `date-updated` special sets the field on every update (not on create).
        if "date_updated" in collection.fields:
            payload["date_updated"] = now_iso()

    def _existing(self, collection: Collection, raw_keys: list[Any], acc: Accountability | None,
                  action: str) -> list[Any]:
        """Stored keys for raw keys; a missing or not-permitted item is FORBIDDEN (as Directus answers)."""
        table = self.db.table(collection.name)
        perm = permission(acc, collection.name, action)
        check = None
        if perm is not None and perm.filter:
            context = FilterContext(acc.user if acc else None, acc.role if acc else None)
            check = FilterCompiler(self.db, context).compile(collection, perm.filter)
        keys = []
        for raw in raw_keys:
            if isinstance(raw, (dict, list)) or raw is None:
                raise errors.invalid_payload("Keys have to be strings or numbers")
            key = self.db.key_for(collection, raw)
            row = table.get(key)
            if row is None or (check is not None and not check(row)):
                raise errors.forbidden()
            keys.append(key)
        return keys

    def _plan(self, collection: Collection, acc: Accountability | None, changes: list[_Change],
              events: list[ItemEvent], emit: bool, track: bool) -> _Plan:
        # §8.8: activity only with an accountability, tracking on, and the collection's setting not null.
        tracked = track and acc is not None and collection.accountability is not None
        revisions = tracked and collection.accountability == "all"
        if tracked:
            for change in changes:
                change.activity_id = self.db.table(ACTIVITY).reserve()
                self.activity_reserved = max(self.activity_reserved, change.activity_id)
                if revisions and change.action != "delete":  # deletes get activity but no revision
                    change.revision_id = self.db.table(REVISIONS).reserve()
        return _Plan(collection, acc, changes, events, now_iso(), revisions, emit)

    # Committing ---------------------------------------------------------------------------------------------

    async def _run(self, plan: _Plan) -> None:
        delays = self.commit_delays.get(plan.collection.name)
        if delays:
            delay = delays.popleft()
            self.pending_commits += 1
            try:
                await asyncio.sleep(delay / 1000)
            finally:
                self.pending_commits -= 1
        self._commit(plan)

    def _commit(self, plan: _Plan) -> None:
        collection = plan.collection
        table = self.db.table(collection.name)
        acc = plan.accountability
        for change in plan.changes:
            snapshot: dict[str, Any] | None = None
            if change.action == "create":
                row = {name: None for name in collection.columns()}
                row.update(change.payload)
                row[collection.pk] = change.key
                table.insert(change.key, row)
                snapshot = change.payload  # Directus stores the written payload as the create revision
            elif change.action == "update":
                row = table.get(change.key)
                if row is not None:
                    row.update(copy.deepcopy(change.payload))
                    snapshot = copy.deepcopy(row)  # a re-read of the item after the change
            else:
                table.delete(change.key)
            if change.activity_id is None:
                continue
            self.db.insert_activity({
                "id": change.activity_id,
                "action": change.action,
                "user": acc.user if acc else None,
                "timestamp": plan.timestamp,
                "ip": acc.ip if acc else None,
                "user_agent": acc.user_agent if acc else None,
                "origin": acc.origin if acc else None,
                "collection": collection.name,
                "item": js_string(change.key),  # always text (§8.8)
            })
            if change.revision_id is not None:
                self.db.insert_revision({
                    "id": change.revision_id,
                    "activity": change.activity_id,
                    "collection": collection.name,
                    "item": js_string(change.key),
                    "data": copy.deepcopy(snapshot),
                    "delta": copy.deepcopy(change.payload),
                    "parent": None,
                    "version": None,
                })
        if plan.emit:
            for event in plan.events:
                self.publish(event)

    def publish(self, event: ItemEvent) -> None:
        """Hands an event to the socket layer (an action hook firing after a commit)."""
        for listener in self.listeners:
            listener(event)
