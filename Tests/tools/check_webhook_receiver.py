"""A webhook receiver for the `check` tests: verifies Standard Webhooks signatures with the reference library.

Prints `READY <port>` once listening on 127.0.0.1. `--secret whsec_…` is the secret it verifies with.
  HEAD /hook           200 (a receiver that answers)
  POST /hook           204 when the signature verifies (and the body is JSON), else 401 with the reason
  HEAD|POST /broken    500
  HEAD|POST /gone      410 (an endpoint that was removed); any other path answers 404
  GET /received        JSON list of {"id", "type", "signature_ok", "headers"} for every POST to /hook
"""
from __future__ import annotations

import argparse
import asyncio
import json
import signal

from aiohttp import web
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

RECEIVED: list[dict] = []


def make_app(secret: str) -> web.Application:
    verifier = Webhook(secret)

    async def hook(request: web.Request) -> web.Response:
        if request.method == "HEAD":
            return web.Response(status=200)
        body = await request.read()
        headers = {k.lower(): v for k, v in request.headers.items()}
        entry = {"headers": headers, "signature_ok": False, "id": headers.get("webhook-id"), "type": None}
        try:
            payload = verifier.verify(body, headers)
            entry["signature_ok"] = True
            entry["type"] = payload.get("type")
            RECEIVED.append(entry)
            return web.Response(status=204)
        except (WebhookVerificationError, ValueError) as error:
            RECEIVED.append(entry)
            return web.Response(status=401, text=f"signature: {error}")

    async def broken(request: web.Request) -> web.Response:
        return web.Response(status=500, text="broken")

    async def gone(request: web.Request) -> web.Response:
        return web.Response(status=410, text="this endpoint was removed")

    async def received(request: web.Request) -> web.Response:
        return web.json_response(RECEIVED)

    app = web.Application()
    app.add_routes([
        web.route("*", "/hook", hook),
        web.route("*", "/broken", broken),
        web.route("*", "/gone", gone),
        web.get("/received", received),
    ])
    return app


async def main() -> None:
    # Foundation's Process may start us with signals blocked; unblock so stop() ends us.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--secret", required=True)
    args = parser.parse_args()
    runner = web.AppRunner(make_app(args.secret), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", args.port)
    await site.start()
    print(f"READY {site._server.sockets[0].getsockname()[1]}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main())
