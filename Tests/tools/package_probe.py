"""Small HTTP helpers for scripts/test-package.sh and scripts/test-container.sh (standard library only).

    package_probe.py free-port                       print a free TCP port on 127.0.0.1
    package_probe.py wait-ready URL SECONDS          wait until URL answers 200 (exit 1 on timeout, with the last answer)
    package_probe.py get URL                         print the body of a 200 answer
    package_probe.py create-article BASE TOKEN TITLE create an article through Directus's REST API, print its id
"""

import json
import socket
import sys
import time
import urllib.error
import urllib.request


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fetch(url: str, timeout: float = 5.0) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace")


def wait_ready(url: str, seconds: float) -> int:
    deadline = time.monotonic() + seconds
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            status, body = fetch(url, timeout=2.0)
            if status == 200:
                return 0
            last = f"{status} {body.strip()}"
        except OSError as error:
            last = str(error)
        time.sleep(0.2)
    print(f"{url} not ready after {seconds:g} s: {last}", file=sys.stderr)
    return 1


def create_article(base: str, token: str, title: str) -> int:
    body = json.dumps({"title": title, "status": "published"}).encode()
    request = urllib.request.Request(
        f"{base}/items/articles", data=body, method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        print(json.load(response)["data"]["id"])
    return 0


def main(argv: list[str]) -> int:
    command, args = argv[0], argv[1:]
    if command == "free-port":
        print(free_port())
        return 0
    if command == "wait-ready":
        return wait_ready(args[0], float(args[1]))
    if command == "get":
        try:
            status, body = fetch(args[0])
        except OSError as error:
            print(f"{args[0]}: {error}", file=sys.stderr)
            return 1
        sys.stdout.write(body)
        return 0 if status == 200 else 1
    if command == "create-article":
        return create_article(*args)
    print(__doc__, file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
