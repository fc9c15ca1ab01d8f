"""The REST query vocabulary (docs/directus-protocol.md §8.7): parsing `qs`-style parameters and sanitizing them into a
`Query`."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from . import errors, jsonutil

_SEGMENT = re.compile(r"\[([^\]]*)\]")
_META_ALL = ["total_count", "filter_count"]


@dataclass
class Query:
    """A sanitized query. `limit=None` means "the default" (100, §1.3 QUERY_LIMIT_DEFAULT); -1 means all."""

    fields: list[str] = field(default_factory=lambda: ["*"])
    filter: dict[str, Any] | None = None
    sort: list[str] | None = None
    limit: int | None = None
    offset: int = 0
    page: int | None = None
    meta: list[str] = field(default_factory=list)
    search: str | None = None
    aggregate: dict[str, list[str]] | None = None
    group_by: list[str] | None = None


def parse_qs_pairs(pairs: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """Nests `filter[id][_in]=1,2` and `fields[]=a` like the `qs` module Express uses (depth 10)."""
    root: dict[str, Any] = {}
    for raw_key, value in pairs:
        bracket = raw_key.find("[")
        if bracket <= 0:
            path = [raw_key]
        else:
            path = [raw_key[:bracket]] + _SEGMENT.findall(raw_key[bracket:])[:10]
        node: Any = root
        for index, segment in enumerate(path):
            last = index == len(path) - 1
            if isinstance(node, list):
                # `a[]=x` appends; nested segments under a list entry are not used by Directus queries.
                if last:
                    node.append(value)
                break
            if last:
                if segment == "" and isinstance(node, dict):
                    segment = str(len(node))
                existing = node.get(segment)
                if existing is None:
                    node[segment] = value
                elif isinstance(existing, list):
                    existing.append(value)
                else:
                    node[segment] = [existing, value]
            else:
                following = path[index + 1]
                child = node.get(segment)
                if child is None:
                    child = [] if following == "" else {}
                    node[segment] = child
                elif not isinstance(child, (dict, list)):
                    child = {"0": child}
                    node[segment] = child
                node = child
    return _arrays(root)


def _arrays(node: Any) -> Any:
    """`{"0": a, "1": b}` → `[a, b]` (qs turns indexed keys into arrays, e.g. `filter[_and][0][id][_eq]=1`)."""
    if isinstance(node, dict):
        converted = {k: _arrays(v) for k, v in node.items()}
        if converted and all(k.isdigit() for k in converted):
            return [converted[k] for k in sorted(converted, key=int)]
        return converted
    if isinstance(node, list):
        return [_arrays(v) for v in node]
    return node


def _string_list(value: Any, name: str) -> list[str]:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list):
        result: list[str] = []
        for item in value:
            if not isinstance(item, str):
                raise errors.invalid_query(f'"{name}" must be a string or an array of strings')
            result.extend(part.strip() for part in item.split(",") if part.strip())
        return result
    raise errors.invalid_query(f'"{name}" must be a string or an array of strings')


def _integer(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, bool):
        raise errors.invalid_query(f'"{name}" has to be a number')
    try:
        number = int(value) if not isinstance(value, float) else int(value) if value.is_integer() else None
    except (TypeError, ValueError):
        number = None
    if number is None or number < minimum:
        raise errors.invalid_query(f'"{name}" has to be a number')
    return number


def sanitize(raw: dict[str, Any] | None) -> Query:
    """Validates a raw query object (REST parameters or a subscribe `query`, native JSON or string forms)."""
    query = Query()
    if not raw:
        return query
    if not isinstance(raw, dict):
        raise errors.invalid_query("query must be an object")
    for key, value in raw.items():
        if key == "fields":
            fields = _string_list(value, "fields")
            query.fields = fields or ["*"]
        elif key == "filter":
            if isinstance(value, str):
                try:
                    value = jsonutil.loads(value) if value.strip() else None
                except ValueError:
                    raise errors.invalid_query("Invalid JSON for filter object") from None
            if value is not None and not isinstance(value, dict):
                raise errors.invalid_query("filter must be an object")
            query.filter = value or None
        elif key == "sort":
            query.sort = _string_list(value, "sort") or None
        elif key == "limit":
            query.limit = _integer(value, "limit", -1)
        elif key == "offset":
            query.offset = _integer(value, "offset", 0)
        elif key == "page":
            query.page = _integer(value, "page", 1)
        elif key == "meta":
            names = _string_list(value, "meta")
            query.meta = _META_ALL[:] if "*" in names else [n for n in names if n in _META_ALL]
        elif key == "search":
            query.search = value if isinstance(value, str) else jsonutil.js_string(value)
        elif key == "aggregate":
            if isinstance(value, str):
                try:
                    value = jsonutil.loads(value)
                except ValueError:
                    raise errors.invalid_query("Invalid JSON for aggregate object") from None
            if not isinstance(value, dict):
                raise errors.invalid_query("aggregate must be an object")
            query.aggregate = {op: _string_list(v, "aggregate") for op, v in value.items()}
        elif key == "groupBy":
            query.group_by = _string_list(value, "groupBy")
        elif key in ("deep", "alias", "version", "backlink", "export", "access_token", "versionRaw"):
            continue  # accepted and ignored: nothing in the emulator's schema needs them
        # Unknown parameters are ignored by Directus too (sanitizeQuery only copies what it knows).
    return query


def effective_limit(query: Query, default: int = 100) -> int | None:
    """The number of rows to return, or None for all (`limit=-1`)."""
    if query.limit is None:
        return default
    if query.limit == -1:
        return None
    return query.limit


def effective_offset(query: Query, limit: int | None) -> int:
    if query.page is not None and limit is not None:
        return (query.page - 1) * limit
    return query.offset
