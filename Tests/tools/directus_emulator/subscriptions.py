"""subscribe / unsubscribe (docs/directus-protocol.md §5.1, §5.2, §5.4) and event dispatch to subscribers (§5.3)."""
from __future__ import annotations

from typing import Any, Callable, Iterable

from . import errors
from .database import Database
from .jsonutil import js_string
from .query import sanitize
from .reader import Reader
from .stats import Stats
from .writes import ItemEvent
from .ws_client import OPEN, Client, Subscription

EVENTS = ("create", "update", "delete")


def _is_key(value: Any) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def validation_error(reason: str) -> errors.DirectusError:
    # zod-validation-error text (INFERRED wording, §3.2): starts with "Validation error:".
    return errors.DirectusError("INVALID_PAYLOAD", 400, f"Validation error: {reason}")


class Subscriptions:
    """Subscription handling for every socket client; `dispatch` is a Writer listener."""

    def __init__(self, db: Database, reader: Reader, stats: Stats, clients: Callable[[], Iterable[Client]]):
        self.db = db
        self.reader = reader
        self.stats = stats
        self.clients = clients

    def subscribe(self, client: Client, message: dict[str, Any]) -> None:
        uid = message.get("uid")
        collection = message.get("collection")
        event = message.get("event")
        item = message.get("item")
        raw_query = message.get("query")
        problem = None
        if not isinstance(collection, str):
            problem = 'Required at "collection"' if collection is None else 'Expected string at "collection"'
        elif event is not None and event not in EVENTS:
            problem = "Invalid enum value. Expected 'create' | 'update' | 'delete' at \"event\""
        elif item is not None and not _is_key(item):
            problem = 'Expected string or number at "item"'
        elif raw_query is not None and not isinstance(raw_query, dict):
            problem = 'Expected object at "query"'
        if problem:
            client.send(validation_error(problem).ws_message("subscribe"))  # zod errors carry no uid (§5.1)
            return
        acc = client.accountability
        # §5.2 step 1: only non-admins are checked against the (unfiltered) schema; the error carries the uid.
        if not (acc is not None and acc.admin) and self.db.collection(collection) is None:
            client.send(errors.ws_error("subscribe", "INVALID_COLLECTION", errors.INVALID_COLLECTION_TEXT, uid))
            return
        if collection == "directus_extensions":
            client.send(errors.invalid_payload("Subscribing to directus_extensions is currently not supported")
                        .ws_message("subscribe"))
            return
        try:
            query = sanitize(raw_query)  # §5.2 step 2: INVALID_QUERY, no uid
        except errors.DirectusError as error:
            client.send(error.ws_message("subscribe"))
            return
        key = js_string(uid) if uid is not None else None
        if key is not None:
            # §5.2 step 3: replace by uid — removed first, not restored if the initial read fails.
            client.subscriptions = [s for s in client.subscriptions if s.uid != key]
        subscription = Subscription(key, collection, event, js_string(item) if item is not None else None,
                                    query, raw_query)
        init: dict[str, Any] = {"type": "subscription", "event": "init"}
        if event is None:
            # §5.2 step 4: initial read with the subscriber's permissions (default limit 100, §13.7).
            try:
                if subscription.item is not None:
                    init["data"] = self.reader.read_one(collection, subscription.item, query, acc)
                else:
                    result = self.reader.read(collection, query, acc)
                    init["data"] = result.rows
                    if result.meta is not None:
                        init["meta"] = result.meta
            except errors.DirectusError as error:
                client.send(error.ws_message("subscribe"))  # FORBIDDEN etc.: no uid
                return
        client.subscriptions.append(subscription)
        if key is not None:
            init["uid"] = key  # stringified (§5.3, §13.5)
        client.send(init)

    def unsubscribe(self, client: Client, message: dict[str, Any]) -> None:
        uid = message.get("uid")
        if uid is None:
            client.subscriptions = []
        else:
            key = js_string(uid)
            client.subscriptions = [s for s in client.subscriptions if s.uid != key]
        ack: dict[str, Any] = {"type": "subscription", "event": "unsubscribe"}
        if uid is not None:
            ack["uid"] = uid  # the original type (§5.4)
        client.send(ack)

    def dispatch(self, event: ItemEvent) -> None:
        for client in list(self.clients()):
            if client.state != OPEN:
                continue
            for subscription in list(client.subscriptions):
                if subscription.collection != event.collection:
                    continue
                if subscription.event is not None and subscription.event != event.action:
                    continue
                try:
                    message = self._payload(client, subscription, event)
                except errors.DirectusError as error:
                    client.send(error.ws_message("subscribe"))  # read failure: an error without uid (§5.3)
                    continue
                if message is None:
                    continue
                message = {"type": "subscription", **message}
                if subscription.uid is not None:
                    message["uid"] = subscription.uid
                client.send(message)
                self.stats.events_sent += 1

    def _payload(self, client: Client, subscription: Subscription, event: ItemEvent) -> dict[str, Any] | None:
        acc = client.accountability  # None in the window after TOKEN_EXPIRED: reads are unrestricted (§2.6)
        if subscription.item is not None:
            # §5.3: strict match against String(item) — numeric keys from batch writes never match.
            if subscription.item not in [k for k in event.keys if isinstance(k, str)]:
                return None
            if event.action == "delete":
                return {"event": "delete", "data": subscription.item}
            data = self.reader.read_one(event.collection, subscription.item, subscription.query, acc)
            return {"event": event.action, "data": data}
        if event.action == "delete":
            return {"event": "delete", "data": list(event.keys)}  # raw keys, no read, no filter (§5.3)
        result = self.reader.read(event.collection, subscription.query, acc, keys=list(event.keys))
        if not result.rows:
            return None  # filtered out or not readable: nothing is sent
        message: dict[str, Any] = {"event": event.action, "data": result.rows}
        if subscription.query.meta:
            message["meta"] = self.reader.read(event.collection, subscription.query, acc).meta
        return message

    def describe(self) -> list[dict[str, Any]]:
        return [{"client": c.id, **s.describe()} for c in self.clients() for s in c.subscriptions]
