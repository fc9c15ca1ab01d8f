"""Who may do what: policies per role, the accountability of a caller, and `/permissions/me` (docs/directus-protocol.md
§8.9)."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Iterable

ACTIONS = ("create", "read", "update", "delete", "share")
CRUD = ("create", "read", "update", "delete")

# §8.8/§8.9: Directus's default app access lets a user read only their own activity and revisions.
OWN_ACTIVITY = {"user": {"_eq": "$CURRENT_USER"}}
OWN_REVISIONS = {"activity": {"user": {"_eq": "$CURRENT_USER"}}}
ACTIVITY_COLLECTIONS = ("directus_activity", "directus_revisions")


@dataclass
class Permission:
    """One permission row: `filter` None means every row (access "full"), otherwise "partial"."""

    filter: dict[str, Any] | None = None
    fields: list[str] = field(default_factory=lambda: ["*"])


@dataclass
class Policy:
    """What one role (or the public) may do: collection → action → Permission."""

    admin: bool = False
    app_access: bool = True
    permissions: dict[str, dict[str, Permission]] = field(default_factory=dict)

    def grant(self, collection: str, actions: Iterable[str], row_filter: dict[str, Any] | None = None) -> None:
        entry = self.permissions.setdefault(collection, {})
        for action in actions:
            entry[action] = Permission(copy.deepcopy(row_filter))

    def revoke(self, collection: str, actions: Iterable[str] | None = None) -> None:
        entry = self.permissions.get(collection, {})
        for action in list(actions or ACTIONS):
            entry.pop(action, None)
        if not entry:
            self.permissions.pop(collection, None)

    def set_activity_access(self, access: str) -> None:
        """`none`, `partial` (own rows only, the Directus default) or `full` on activity and revisions."""
        for collection, own in zip(ACTIVITY_COLLECTIONS, (OWN_ACTIVITY, OWN_REVISIONS)):
            self.revoke(collection, ["read"])
            if access == "full":
                self.grant(collection, ["read"])
            elif access == "partial":
                self.grant(collection, ["read"], own)
            elif access != "none":
                raise ValueError(f"activity access must be none, partial or full, not {access!r}")

    def activity_access(self) -> str:
        permission = self.permissions.get("directus_activity", {}).get("read")
        if permission is None:
            return "none"
        return "partial" if permission.filter else "full"


@dataclass
class Accountability:
    """The caller of a request or the owner of a socket. `user=None` and `public=True` is the public role."""

    user: str | None
    role: str | None
    admin: bool
    policy: Policy
    app: bool = True
    public: bool = False
    ip: str | None = None
    user_agent: str | None = None
    origin: str | None = None

    def with_request(self, ip: str | None, user_agent: str | None, origin: str | None) -> "Accountability":
        copy_ = copy.copy(self)
        copy_.ip, copy_.user_agent, copy_.origin = ip, (user_agent or "")[:1024] or None, origin
        return copy_


def permission(accountability: Accountability | None, collection: str, action: str) -> Permission | None:
    """The permission that applies, or None when the action is not allowed.

    `accountability=None` is Directus's internal caller: no checks at all (§2.6 — a socket in its
    post-expiry window reads without permissions).
    """
    if accountability is None or accountability.admin:
        return Permission()
    return accountability.policy.permissions.get(collection, {}).get(action)


def permissions_me(accountability: Accountability, collections: list[str]) -> dict[str, Any]:
    """The `/permissions/me` body data (§8.9): admins get "full" everywhere; others what their policy says."""
    def entry(perm: Permission | None) -> dict[str, Any]:
        if perm is None:
            return {"access": "none"}
        return {"access": "partial" if perm.filter else "full", "fields": list(perm.fields), "presets": {}}

    result: dict[str, Any] = {}
    if accountability.admin:
        for name in collections:
            result[name] = {action: entry(Permission()) for action in ACTIONS}
        return result
    for name, actions in accountability.policy.permissions.items():
        if actions:
            result[name] = {action: entry(actions.get(action)) for action in ACTIONS}
    return result
