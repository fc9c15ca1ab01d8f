"""Manual sorting, as Directus's `UtilsService.sort` does it (docs/directus-protocol.md §14.3).

Directus rewrites the sort field with plain queries, not through the ItemsService: no activity row, no revision,
no `items.update` hook. Afterwards it emits `items.sort` (`{collection, item, to}`), which the socket layer
publishes as an `update` of the dragged item only — the other items whose sort value moved get no message.
"""
from __future__ import annotations

from typing import Any

from . import errors
from .database import Database
from .permissions import Accountability, permission


def _unexpected() -> errors.DirectusError:
    # Directus reads a property of the missing row and throws a TypeError: an INTERNAL_SERVER_ERROR.
    return errors.DirectusError("INTERNAL_SERVER_ERROR", 500, "An unexpected error occurred.")


def manual_sort(db: Database, name: str, item: Any, to: Any, acc: Accountability | None) -> None:
    """Moves `item` to the position of `to`, shifting the items between by one (`POST /utils/sort/:collection`)."""
    collection = db.collection(name)
    if collection is None:
        raise errors.forbidden()  # the `collectionExists` middleware
    field = collection.sort_field
    if not field:
        raise errors.invalid_payload(f'Collection "{name}" doesn\'t have a sort field')
    if acc is not None and not acc.admin:
        perm = permission(acc, name, "update")
        if perm is None:
            raise errors.forbidden(f'You don\'t have permission to "update" from collection "{name}" or it does '
                                   "not exist.")
        if "*" not in perm.fields and field not in perm.fields:
            raise errors.forbidden()
    table = db.table(name)
    rows = [table.rows[key] for key in table.keys]  # primary-key order stands in for the database's order
    # Every row gets a sort value: the ones without follow the highest, in turn.
    highest = max((row[field] for row in rows if row.get(field) is not None), default=0)
    for row in rows:
        if row.get(field) is None:
            highest += 1
            row[field] = highest
    # Duplicate values are renumbered 1…n in sort order first, or the move below would misplace items.
    values = [row[field] for row in rows]
    if len(set(values)) != len(values):
        for position, row in enumerate(sorted(rows, key=lambda r: r[field]), start=1):
            row[field] = position
    target = table.get(db.key_for(collection, to))
    source = table.get(db.key_for(collection, item))
    if target is None or source is None:
        raise _unexpected()
    target_value, source_value = target[field], source[field]
    source[field] = target_value
    for row in rows:
        if row is source:
            continue
        if source_value < target_value and source_value < row[field] <= target_value:
            row[field] -= 1
        elif source_value >= target_value and target_value <= row[field] <= source_value:
            row[field] += 1
