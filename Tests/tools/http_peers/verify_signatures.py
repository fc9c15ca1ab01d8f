"""Verifies webhook signatures made by the bridge with the `standardwebhooks` package (the reference).

    python Tests/tools/http_peers/verify_signatures.py < cases.json

Reads a JSON list of {"secret": "whsec_..." | "text", "raw": bool, "id", "timestamp", "body", "signature"}
(`raw` secrets are used as their UTF-8 bytes, others as Standard Webhooks secrets) and prints one JSON list of
results: true, or the verification error's text.
"""
from __future__ import annotations

import json
import sys

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


def main() -> None:
    results = []
    for case in json.load(sys.stdin):
        secret = case["secret"].encode() if case["raw"] else case["secret"]
        headers = {"webhook-id": case["id"], "webhook-timestamp": str(case["timestamp"]),
                   "webhook-signature": case["signature"]}
        try:
            Webhook(secret).verify(case["body"].encode(), headers, json_parse=False)
            results.append(True)
        except WebhookVerificationError as error:
            results.append(str(error))
    print(json.dumps(results))


if __name__ == "__main__":
    main()
