"""Reads with permissions (docs/directus-protocol.md §8.7, §8.8): filter, search, sort, limit/offset/page, meta, nested
fields, aggregates."""
from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import Any, Callable

from . import errors
from .database import Database
from .filters import FilterCompiler, FilterContext, key_range
from .permissions import Accountability, permission
from .query import Query, effective_limit, effective_offset
from .schema import CONCEALED, STRING, TEXT, Collection

Row = dict[str, Any]
Projector = Callable[[Row], Row]


@dataclass
class ReadResult:
    rows: list[Row]
    meta: dict[str, int] | None = None


def _field_tree(paths: list[str]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for path in paths:
        node = tree
        for part in path.split("."):
            node = node.setdefault(part, {})
    return tree


def _sort_key(name: str) -> Callable[[Row], Any]:
    return lambda row: (row.get(name) is None, row.get(name))


class Reader:
    """Runs sanitized queries against the database as a given caller."""

    def __init__(self, db: Database, default_limit: Callable[[], int] = lambda: 100,
                 limit_cap: Callable[[], int] = lambda: 0, limit_max: Callable[[], int] = lambda: -1,
                 limit_named: Callable[[], str] = lambda: ""):
        self.db = db
        self.default_limit = default_limit
        self.limit_cap = limit_cap
        self.limit_max = limit_max
        self.limit_named = limit_named

    # Public entry points --------------------------------------------------------------------------------------

    def read(self, name: str, query: Query, accountability: Accountability | None,
             keys: list[Any] | None = None, limit: int | None = None, use_limit: bool = True) -> ReadResult:
        """readByQuery; with `keys` it is readMany (limit = the query's or the number of keys, as Directus)."""
        collection = self._readable(name, accountability)
        perm = permission(accountability, name, "read")
        assert perm is not None
        context = FilterContext(accountability.user if accountability else None,
                                accountability.role if accountability else None)
        compiler = FilterCompiler(self.db, context)
        projector = self._projector(collection, _field_tree(query.fields), accountability, compiler)
        conditions = [c for c in (perm.filter, query.filter) if c]
        if keys is not None:
            conditions.append({collection.pk: {"_in": list(keys)}})
        combined = {"_and": conditions} if conditions else None
        predicate = compiler.compile(collection, combined)
        if query.search:
            predicate = self._with_search(collection, query.search, predicate)
        sort = self._sort(collection, query.sort)

        maximum = self.limit_max()
        if maximum >= 0 and query.limit is not None and query.limit > maximum:
            # validate-query.ts: Joi's `limit` schema is `.max(QUERY_LIMIT_MAX)` when it is set.
            # `limit_refusal_names`: a server that names another number (or text) than the one it holds to.
            raise errors.invalid_query(f'"limit" must be less than or equal to {self.limit_named() or maximum}')
        if limit is None and use_limit:
            if keys is not None and query.limit is None:
                limit = len(keys)
            else:
                limit = effective_limit(query, self.default_limit())
                if maximum >= 0 and (limit is None or limit > maximum):
                    limit = maximum  # sanitize-query.ts: `limit=-1` and the default are held to QUERY_LIMIT_MAX
        cap = self.limit_cap()
        if cap > 0 and (limit is None or limit > cap):
            limit = cap  # the `limit_cap` setting: a gateway or extension cutting every answer short, silently
        offset = effective_offset(query, limit)
        need_all = bool(query.aggregate) or "filter_count" in query.meta
        matched, window = self._select(collection, combined, predicate, sort, limit, offset, need_all)

        if query.aggregate:
            rows = self._aggregate(collection, matched, query)
            return ReadResult(rows[offset:offset + limit] if limit is not None else rows[offset:])
        meta = None
        if query.meta:
            meta = {}
            if "total_count" in query.meta:
                base = compiler.compile(collection, perm.filter) if perm.filter else None
                table = self.db.table(name)
                meta["total_count"] = len(table) if base is None else sum(1 for r in table.rows.values() if base(r))
            if "filter_count" in query.meta:
                meta["filter_count"] = len(matched)
        return ReadResult([projector(row) for row in window], meta)

    def read_one(self, name: str, key: Any, query: Query, accountability: Accountability | None) -> Row:
        """readOne: the item or FORBIDDEN (Directus answers a missing item with 403, not 404)."""
        result = self.read(name, query, accountability, keys=[key], limit=1)
        if not result.rows:
            raise errors.forbidden()
        return result.rows[0]

    # Planning ---------------------------------------------------------------------------------------------

    def _readable(self, name: str, accountability: Accountability | None) -> Collection:
        collection = self.db.collection(name)
        if collection is None or permission(accountability, name, "read") is None:
            raise errors.forbidden_collection(name)
        return collection

    def _sort(self, collection: Collection, sort: list[str] | None) -> list[tuple[str, bool]]:
        if not sort:
            return [(collection.pk, False)]  # Directus sorts by the primary key when no sort is given
        result = []
        for entry in sort:
            descending = entry.startswith("-")
            name = entry[1:] if descending else entry
            if name not in collection.fields:
                raise errors.forbidden_field(name, collection.name)
            result.append((name, descending))
        return result

    def _select(self, collection: Collection, combined: Any, predicate: Callable[[Row], bool],
                sort: list[tuple[str, bool]], limit: int | None, offset: int, need_all: bool
                ) -> tuple[list[Row], list[Row]]:
        table = self.db.table(collection.name)
        bounds = key_range(collection, combined)
        by_key = len(sort) == 1 and sort[0][0] == collection.pk
        end = None if limit is None else offset + limit
        if bounds.keys is not None:
            seen: set[Any] = set()
            matched = []
            for key in bounds.keys:
                if key in seen:
                    continue
                seen.add(key)
                row = table.get(key)
                if row is not None and predicate(row):
                    matched.append(row)
            matched = self._sorted(matched, sort)
            return matched, matched[offset:end]
        if by_key:
            rows = table.scan(bounds.low, bounds.low_inclusive, bounds.high, bounds.high_inclusive, sort[0][1])
            if need_all:
                matched = [row for row in rows if predicate(row)]
                return matched, matched[offset:end]
            window = list(islice(filter(predicate, rows), offset, end))
            return window, window
        matched = self._sorted([row for row in table.rows.values() if predicate(row)], sort)
        return matched, matched[offset:end]

    @staticmethod
    def _sorted(rows: list[Row], sort: list[tuple[str, bool]]) -> list[Row]:
        # Stable sorts from the last key to the first; NULLs last ascending, first descending (PostgreSQL).
        for name, descending in reversed(sort):
            try:
                rows.sort(key=_sort_key(name), reverse=descending)
            except TypeError:
                rows.sort(key=lambda row: (row.get(name) is None, str(row.get(name))), reverse=descending)
        return rows

    @staticmethod
    def _with_search(collection: Collection, text: str, predicate: Callable[[Row], bool]) -> Callable[[Row], bool]:
        needle = text.lower()
        names = [f.name for f in collection.fields.values() if f.type in (STRING, TEXT)]
        pk = collection.pk
        def matches(row: Row) -> bool:
            if str(row.get(pk)) == text:
                return True
            return any(needle in str(row.get(n) or "").lower() for n in names)
        return lambda row: predicate(row) and matches(row)

    # Fields -----------------------------------------------------------------------------------------------

    def _projector(self, collection: Collection, tree: dict[str, Any], accountability: Accountability | None,
                   compiler: FilterCompiler) -> Projector:
        names = [f.name for f in collection.fields.values()] if "*" in tree else []
        names += [n for n in tree if n != "*" and n not in names]
        getters: list[tuple[str, Callable[[Row], Any]]] = []
        for name in names:
            spec = collection.fields.get(name)
            if spec is None:
                raise errors.forbidden_field(name, collection.name)
            sub = tree.get(name)
            if (collection.name, name) in CONCEALED:
                getters.append((name, lambda row, n=name: "**********" if row.get(n) is not None else None))
            elif spec.m2o and sub:
                getters.append((name, self._m2o_getter(collection, name, spec.m2o, sub, accountability, compiler)))
            elif spec.o2m:
                try:
                    getter = self._o2m_getter(collection, name, spec.o2m, sub, accountability, compiler)
                except errors.DirectusError:
                    if name in tree:
                        raise
                    continue  # `*` leaves out relations the caller may not read
                getters.append((name, getter))
            else:
                getters.append((name, lambda row, n=name: row.get(n)))
        return lambda row: {name: get(row) for name, get in getters}

    def _nested(self, target: str, accountability: Accountability | None, compiler: FilterCompiler,
                field: str, owner: str) -> tuple[Collection, Callable[[Row], bool]]:
        collection = self.db.collection(target)
        perm = permission(accountability, target, "read")
        if collection is None or perm is None:
            raise errors.forbidden_field(field, owner)
        visible = compiler.compile(collection, perm.filter) if perm.filter else (lambda row: True)
        return collection, visible

    def _m2o_getter(self, owner: Collection, name: str, target: str, sub: dict[str, Any],
                    accountability: Accountability | None, compiler: FilterCompiler) -> Callable[[Row], Any]:
        collection, visible = self._nested(target, accountability, compiler, name, owner.name)
        inner = self._projector(collection, sub, accountability, compiler)
        related_row = self.db.related_row
        def get(row: Row) -> Any:
            key = row.get(name)
            related = related_row(target, key) if key is not None else None
            return inner(related) if related is not None and visible(related) else None
        return get

    def _o2m_getter(self, owner: Collection, name: str, relation: tuple[str, str], sub: dict[str, Any] | None,
                    accountability: Accountability | None, compiler: FilterCompiler) -> Callable[[Row], Any]:
        target, foreign_key = relation
        collection, visible = self._nested(target, accountability, compiler, name, owner.name)
        rows_for = self.db.o2m_rows
        pk, target_pk = owner.pk, collection.pk
        if not sub:
            return lambda row: [r[target_pk] for r in rows_for(target, foreign_key, row.get(pk)) if visible(r)]
        inner = self._projector(collection, sub, accountability, compiler)
        return lambda row: [inner(r) for r in rows_for(target, foreign_key, row.get(pk)) if visible(r)]

    # Aggregates -------------------------------------------------------------------------------------------

    def _aggregate(self, collection: Collection, rows: list[Row], query: Query) -> list[Row]:
        groups: dict[tuple[Any, ...], list[Row]] = {}
        group_by = query.group_by or []
        for name in group_by:
            if name not in collection.fields:
                raise errors.forbidden_field(name, collection.name)
        for row in rows:
            groups.setdefault(tuple(row.get(n) for n in group_by), []).append(row)
        if not group_by and not groups:
            groups[()] = []
        result = []
        for values, members in groups.items():
            entry: Row = dict(zip(group_by, values))
            for operation, names in (query.aggregate or {}).items():
                entry[operation] = self._aggregate_one(collection, operation, names, members)
            result.append(entry)
        return result

    @staticmethod
    def _aggregate_one(collection: Collection, operation: str, names: list[str], rows: list[Row]) -> Any:
        if operation == "count" and names == ["*"]:
            return len(rows)
        out: Row = {}
        for name in names:
            if name not in collection.fields:
                raise errors.forbidden_field(name, collection.name)
            values = [row.get(name) for row in rows if row.get(name) is not None]
            if operation == "count":
                out[name] = len(values)
            elif operation == "countDistinct":
                out[name] = len(set(map(repr, values)))
            elif operation in ("sum", "avg"):
                total = sum(v for v in values if isinstance(v, (int, float)))
                out[name] = total if operation == "sum" else (total / len(values) if values else None)
            elif operation in ("min", "max"):
                out[name] = (min if operation == "min" else max)(values) if values else None
            else:
                raise errors.invalid_query(f'"{operation}" is not a supported aggregate function')
        return out
