"""Seed data: users, roles, permissions, collections and a few rows (`--seed default`), more for `--seed demo`."""
from __future__ import annotations

import random
from typing import Any

from . import seed_blackbox
from .database import ROLES, USERS, Database
from .permissions import CRUD
from .schema import INTEGER, STRING, TEXT, TIMESTAMP, Collection, Field, fields

ADMIN_ROLE = "1b1ffc5e-0000-4000-8000-00000000a001"
READER_ROLE = "1b1ffc5e-0000-4000-8000-00000000a002"
ADMIN_ID = "0c0ffee0-0000-4000-8000-000000000001"
READER_ID = "0c0ffee0-0000-4000-8000-000000000002"
OTP_ID = "0c0ffee0-0000-4000-8000-000000000003"
ADMIN_TOKEN = "admin-static-token"
READER_TOKEN = "reader-static-token"
OTP_SECRET = "JBSWY3DPEHPK3PXP"  # base32; codes are the usual RFC 6238 TOTP (30 s, 6 digits, SHA-1)

USERS_SEED = [
    # (id, email, password, role, static token, tfa secret, first name)
    (ADMIN_ID, "admin@example.com", "admin-password", ADMIN_ROLE, ADMIN_TOKEN, None, "Ada"),
    (READER_ID, "reader@example.com", "reader-password", READER_ROLE, READER_TOKEN, None, "Rita"),
    (OTP_ID, "otp@example.com", "otp-password", READER_ROLE, None, OTP_SECRET, "Otto"),
]
# What the reader role (reader@ and otp@) may do. `secrets` is deliberately absent.
READER_COLLECTIONS = ("articles", "comments", "tags", "notes_untracked", "chapters")


def user_collections() -> list[Collection]:
    return [
        Collection("articles", fields(
            Field("id", INTEGER, primary_key=True, auto_increment=True, nullable=False),
            Field("title", STRING),
            Field("status", STRING),
            Field("body", TEXT),
            Field("author", STRING),
            Field("date_updated", TIMESTAMP),
        ), accountability="all", note="integer key, activity and revisions tracked"),
        Collection("comments", fields(
            Field("id", INTEGER, primary_key=True, auto_increment=True, nullable=False),
            Field("article", INTEGER, m2o="articles"),
            Field("text", TEXT),
        ), accountability="all", note="integer key, many-to-one to articles"),
        Collection("tags", fields(
            Field("slug", STRING, primary_key=True, nullable=False),
            Field("label", STRING),
        ), accountability="activity", note="string key `slug`; activity without revisions"),
        Collection("notes_untracked", fields(
            Field("id", INTEGER, primary_key=True, auto_increment=True, nullable=False),
            Field("text", TEXT),
        ), accountability=None, note="activity tracking off (accountability null)"),
        Collection("chapters", fields(
            Field("id", INTEGER, primary_key=True, auto_increment=True, nullable=False),
            Field("title", STRING),
            Field("sort", INTEGER),
        ), accountability="all", sort_field="sort", note="manually sorted (sort field `sort`)"),
        Collection("secrets", fields(
            Field("id", INTEGER, primary_key=True, auto_increment=True, nullable=False),
            Field("value", STRING),
        ), accountability="all", note="admin only"),
    ]


ARTICLES = [
    {"id": 1, "title": "Hello world", "status": "published", "body": "The first article.", "author": "ada"},
    {"id": 2, "title": "Draft notes", "status": "draft", "body": "Not ready yet.", "author": "rita"},
    {"id": 3, "title": "Release 1.0", "status": "published", "body": "We shipped.", "author": "ada"},
]
COMMENTS = [
    {"id": 1, "article": 1, "text": "Nice!"},
    {"id": 2, "article": 1, "text": "Thanks for writing this."},
    {"id": 3, "article": 3, "text": "Congratulations."},
]
TAGS = [
    {"slug": "news", "label": "News"}, {"slug": "howto", "label": "How-to"}, {"slug": "release", "label": "Release"},
]
NOTES = [{"id": 1, "text": "untracked one"}, {"id": 2, "text": "untracked two"}]
CHAPTERS = [{"id": n, "title": f"Chapter {n}", "sort": n} for n in range(1, 6)]
SECRETS = [{"id": 1, "value": "the cake is a lie"}]


def load(db: Database, name: str = "default", activity_access: str = "partial") -> None:
    """Fills an empty database. Seed rows are inserted directly: they have no activity rows (like an import)."""
    db.table(ROLES).insert(ADMIN_ROLE, {"id": ADMIN_ROLE, "name": "Administrator", "icon": "verified",
                                        "description": None, "admin_access": True, "app_access": True})
    db.table(ROLES).insert(READER_ROLE, {"id": READER_ROLE, "name": "Reader", "icon": "menu_book",
                                         "description": "Reads and edits content", "admin_access": False,
                                         "app_access": True})
    for user_id, email, password, role, token, tfa, first in USERS_SEED:
        db.table(USERS).insert(user_id, {
            "id": user_id, "first_name": first, "last_name": "Example", "email": email, "status": "active",
            "role": role, "provider": "default", "tfa_secret": tfa, "token": token, "last_access": None,
            "_password": password,
        })
    reader = db.policy(READER_ROLE)
    for collection in READER_COLLECTIONS:
        reader.grant(collection, CRUD)
    reader.set_activity_access(activity_access)
    db.policy(ADMIN_ROLE).admin = True

    for collection in user_collections():
        db.add_collection(collection)
    rows: dict[str, list[dict[str, Any]]] = {
        "articles": ARTICLES, "comments": COMMENTS, "tags": TAGS, "notes_untracked": NOTES, "chapters": CHAPTERS,
        "secrets": SECRETS,
    }
    if name == "demo":
        rows = _demo_rows(rows)
    elif name == "blackbox":
        seed_blackbox.load(db)
    elif name != "default":
        raise ValueError(f"unknown seed {name!r} (default, demo or blackbox)")
    for collection_name, items in rows.items():
        collection = db.collections[collection_name]
        table = db.table(collection_name)
        for item in items:
            row = {column: None for column in collection.columns()}
            row.update(item)
            table.insert(row[collection.pk], row)


_WORDS = ("directus bridge realtime socket webhook stream change event cursor backfill snapshot heartbeat token "
          "refresh activity revision release notes draft review publish archive").split()


def _demo_rows(base: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    chooser = random.Random(7)  # the same demo data on every start
    articles = list(base["articles"])
    for article_id in range(4, 41):
        title = " ".join(chooser.choice(_WORDS) for _ in range(3)).capitalize()
        status = chooser.choice(["draft", "published", "archived"])
        articles.append({"id": article_id, "title": title, "status": status,
                         "body": " ".join(chooser.choice(_WORDS) for _ in range(20)) + ".",
                         "author": chooser.choice(["ada", "rita", "otto"])})
    comments = list(base["comments"])
    for comment_id in range(4, 121):
        comments.append({"id": comment_id, "article": chooser.randint(1, 40),
                         "text": " ".join(chooser.choice(_WORDS) for _ in range(8)).capitalize() + "."})
    tags = list(base["tags"]) + [{"slug": w, "label": w.capitalize()} for w in _WORDS[:10]]
    return {**base, "articles": articles, "comments": comments, "tags": tags}
