"""Hosts librdkafka's mock Kafka cluster (rdkafka_mock.h) in a process of its own, driven over stdin.

    python kafka_mock.py BROKERS

Loads the system's librdkafka (the one the bridge links) with ctypes, starts a mock cluster of BROKERS brokers on
loopback TCP ports and prints `BOOTSTRAP host:port,host:port,...`. Then reads one command per line and answers
`OK` or `ERR <text>`:

    topic NAME PARTITIONS REPLICATION   create a topic
    leader TOPIC PARTITION BROKER        move a partition's leader
    down BROKER | up BROKER              disconnect a broker and refuse connections / accept them again
    rtt BROKER MILLISECONDS              delay every answer of a broker
    errors CODE[,CODE...]                the next produce requests (any broker) fail with these codes, in order

Why a process of its own: librdkafka 2.0.2 releases a broker's port when the broker goes down and binds it again
when it comes up; on a busy machine another process can take the port in between, and the mock then aborts the
whole process ("Failed to create mock broker listener"). Here that ends this helper (the test sees EOF and fails
with a message) instead of the test process and every test in it. It also exits when stdin closes or its parent
(the test process) is gone, so a killed test run leaves no cluster behind.
"""
import ctypes
import os
import sys
import threading
import time

PRODUCE_API_KEY = 0


def load():
    lib = ctypes.CDLL("librdkafka.so.1")
    lib.rd_kafka_conf_new.restype = ctypes.c_void_p
    lib.rd_kafka_conf_set.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                      ctypes.c_size_t]
    lib.rd_kafka_new.restype = ctypes.c_void_p
    lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_mock_cluster_new.restype = ctypes.c_void_p
    lib.rd_kafka_mock_cluster_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
    lib.rd_kafka_mock_cluster_bootstraps.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_topic_create.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    lib.rd_kafka_mock_partition_set_leader.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32,
                                                       ctypes.c_int32]
    for name in ("rd_kafka_mock_broker_set_down", "rd_kafka_mock_broker_set_up"):
        getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_int32]
    lib.rd_kafka_mock_broker_set_rtt.argtypes = [ctypes.c_void_p, ctypes.c_int32, ctypes.c_int]
    lib.rd_kafka_mock_push_request_errors_array.argtypes = [ctypes.c_void_p, ctypes.c_int16, ctypes.c_size_t,
                                                            ctypes.POINTER(ctypes.c_int)]
    lib.rd_kafka_err2str.restype = ctypes.c_char_p
    return lib


def main() -> None:
    brokers = int(sys.argv[1])
    lib = load()
    conf = lib.rd_kafka_conf_new()
    errstr = ctypes.create_string_buffer(512)
    lib.rd_kafka_conf_set(conf, b"log_level", b"0", errstr, 512)
    host = lib.rd_kafka_new(0, conf, errstr, 512)  # RD_KAFKA_PRODUCER; it only hosts the cluster
    if not host:
        print(f"ERR {errstr.value.decode()}", flush=True)
        sys.exit(1)
    cluster = lib.rd_kafka_mock_cluster_new(host, brokers)
    if not cluster:
        print("ERR librdkafka could not start a mock cluster", flush=True)
        sys.exit(1)
    print(f"BOOTSTRAP {lib.rd_kafka_mock_cluster_bootstraps(cluster).decode()}", flush=True)

    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, daemon=True).start()

    def answer(code: int) -> str:
        return "OK" if code == 0 else f"ERR {lib.rd_kafka_err2str(code).decode()}"

    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        command, args = words[0], words[1:]
        try:
            if command == "topic":
                reply = answer(lib.rd_kafka_mock_topic_create(cluster, args[0].encode(), int(args[1]), int(args[2])))
            elif command == "leader":
                reply = answer(lib.rd_kafka_mock_partition_set_leader(cluster, args[0].encode(), int(args[1]),
                                                                      int(args[2])))
            elif command == "down":
                reply = answer(lib.rd_kafka_mock_broker_set_down(cluster, int(args[0])))
            elif command == "up":
                reply = answer(lib.rd_kafka_mock_broker_set_up(cluster, int(args[0])))
            elif command == "rtt":
                reply = answer(lib.rd_kafka_mock_broker_set_rtt(cluster, int(args[0]), int(args[1])))
            elif command == "errors":
                codes = [int(code) for code in args[0].split(",")]
                array = (ctypes.c_int * len(codes))(*codes)
                lib.rd_kafka_mock_push_request_errors_array(cluster, PRODUCE_API_KEY, len(codes), array)
                reply = "OK"
            else:
                reply = f"ERR unknown command {command}"
        except (IndexError, ValueError) as error:
            reply = f"ERR {error}"
        print(reply, flush=True)
    os._exit(0)  # no teardown: the process is going away, and destroying the cluster can block on its threads


if __name__ == "__main__":
    main()
