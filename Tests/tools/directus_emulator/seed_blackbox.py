"""`--seed blackbox`: the users and collections of Directus's own black-box WebSocket tests.

Directus's tests (`tests/blackbox/websocket/` in directus/directus) log in as the users of
`tests/blackbox/common/variables.ts` and write to collections their seed files create (`general.seed.ts`,
`rest.seed.ts`): one per primary-key type, each with a `name` field. The ported tests
(`Tests/tools/test_emulator_directus_blackbox.py`) use exactly these names, emails, passwords and tokens.
"""
from __future__ import annotations

from .database import ROLES, USERS, Database
from .schema import INTEGER, STRING, UUID, Collection, Field, fields

# variables.ts ROLE / USER (ids are ours: Directus's seed lets the database pick them).
ROLES_SEED = [
    ("5eed0b1a-0000-4000-8000-0000000000a1", "Admin Role", True, True),
    ("5eed0b1a-0000-4000-8000-0000000000a2", "App Access Role", False, True),
    ("5eed0b1a-0000-4000-8000-0000000000a3", "API Only Role", False, False),
]
USERS_SEED = [
    # (id, email, password, static token, role index or None)
    ("5eed0b1a-0000-4000-8000-000000000001", "admin@default.com", "AdminPassword", "AdminToken", 0),
    ("5eed0b1a-0000-4000-8000-000000000002", "app-access@default.com", "AppAccessPassword", "AppAccessToken", 1),
    ("5eed0b1a-0000-4000-8000-000000000003", "api-only@default.com", "APIOnlyPassword", "APIOnlyToken", 2),
    ("5eed0b1a-0000-4000-8000-000000000004", "no-role@default.com", "NoRolePassword", "NoRoleToken", None),
]
# general.seed.ts and rest.seed.ts: `${collectionFirst}_${pkType}` for every PRIMARY_KEY_TYPES entry.
COLLECTION_PREFIXES = ("test_ws_general_first", "test_ws_rest_first")
PRIMARY_KEY_TYPES = ("integer", "uuid", "string")


def _collection(name: str, pk_type: str) -> Collection:
    if pk_type == "integer":
        key = Field("id", INTEGER, primary_key=True, auto_increment=True, nullable=False)
    else:
        key = Field("id", UUID if pk_type == "uuid" else STRING, primary_key=True, nullable=False)
    return Collection(name, fields(key, Field("name", STRING)), note="Directus black-box test collection")


def load(db: Database) -> None:
    """Adds the black-box roles, users and (empty) collections to a loaded default seed."""
    role_ids = []
    for role_id, name, admin, app in ROLES_SEED:
        db.table(ROLES).insert(role_id, {"id": role_id, "name": name, "icon": "supervised_user_circle",
                                         "description": None, "admin_access": admin, "app_access": app})
        db.policy(role_id).admin = admin
        role_ids.append(role_id)
    for user_id, email, password, token, role in USERS_SEED:
        db.table(USERS).insert(user_id, {
            "id": user_id, "first_name": email.split("@")[0], "last_name": "Tests", "email": email,
            "status": "active", "role": None if role is None else role_ids[role], "provider": "default",
            "tfa_secret": None, "token": token, "last_access": None, "_password": password,
        })
    for prefix in COLLECTION_PREFIXES:
        for pk_type in PRIMARY_KEY_TYPES:
            db.add_collection(_collection(f"{prefix}_{pk_type}", pk_type))
