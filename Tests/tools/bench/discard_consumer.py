"""How fast the emulator's blast feeder can send: a consumer that costs next to nothing per byte.

Upgrades with the static token in the URL, subscribes to `articles`, prints READY, then reads and discards (recv_into
one 1 MiB buffer) until BYTES bytes or the end of the stream, and prints one JSON line: bytes and seconds from the
first byte. Start the blast after READY (`POST /_emulator/blast` with `wait`); its `frames_per_second` is then the
feeder's own rate with a reader that is never the limit (BENCHMARKS.md, "the live path per event, a feeder that
keeps up").

    python discard_consumer.py PORT BYTES
"""
import base64, json, os, socket, sys, time


def main(port: int, total: int) -> None:
    sock = socket.create_connection(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(f"GET /websocket?access_token=admin-static-token HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                 f"Sec-WebSocket-Version: 13\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(4096)
    rest = head.split(b"\r\n\r\n", 1)[1]
    payload = b'{"type":"subscribe","collection":"articles","uid":"articles"}'
    mask = os.urandom(4)
    sock.sendall(bytes((0x81, 0x80 | len(payload))) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
    while b'"init"' not in rest:
        rest += sock.recv(65536)
    print("READY", flush=True)
    view = memoryview(bytearray(1 << 20))
    received, first = 0, None
    while received < total:
        count = sock.recv_into(view)
        if count == 0:
            break
        first = first or time.perf_counter()
        received += count
    print(json.dumps({"bytes": received, "seconds": time.perf_counter() - (first or time.perf_counter())}), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
