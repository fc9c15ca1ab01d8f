"""JSON the way Node's JSON.parse / JSON.stringify do it (Directus is a Node server)."""
from __future__ import annotations

import json
from typing import Any

_MAX_SAFE = 2**53


def _js_float(text: str) -> int | float:
    # JSON.parse("5.0") is the number 5, which JSON.stringify writes back as "5"; keep that round trip.
    value = float(text)
    if value.is_integer() and abs(value) < _MAX_SAFE:
        return int(value)
    return value


def loads(data: str | bytes) -> Any:
    """Parses JSON text; raises ValueError on invalid input (including invalid UTF-8)."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = bytes(data).decode("utf-8")
    return json.loads(data, parse_float=_js_float)


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False)


def dumps(value: Any) -> str:
    """Compact JSON like JSON.stringify (non-ASCII characters are not escaped)."""
    return _ENCODER.encode(value)


def dumpb(value: Any) -> bytes:
    """`dumps` encoded as UTF-8."""
    return _ENCODER.encode(value).encode("utf-8")


def js_string(value: Any) -> str:
    """JavaScript's String(value) for the scalar types a uid or key can have."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if value is None:
        return "null"
    return str(value)
