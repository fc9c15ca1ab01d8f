"""A scriptable webhook receiver for the bridge's webhook tests (aiohttp).

    python Tests/tools/http_peers/webhook_receiver.py

Two listeners on 127.0.0.1: the control API (its port is printed as `READY <port>`) and the hook listener
(any path; its port is in `GET /_control/info`), so the hook side can go down (connections refused) and come
back on the same port while the test keeps talking to the control side.

Every hook request is recorded: arrival time (time.monotonic, and `wall`: Unix time), path, headers
(lower-case), body text, the `webhook-id`, the status answered, whether the client gave up before the answer
(`aborted`), and, per configured secret, whether `standardwebhooks` (the independent reference implementation)
verifies its signature.

Control API (JSON):
  GET  /_control/info                 {"hook_port": N}
  GET  /_control/requests             {"requests": [record, ...]} in arrival order
  POST /_control/reset                forget requests, steps and secrets
  POST /_control/script  {"steps": [step, ...], "default": step, "random_delay_ms": [lo, hi]}
        steps are used one per request in arrival order, then `default` (status 204). A step:
        {"status": 503, "headers": {"retry-after": "2"}, "body": "text", "delay_ms": 100, "hang": false}
        `hang` keeps the request open until the client gives up. `hold: "NAME"` keeps it open until
        `POST /_control/release {"name": "NAME"}` (then the rest of the step applies). `random_delay_ms` adds a
        uniform random delay to every request (answers then come back in random order).
  POST /_control/secrets {"paths": {"/hook": ["whsec_...", {"raw": "text"}]}}
        secrets to verify requests to each path with ("*" applies to any path).
  POST /_control/down    {"ms": 0}    stop accepting hook connections (refused) and drop open ones; with
                                      ms > 0 come back up by itself after that long
  POST /_control/up                   accept hook connections again
  POST /_control/release {"name": "NAME"}  answers the requests held by `hold: "NAME"`, and those that come later
"""
from __future__ import annotations

import argparse
import asyncio
import random
import signal
import time

from aiohttp import web
from standardwebhooks.webhooks import Webhook, WebhookVerificationError


class Receiver:
    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.steps: list[dict] = []
        self.default: dict = {"status": 204}
        self.random_delay: tuple[float, float] | None = None
        self.secrets: dict[str, list] = {}
        self.hook_runner: web.AppRunner | None = None
        self.hook_site: web.TCPSite | None = None
        self.hook_port = 0
        self.up_task: asyncio.Task | None = None
        self.gates: dict[str, asyncio.Event] = {}

    # Hook side

    async def hook(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        headers = {k.lower(): v for k, v in request.headers.items()}
        record = {
            "n": len(self.requests),
            "t": time.monotonic(),
            "wall": time.time(),
            "path": request.path,
            "headers": headers,
            "body": body.decode("utf-8", "replace"),
            "id": headers.get("webhook-id"),
            "verified": self.verify(request.path, body, headers),
            "status": None,
            "aborted": False,
        }
        self.requests.append(record)
        step = self.steps.pop(0) if self.steps else self.default
        delay = step.get("delay_ms", 0) / 1000
        if self.random_delay:
            delay += random.uniform(*self.random_delay) / 1000
        if step.get("hang"):
            delay = 3600
        if "hold" in step:
            gate = self.gate(step["hold"])
            while not gate.is_set():
                if request.transport is None or request.transport.is_closing():
                    record["aborted"] = True
                    record["aborted_after"] = time.monotonic() - record["t"]
                    return web.Response(status=499)
                try:
                    await asyncio.wait_for(gate.wait(), 0.01)
                except asyncio.TimeoutError:
                    pass
        # Wait in small steps so a client that gives up is noticed (aiohttp keeps running the handler).
        deadline = time.monotonic() + delay
        while time.monotonic() < deadline:
            if request.transport is None or request.transport.is_closing():
                record["aborted"] = True
                record["aborted_after"] = time.monotonic() - record["t"]
                return web.Response(status=499)
            await asyncio.sleep(min(0.01, max(0.0, deadline - time.monotonic())))
        status = step.get("status", 204)
        record["status"] = status
        text = step.get("body")
        return web.Response(status=status, headers=step.get("headers", {}),
                            body=text.encode() if text is not None else None)

    def gate(self, name: str) -> asyncio.Event:
        return self.gates.setdefault(name, asyncio.Event())

    def verify(self, path: str, body: bytes, headers: dict) -> list:
        results = []
        for secret in self.secrets.get(path, self.secrets.get("*", [])):
            key = secret["raw"].encode() if isinstance(secret, dict) else secret
            try:
                Webhook(key).verify(body, headers, json_parse=False)
                results.append(True)
            except WebhookVerificationError as error:
                results.append(str(error))
        return results

    async def start_hook(self) -> None:
        if self.hook_site is not None:
            return
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.hook)
        self.hook_runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.1)
        await self.hook_runner.setup()
        self.hook_site = web.TCPSite(self.hook_runner, "127.0.0.1", self.hook_port, reuse_address=True)
        await self.hook_site.start()
        self.hook_port = self.hook_site._server.sockets[0].getsockname()[1]

    async def stop_hook(self) -> None:
        if self.hook_runner is not None:
            runner, self.hook_runner, self.hook_site = self.hook_runner, None, None
            await runner.cleanup()  # closes the listener and every open connection

    # Control side

    async def info(self, _: web.Request) -> web.Response:
        return web.json_response({"hook_port": self.hook_port, "up": self.hook_site is not None})

    async def list_requests(self, _: web.Request) -> web.Response:
        return web.json_response({"requests": self.requests})

    async def reset(self, _: web.Request) -> web.Response:
        self.requests, self.steps, self.default, self.random_delay, self.secrets = [], [], {"status": 204}, None, {}
        for gate in self.gates.values():
            gate.set()  # nothing stays held across a reset
        self.gates = {}
        return web.json_response({"ok": True})

    async def script(self, request: web.Request) -> web.Response:
        spec = await request.json()
        self.steps = list(spec.get("steps", []))
        self.default = spec.get("default", {"status": 204})
        delay = spec.get("random_delay_ms")
        self.random_delay = (float(delay[0]), float(delay[1])) if delay else None
        return web.json_response({"ok": True})

    async def release(self, request: web.Request) -> web.Response:
        self.gate((await request.json())["name"]).set()
        return web.json_response({"ok": True})

    async def set_secrets(self, request: web.Request) -> web.Response:
        self.secrets = (await request.json()).get("paths", {})
        return web.json_response({"ok": True})

    async def down(self, request: web.Request) -> web.Response:
        milliseconds = (await request.json() if request.can_read_body else {}).get("ms", 0)
        if self.up_task:
            self.up_task.cancel()
        await self.stop_hook()
        if milliseconds > 0:
            async def later() -> None:
                await asyncio.sleep(milliseconds / 1000)
                await self.start_hook()
            self.up_task = asyncio.create_task(later())
        return web.json_response({"ok": True})

    async def up(self, _: web.Request) -> web.Response:
        if self.up_task:
            self.up_task.cancel()
        await self.start_hook()
        return web.json_response({"ok": True, "hook_port": self.hook_port})


async def main() -> None:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    receiver = Receiver()
    await receiver.start_hook()
    control = web.Application()
    control.router.add_get("/_control/info", receiver.info)
    control.router.add_get("/_control/requests", receiver.list_requests)
    control.router.add_post("/_control/reset", receiver.reset)
    control.router.add_post("/_control/script", receiver.script)
    control.router.add_post("/_control/secrets", receiver.set_secrets)
    control.router.add_post("/_control/down", receiver.down)
    control.router.add_post("/_control/up", receiver.up)
    control.router.add_post("/_control/release", receiver.release)
    runner = web.AppRunner(control, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", args.port)
    await site.start()
    print(f"READY {site._server.sockets[0].getsockname()[1]}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()


if __name__ == "__main__":
    asyncio.run(main())
