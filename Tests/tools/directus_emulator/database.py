"""The in-memory database: collections, their tables, the activity and revision logs, and role policies."""
from __future__ import annotations

from typing import Any, Iterable

from .filters import coerce
from .permissions import Policy
from .schema import Collection, system_collections
from .table import Table

ACTIVITY = "directus_activity"
REVISIONS = "directus_revisions"
USERS = "directus_users"
ROLES = "directus_roles"


class Database:
    """Everything Directus would keep in SQL. One instance per emulator; `reset` reloads a seed."""

    def __init__(self) -> None:
        self.collections: dict[str, Collection] = {}
        self.tables: dict[str, Table] = {}
        # activity id → revision ids, so `fields=revisions.data` and the `revisions` alias need no scan.
        self.revisions_by_activity: dict[int, list[int]] = {}
        # role id (None = public) → what that role may do.
        self.policies: dict[str | None, Policy] = {None: Policy(app_access=False)}
        for collection in system_collections():
            self.add_collection(collection)

    # Schema -----------------------------------------------------------------------------------------------

    def add_collection(self, collection: Collection) -> None:
        self.collections[collection.name] = collection
        self.tables[collection.name] = Table()

    def collection(self, name: str) -> Collection | None:
        return self.collections.get(name)

    def table(self, name: str) -> Table:
        return self.tables[name]

    def user_collections(self) -> list[str]:
        return [name for name, c in self.collections.items() if not c.system]

    def key_for(self, collection: Collection, raw: Any) -> Any:
        """The stored key for a key as a client sent it (`"7"` from a URL → 7 for an integer key)."""
        return coerce(raw, collection.pk_field.type)

    # Relations (used by filters and nested fields) -----------------------------------------------------------

    def related_row(self, collection: str, key: Any) -> dict[str, Any] | None:
        table = self.tables.get(collection)
        if table is None:
            return None
        row = table.get(key)
        if row is None and isinstance(key, str):
            row = table.get(self.key_for(self.collections[collection], key))
        return row

    def o2m_rows(self, target: str, foreign_key: str, key: Any) -> list[dict[str, Any]]:
        if target == REVISIONS and foreign_key == "activity":
            table = self.tables[REVISIONS]
            return [table.rows[rid] for rid in self.revisions_by_activity.get(key, ()) if rid in table.rows]
        return [row for row in self.tables[target].rows.values() if row.get(foreign_key) == key]

    # Logs -------------------------------------------------------------------------------------------------

    def insert_activity(self, row: dict[str, Any]) -> None:
        self.tables[ACTIVITY].insert(row["id"], row)

    def insert_revision(self, row: dict[str, Any]) -> None:
        self.tables[REVISIONS].insert(row["id"], row)
        self.revisions_by_activity.setdefault(row["activity"], []).append(row["id"])

    # Users ------------------------------------------------------------------------------------------------

    def user_by_email(self, email: str) -> dict[str, Any] | None:
        lowered = email.lower()
        for row in self.tables[USERS].rows.values():
            if (row.get("email") or "").lower() == lowered:
                return row
        return None

    def user_by_token(self, token: str) -> dict[str, Any] | None:
        for row in self.tables[USERS].rows.values():
            if row.get("token") == token:
                return row
        return None

    def role(self, role_id: str | None) -> dict[str, Any] | None:
        return self.tables[ROLES].get(role_id) if role_id else None

    def policy(self, role_id: str | None) -> Policy:
        return self.policies.setdefault(role_id, Policy())

    def counts(self, names: Iterable[str] | None = None) -> dict[str, int]:
        return {name: len(self.tables[name]) for name in (names or self.collections)}
