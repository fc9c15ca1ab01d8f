"""Directus filter rules (docs/directus-protocol.md §8.7) compiled into Python predicates, plus the primary-key range
they imply."""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Protocol

from . import errors
from .schema import BOOLEAN, FLOAT, INTEGER, JSON, TIMESTAMP, Collection

Row = dict[str, Any]
Predicate = Callable[[Row], bool]

_INT = re.compile(r"^-?\d+$")
_LIST_OPERATORS = {"_in", "_nin", "_between", "_nbetween"}
_TRUE = {True, "true", "1", 1}


class Schema(Protocol):
    """What the compiler needs: collections by name and rows of related collections (m2o filters)."""

    def collection(self, name: str) -> Collection | None: ...

    def related_row(self, collection: str, key: Any) -> Row | None: ...


@dataclass
class FilterContext:
    """Values for dynamic variables (`$CURRENT_USER` …), resolved once when the query is sanitized (§5.1)."""

    user: str | None = None
    role: str | None = None


@dataclass
class KeyRange:
    """Primary-key bounds found in the top-level `_and` of a filter; lets reads bisect instead of scan."""

    low: Any = None
    low_inclusive: bool = True
    high: Any = None
    high_inclusive: bool = True
    keys: list[Any] | None = None


def now_iso() -> str:
    """Directus's timestamp text: UTC with milliseconds and `Z`."""
    return format_timestamp(datetime.now(timezone.utc))


def format_timestamp(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def coerce(value: Any, field_type: str) -> Any:
    """Casts a filter value (often text from the query string) the way the database column would."""
    if value is None:
        return None
    if field_type == INTEGER:
        if isinstance(value, str) and _INT.match(value.strip()):
            return int(value)
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return value
    if field_type == FLOAT:
        try:
            return float(value)
        except (TypeError, ValueError):
            return value
    if field_type == BOOLEAN:
        if isinstance(value, str):
            return value.lower() in ("true", "1")
        return bool(value)
    if field_type == TIMESTAMP:
        if isinstance(value, str):
            try:
                moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                return value
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=timezone.utc)
            return format_timestamp(moment)
        return value
    if field_type == JSON:
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


def _lt(a: Any, b: Any) -> bool:
    try:
        return a < b
    except TypeError:
        return str(a) < str(b)


def _operator(name: str, field: str, target: Any, field_type: str) -> Predicate:
    """One comparison on one field; NULL column values compare false like SQL (except `_null`/`_eq null`)."""
    if name in _LIST_OPERATORS:
        if isinstance(target, str):
            target = target.split(",")  # §8.7: `filter[id][_in]=1,2,3`
        if not isinstance(target, list):
            target = [target]
        target = [coerce(v, field_type) for v in target]
    elif name not in ("_null", "_nnull", "_empty", "_nempty"):
        target = coerce(target, field_type)

    if name == "_eq":
        if target is None:
            return lambda row: row.get(field) is None
        return lambda row: row.get(field) == target
    if name == "_neq":
        if target is None:
            return lambda row: row.get(field) is not None
        return lambda row: (v := row.get(field)) is not None and v != target
    if name in ("_gt", "_gte", "_lt", "_lte"):
        if target is None:
            return lambda row: False
        if name == "_gt":
            return lambda row: (v := row.get(field)) is not None and _lt(target, v)
        if name == "_gte":
            return lambda row: (v := row.get(field)) is not None and not _lt(v, target)
        if name == "_lt":
            return lambda row: (v := row.get(field)) is not None and _lt(v, target)
        return lambda row: (v := row.get(field)) is not None and not _lt(target, v)
    if name == "_in":
        wanted = set(_hashable(v) for v in target)
        return lambda row: (v := row.get(field)) is not None and _hashable(v) in wanted
    if name == "_nin":
        unwanted = set(_hashable(v) for v in target)
        return lambda row: (v := row.get(field)) is not None and _hashable(v) not in unwanted
    if name in ("_between", "_nbetween"):
        if len(target) != 2:
            raise errors.invalid_query(f'"{name}" needs two values')
        low, high = target
        inside = lambda v: not _lt(v, low) and not _lt(high, v)  # noqa: E731
        if name == "_between":
            return lambda row: (v := row.get(field)) is not None and inside(v)
        return lambda row: (v := row.get(field)) is not None and not inside(v)
    if name in ("_null", "_nnull"):
        want_null = (target in _TRUE) == (name == "_null")
        return (lambda row: row.get(field) is None) if want_null else (lambda row: row.get(field) is not None)
    if name in ("_empty", "_nempty"):
        empty = lambda v: v is None or v == "" or v == [] or v == {}  # noqa: E731
        want_empty = (target in _TRUE) == (name == "_empty")
        return (lambda row: empty(row.get(field))) if want_empty else (lambda row: not empty(row.get(field)))
    text = "" if target is None else str(target)
    if name in ("_contains", "_ncontains"):
        hit = lambda row: (v := row.get(field)) is not None and text in _text(v)  # noqa: E731
    elif name in ("_icontains", "_nicontains"):
        lowered = text.lower()
        hit = lambda row: (v := row.get(field)) is not None and lowered in _text(v).lower()  # noqa: E731
    elif name in ("_starts_with", "_nstarts_with"):
        hit = lambda row: (v := row.get(field)) is not None and _text(v).startswith(text)  # noqa: E731
    elif name in ("_ends_with", "_nends_with"):
        hit = lambda row: (v := row.get(field)) is not None and _text(v).endswith(text)  # noqa: E731
    else:
        raise errors.invalid_query(f'"{name}" is not a supported filter operator')
    if name.startswith("_n"):
        return lambda row: row.get(field) is not None and not hit(row)
    return hit


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _hashable(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool)) else repr(value)


def _all(predicates: list[Predicate]) -> Predicate:
    if not predicates:
        return lambda row: True
    if len(predicates) == 1:
        return predicates[0]
    if len(predicates) == 2:
        first, second = predicates
        return lambda row: first(row) and second(row)
    return lambda row: all(p(row) for p in predicates)


def _any(predicates: list[Predicate]) -> Predicate:
    if not predicates:
        return lambda row: False
    if len(predicates) == 1:
        return predicates[0]
    return lambda row: any(p(row) for p in predicates)


class FilterCompiler:
    """Turns a filter object into a predicate for rows of `collection`."""

    def __init__(self, schema: Schema, context: FilterContext):
        self.schema = schema
        self.context = context

    def compile(self, collection: Collection, node: Any) -> Predicate:
        if node is None or node == {}:
            return lambda row: True
        if not isinstance(node, dict):
            raise errors.invalid_query("filter must be an object")
        parts: list[Predicate] = []
        for key, value in node.items():
            if key in ("_and", "_or"):
                if not isinstance(value, list):
                    raise errors.invalid_query(f'"{key}" needs an array')
                children = [self.compile(collection, child) for child in value]
                parts.append(_all(children) if key == "_and" else _any(children))
            else:
                parts.append(self._field(collection, key, value))
        return _all(parts)

    def _field(self, collection: Collection, name: str, value: Any) -> Predicate:
        spec = collection.fields.get(name)
        if spec is None:
            raise errors.forbidden_field(name, collection.name)
        if not isinstance(value, dict):
            value = {"_eq": value}
        if spec.m2o and value and not all(k.startswith("_") for k in value):
            return self._related(spec.m2o, name, value)
        if spec.is_alias:
            raise errors.invalid_query(f'filtering on the alias field "{name}" is not supported by the emulator')
        parts = []
        for operator, target in value.items():
            if not operator.startswith("_"):
                raise errors.invalid_query(f'"{operator}" is not a filter operator')
            parts.append(_operator(operator, name, self._dynamic(target), spec.type))
        return _all(parts)

    def _related(self, target_name: str, field: str, nested: dict[str, Any]) -> Predicate:
        target = self.schema.collection(target_name)
        if target is None:
            raise errors.forbidden_collection(target_name)
        inner = self.compile(target, nested)
        lookup = self.schema.related_row
        def predicate(row: Row) -> bool:
            key = row.get(field)
            if key is None:
                return False
            related = lookup(target_name, key)
            return related is not None and inner(related)
        return predicate

    def _dynamic(self, value: Any) -> Any:
        if value == "$CURRENT_USER":
            return self.context.user
        if value == "$CURRENT_ROLE":
            return self.context.role
        if value == "$NOW":
            return now_iso()
        if isinstance(value, list):
            return [self._dynamic(v) for v in value]
        return value


def key_range(collection: Collection, node: Any) -> KeyRange:
    """Bounds on the primary key from the conditions every row must meet (top-level keys and `_and`)."""
    found = KeyRange()
    if not isinstance(node, dict):
        return found
    pk = collection.pk
    pk_type = collection.pk_field.type
    conditions: list[Any] = []
    pending = [node]
    while pending:
        current = pending.pop()
        if not isinstance(current, dict):
            continue
        for key, value in current.items():
            if key == "_and" and isinstance(value, list):
                pending.extend(value)
            elif key == pk and isinstance(value, dict):
                conditions.extend(value.items())
    for operator, raw in conditions:
        if operator in ("_in", "_eq"):
            values = raw.split(",") if operator == "_in" and isinstance(raw, str) else raw
            values = values if isinstance(values, list) else [values]
            keys = [coerce(v, pk_type) for v in values]
            found.keys = keys if found.keys is None else [k for k in found.keys if k in set(keys)]
            continue
        value = coerce(raw, pk_type)
        if value is None or isinstance(value, (dict, list, bool)) or isinstance(value, str) != (pk_type != INTEGER):
            continue  # a bound of the wrong type cannot narrow a scan (the predicate still applies)
        try:
            if operator in ("_gt", "_gte") and (found.low is None or value >= found.low):
                found.low, found.low_inclusive = value, operator == "_gte"
            elif operator in ("_lt", "_lte") and (found.high is None or value <= found.high):
                found.high, found.high_inclusive = value, operator == "_lte"
        except TypeError:
            continue
    return found
