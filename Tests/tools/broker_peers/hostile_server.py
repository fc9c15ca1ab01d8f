"""A TCP server on 127.0.0.1 that misbehaves on purpose, for the broker clients' hostile-peer tests.

    python hostile_server.py MODE

Prints `READY <port>`, then answers every connection according to MODE:
  silent          accepts and reads, never answers
  redis-garbage   answers the first bytes it reads with a line that is no RESP reply
  redis-oversized answers with a bulk string announcing 100 MB and sending 2 MB of it, then stays silent
  redis-huge-array answers with an array header announcing 2,000,000,000 elements
  redis-deep      answers with arrays nested 20 levels deep
  close           accepts and closes at once
"""
import socket
import sys
import threading

REPLIES = {
    "redis-garbage": b"hello, I am not Redis\r\n",
    "redis-oversized": b"$100000000\r\n" + b"x" * 2_000_000,
    "redis-huge-array": b"*2000000000\r\n",
    "redis-deep": b"*1\r\n" * 20 + b":1\r\n",
}


def serve(connection: socket.socket, mode: str) -> None:
    with connection:
        if mode == "close":
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
