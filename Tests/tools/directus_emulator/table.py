"""Rows of one collection in memory, kept in primary-key order so range reads need no scan."""
from __future__ import annotations

import bisect
from typing import Any, Iterator


class Table:
    """`rows` maps key → row dict; `keys` is the sorted key list (bisect for `id > N` reads of 100k rows)."""

    def __init__(self) -> None:
        self.rows: dict[Any, dict[str, Any]] = {}
        self.keys: list[Any] = []
        self.next_auto = 1

    def __len__(self) -> int:
        return len(self.rows)

    def get(self, key: Any) -> dict[str, Any] | None:
        return self.rows.get(key)

    def insert(self, key: Any, row: dict[str, Any]) -> None:
        if key in self.rows:
            self.rows[key] = row
            return
        self.rows[key] = row
        keys = self.keys
        if not keys or keys[-1] < key:
            keys.append(key)  # the common case: autoincrement keys commit in order
        else:
            bisect.insort(keys, key)  # a late commit (out-of-order) or a client-chosen key
        if isinstance(key, int) and key >= self.next_auto:
            self.next_auto = key + 1

    def delete(self, key: Any) -> dict[str, Any] | None:
        row = self.rows.pop(key, None)
        if row is not None:
            index = bisect.bisect_left(self.keys, key)
            if index < len(self.keys) and self.keys[index] == key:
                del self.keys[index]
        return row

    def reserve(self) -> int:
        """Allocates the next autoincrement value (a sequence: never reused, even if the insert waits)."""
        value = self.next_auto
        self.next_auto += 1
        return value

    def scan(self, low: Any = None, low_inclusive: bool = True, high: Any = None, high_inclusive: bool = True,
             descending: bool = False) -> Iterator[dict[str, Any]]:
        """Rows with low ≤ key ≤ high (bounds optional), in key order."""
        keys = self.keys
        start = 0
        end = len(keys)
        if low is not None:
            start = bisect.bisect_left(keys, low) if low_inclusive else bisect.bisect_right(keys, low)
        if high is not None:
            end = bisect.bisect_right(keys, high) if high_inclusive else bisect.bisect_left(keys, high)
        rows = self.rows
        if descending:
            for index in range(end - 1, start - 1, -1):
                yield rows[keys[index]]
        else:
            for index in range(start, end):
                yield rows[keys[index]]

    def clear(self) -> None:
        self.rows.clear()
        self.keys.clear()
        self.next_auto = 1
