"""A TCP server on 127.0.0.1 that misbehaves on purpose, for the broker clients' hostile-peer tests.

    python hostile_server.py MODE

Prints `READY <port>`, then answers every connection according to MODE:
  silent          accepts and reads, never answers
  redis-garbage   answers the first bytes it reads with a line that is no RESP reply
  redis-oversized answers with a bulk string announcing 100 MB and sending 2 MB of it, then stays silent
  redis-huge-array answers with an array header announcing 2,000,000,000 elements
  redis-deep      answers with arrays nested 20 levels deep
  close           accepts and closes at once
  mqtt-garbage    answers the first bytes it reads with a CONNACK whose remaining length runs past MQTT's four
                  bytes (a malformed packet), then stays silent
  amqp-garbage    answers the AMQP protocol header with a line that is no AMQP frame
  amqp-oversized  answers with a method frame announcing a 2 GB payload and sending 2 MB of it, then stays silent
  mqtt311-only    an MQTT broker that speaks 3.1.1 only: refuses a CONNECT of another version with CONNACK code 1
                  (and closes), accepts level 4, answers PUBLISH QoS 1 with PUBACK and PINGREQ with PINGRESP
"""
import socket
import sys
import threading

REPLIES = {
    "redis-garbage": b"hello, I am not Redis\r\n",
    "redis-oversized": b"$100000000\r\n" + b"x" * 2_000_000,
    "redis-huge-array": b"*2000000000\r\n",
    "redis-deep": b"*1\r\n" * 20 + b":1\r\n",
    "mqtt-garbage": b"\x20\xff\xff\xff\xff\x7f" + b"\x00" * 64,
    "amqp-garbage": b"HTTP/1.1 400 Bad Request\r\n\r\n",
    "amqp-oversized": b"\x01\x00\x00\x7f\xff\xff\xff" + b"\x00" * 2_000_000,
}


def read_exactly(connection: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = connection.recv(count - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def serve_mqtt311(connection: socket.socket) -> None:
    while True:
        first = read_exactly(connection, 1)[0]
        length, shift = 0, 0
        while True:
            byte = read_exactly(connection, 1)[0]
            length |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        body = read_exactly(connection, length)
        kind = first >> 4
        if kind == 1:  # CONNECT: protocol name (2-byte length + "MQTT"), then the level
            level = body[6]
            connection.sendall(bytes([0x20, 0x02, 0x00, 0x00 if level == 4 else 0x01]))
            if level != 4:
                return
        elif kind == 3 and (first >> 1) & 3 == 1:  # PUBLISH QoS 1: the packet id follows the topic
            topic_length = int.from_bytes(body[0:2], "big")
            connection.sendall(bytes([0x40, 0x02]) + body[2 + topic_length:4 + topic_length])
        elif kind == 12:
            connection.sendall(bytes([0xD0, 0x00]))
        elif kind == 14:
            return


def serve(connection: socket.socket, mode: str) -> None:
    with connection:
        if mode == "close":
            return
        if mode == "mqtt311-only":
            try:
                serve_mqtt311(connection)
            except (EOFError, OSError):
                pass
            return
        answered = False
        while True:
            try:
                data = connection.recv(65536)
            except OSError:
                return
            if not data:
                return
            if not answered and mode in REPLIES:
                answered = True
                try:
                    connection.sendall(REPLIES[mode])
                except OSError:
                    return


def main() -> None:
    mode = sys.argv[1]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    print(f"READY {listener.getsockname()[1]}", flush=True)
    while True:
        connection, _ = listener.accept()
        threading.Thread(target=serve, args=(connection, mode), daemon=True).start()


if __name__ == "__main__":
    main()
