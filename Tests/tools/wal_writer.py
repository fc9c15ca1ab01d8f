"""A writer in another process whose write-ahead log is deleted under it (Tests/BridgeStoreTests/DeletedLogTests):

    python wal_writer.py PATH

Creates PATH (WAL, no automatic checkpoint) with table `t`, commits one row, deletes PATH-wal, commits a second row
into the unlinked log, and prints `ready`. Each line on stdin then: `renew` writes the log into the file and starts
a new one as the bridge's check does (checkpoint, close, open) and prints `renewed`; `quit` ends it. SQLite's locks on
PATH-shm are this process's while it runs, which a test process cannot fake for itself.
"""
from __future__ import annotations

import os
import sqlite3
import sys


def connect(path: str) -> sqlite3.Connection:
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA wal_autocheckpoint=0")
    return connection


def main() -> None:
    path = sys.argv[1]
    writer = connect(path)
    writer.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
    writer.execute("INSERT INTO t (body) VALUES (randomblob(100))")
    os.unlink(path + "-wal")
    writer.execute("INSERT INTO t (body) VALUES (randomblob(100))")
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() == "renew":
            writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            writer.close()
            writer = connect(path)
            print("renewed", flush=True)
        elif line.strip() == "quit":
            break
    writer.close()


if __name__ == "__main__":
    main()
