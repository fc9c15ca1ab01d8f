"""Collections and fields: what `/fields`, `/collections`, queries and writes need to know of the schema."""
from __future__ import annotations

from dataclasses import dataclass, field as dc_field
from typing import Any

# Field types (Directus type names) the emulator understands. `alias` fields have no column (o2m).
INTEGER, STRING, TEXT, JSON, TIMESTAMP, UUID, BOOLEAN, FLOAT, ALIAS = (
    "integer", "string", "text", "json", "timestamp", "uuid", "boolean", "float", "alias",
)
_DATA_TYPES = {
    INTEGER: "integer", STRING: "character varying", TEXT: "text", JSON: "json",
    TIMESTAMP: "timestamp with time zone", UUID: "uuid", BOOLEAN: "boolean", FLOAT: "real",
}


@dataclass
class Field:
    """One field of a collection. `m2o` names the related collection; `o2m` is (collection, foreign key field)."""

    name: str
    type: str
    primary_key: bool = False
    auto_increment: bool = False
    nullable: bool = True
    m2o: str | None = None
    o2m: tuple[str, str] | None = None

    @property
    def is_alias(self) -> bool:
        return self.type == ALIAS

    def describe(self, collection: str) -> dict[str, Any]:
        """The `/fields/<collection>` entry: `schema.is_primary_key` is how a client finds the key (contract)."""
        schema = None
        if not self.is_alias:
            schema = {
                "name": self.name,
                "table": collection,
                "data_type": _DATA_TYPES[self.type],
                "default_value": None,
                "max_length": 255 if self.type == STRING else None,
                "is_nullable": self.nullable and not self.primary_key,
                "is_unique": self.primary_key,
                "is_primary_key": self.primary_key,
                "has_auto_increment": self.auto_increment,
                "foreign_key_table": self.m2o,
                "foreign_key_column": None,
            }
        special = ["o2m"] if self.o2m else (["uuid"] if self.type == UUID and self.primary_key else None)
        return {
            "collection": collection,
            "field": self.name,
            "type": self.type,
            "schema": schema,
            "meta": {
                "collection": collection,
                "field": self.name,
                "special": special,
                "interface": None,
                "hidden": False,
                "readonly": self.primary_key and self.auto_increment,
                "required": False,
            },
        }


@dataclass
class Collection:
    """A collection: ordered fields, its primary key and its activity tracking setting (docs/directus-protocol.md
    §8.8)."""

    name: str
    fields: dict[str, Field]
    accountability: str | None = "all"  # "all" | "activity" | None
    system: bool = False
    note: str | None = None
    sort_field: str | None = None  # `meta.sort_field`: the field manual sorting (`/utils/sort`) rewrites (§14.3)
    pk: str = dc_field(init=False)

    def __post_init__(self) -> None:
        keys = [f.name for f in self.fields.values() if f.primary_key]
        assert len(keys) == 1, f"{self.name} needs exactly one primary key"
        self.pk = keys[0]

    @property
    def pk_field(self) -> Field:
        return self.fields[self.pk]

    def columns(self) -> list[str]:
        """Non-alias fields, in schema order."""
        return [f.name for f in self.fields.values() if not f.is_alias]

    def describe(self) -> dict[str, Any]:
        """The `/collections/<name>` body (`meta.accountability` tells whether activity is tracked)."""
        return {
            "collection": self.name,
            "meta": {
                "collection": self.name,
                "accountability": self.accountability,
                "hidden": False,
                "singleton": False,
                "note": self.note,
                "sort_field": self.sort_field,
                "system": self.system or None,
            },
            "schema": {"name": self.name},
        }


def fields(*items: Field) -> dict[str, Field]:
    return {f.name: f for f in items}


def system_collections() -> list[Collection]:
    """The system collections a bridge touches (§8.8 field lists)."""
    activity = Collection("directus_activity", fields(
        Field("id", INTEGER, primary_key=True, auto_increment=True, nullable=False),
        Field("action", STRING, nullable=False),
        Field("user", UUID, m2o="directus_users"),
        Field("timestamp", TIMESTAMP, nullable=False),
        Field("ip", STRING),
        Field("user_agent", TEXT),
        Field("origin", STRING),
        Field("collection", STRING, nullable=False),
        Field("item", STRING, nullable=False),
        Field("revisions", ALIAS, o2m=("directus_revisions", "activity")),
    ), accountability=None, system=True)
    revisions = Collection("directus_revisions", fields(
        Field("id", INTEGER, primary_key=True, auto_increment=True, nullable=False),
        Field("activity", INTEGER, m2o="directus_activity", nullable=False),
        Field("collection", STRING, nullable=False),
        Field("item", STRING, nullable=False),
        Field("data", JSON),
        Field("delta", JSON),
        Field("parent", INTEGER, m2o="directus_revisions"),
        Field("version", UUID),
    ), accountability=None, system=True)
    roles = Collection("directus_roles", fields(
        Field("id", UUID, primary_key=True, nullable=False),
        Field("name", STRING),
        Field("icon", STRING),
        Field("description", TEXT),
        Field("admin_access", BOOLEAN),
        Field("app_access", BOOLEAN),
    ), accountability="all", system=True)
    users = Collection("directus_users", fields(
        Field("id", UUID, primary_key=True, nullable=False),
        Field("first_name", STRING),
        Field("last_name", STRING),
        Field("email", STRING),
        Field("status", STRING),
        Field("role", UUID, m2o="directus_roles"),
        Field("provider", STRING),
        Field("tfa_secret", STRING),
        Field("token", STRING),
        Field("last_access", TIMESTAMP),
    ), accountability="all", system=True)
    return [activity, revisions, roles, users]


# Fields never returned by a read even to admins (they are write-only or concealed in Directus).
CONCEALED = {("directus_users", "password"), ("directus_users", "token"), ("directus_users", "tfa_secret")}
