"""A background change generator: creates, updates and deletes items as the admin, like a busy editor."""
from __future__ import annotations

import asyncio
import itertools
import random
import time
from dataclasses import dataclass, field
from typing import Any

from . import errors
from .auth import Auth
from .database import USERS, Database
from .seed import ADMIN_ID
from .writes import Writer

KINDS = ("create", "update", "delete", "mixed")
_ids = itertools.count(1)
_WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar".split()


@dataclass
class GeneratorJob:
    """One run: `count` changes (or endless when -1) spaced `interval_ms` apart."""

    collection: str
    count: int
    interval_ms: float
    kind: str
    emit: bool = True
    track: bool = True
    id: int = field(default_factory=lambda: next(_ids))
    done_count: int = 0
    errors: int = 0
    by_action: dict[str, int] = field(default_factory=lambda: {"create": 0, "update": 0, "delete": 0})
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None
    last_error: str | None = None
    task: asyncio.Task | None = None

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id, "collection": self.collection, "count": self.count, "interval_ms": self.interval_ms,
            "kind": self.kind, "done": self.done_count, "errors": self.errors, "by_action": dict(self.by_action),
            "running": self.running, "last_error": self.last_error,
            "seconds": round((self.finished or time.monotonic()) - self.started, 3),
        }


class ChangeGenerator:
    def __init__(self, db: Database, auth: Auth, writer: Writer, seed: int | None = None):
        self.db = db
        self.auth = auth
        self.writer = writer
        self.random = random.Random(seed)
        self.jobs: list[GeneratorJob] = []

    def start(self, job: GeneratorJob) -> GeneratorJob:
        if job.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}")
        collection = self.db.collection(job.collection)
        if collection is None or collection.system:
            raise ValueError(f"unknown collection {job.collection!r}")
        job.task = asyncio.get_running_loop().create_task(self._run(job))
        self.jobs.append(job)
        return job

    def stop_all(self) -> None:
        for job in self.jobs:
            if job.task is not None:
                job.task.cancel()

    async def wait(self, job_ids: list[int] | None, timeout: float) -> bool:
        tasks = [j.task for j in self.jobs if j.task is not None and (not job_ids or j.id in job_ids)]
        if not tasks:
            return True
        done, pending = await asyncio.wait(tasks, timeout=timeout)
        return not pending

    async def _run(self, job: GeneratorJob) -> None:
        admin = self.db.table(USERS).get(ADMIN_ID)
        accountability = self.auth.accountability(admin).with_request("127.0.0.1", "directus-emulator/generator",
                                                                      None)
        interval = job.interval_ms / 1000
        next_at = time.monotonic()
        try:
            while job.count < 0 or job.done_count < job.count:
                action = self._pick(job)
                try:
                    await self._change(job.collection, action, accountability, job)
                    job.by_action[action] += 1
                except errors.DirectusError as error:
                    job.errors += 1
                    job.last_error = error.message
                job.done_count += 1
                if interval > 0:
                    next_at += interval
                    await asyncio.sleep(max(0.0, next_at - time.monotonic()))
                elif job.done_count % 200 == 0:
                    await asyncio.sleep(0)  # let sockets and requests breathe
        finally:
            job.finished = time.monotonic()

    def _pick(self, job: GeneratorJob) -> str:
        existing = len(self.db.table(job.collection))
        if job.kind != "mixed":
            return job.kind if existing or job.kind == "create" else "create"
        if existing < 3:
            return "create"
        roll = self.random.random()
        return "create" if roll < 0.35 else "update" if roll < 0.85 else "delete"

    async def _change(self, name: str, action: str, accountability, job: GeneratorJob) -> None:
        collection = self.db.collections[name]
        table = self.db.table(name)
        if action in ("update", "delete"):
            if not table.keys:
                raise errors.forbidden("nothing to change")
            key = table.keys[self.random.randrange(len(table.keys))]
            if action == "delete":
                await self.writer.delete(name, [key], accountability, job.emit, job.track)
            else:
                await self.writer.update(name, [key], self._values(collection, update=True), accountability,
                                         job.emit, job.track)
            return
        payload = self._values(collection, update=False)
        await self.writer.create(name, [payload], accountability, job.emit, job.track)

    def _values(self, collection, update: bool) -> dict[str, Any]:
        words = " ".join(self.random.choice(_WORDS) for _ in range(3))
        values: dict[str, Any] = {}
        for spec in collection.fields.values():
            if spec.primary_key:
                if not spec.auto_increment and not update:
                    values[spec.name] = f"{words.replace(' ', '-')}-{self.random.randrange(10**9)}"
                continue
            if spec.name in ("date_updated", "date_created") or spec.is_alias:
                continue
            if spec.m2o:
                keys = self.db.table(spec.m2o).keys
                values[spec.name] = keys[self.random.randrange(len(keys))] if keys else None
            elif spec.name == "status":
                values[spec.name] = self.random.choice(["draft", "published", "archived"])
            elif spec.type in ("string", "text"):
                values[spec.name] = words.capitalize()
            elif spec.type in ("integer", "float"):
                values[spec.name] = self.random.randrange(1000)
            if update and len(values) >= 2:
                break
        return values
