// The ceiling peer of the `mqtt-sink` benchmark: libmosquitto (Debian's, the library the bridge's MQTT client wraps)
// publishing what the bridge's MQTT sink publishes, with nothing else: MQTT 5, QoS 1, the ~450-byte event JSON as
// payload with the user properties id, type, collection, key and event, to bench/c/update, counting PUBACKs, against
// the same mosquitto. mosquitto ships no load tool of its own (Debian's mosquitto-clients has mosquitto_pub, one
// process per publish run, no acknowledged rate), so this stands in for it. See BENCHMARKS.md, "MQTT sink".
//
//     cc -O2 -o mqtt-libmosquitto-peer Benchmarks/mqtt_libmosquitto_peer.c $(pkg-config --cflags --libs libmosquitto)
//     mqtt-libmosquitto-peer PORT COUNT pages|stream PREFIX [WINDOW [loop|thread [nagle|nodelay]]]
//
// After a warm-up of 500 messages: pages, 500 published, then every PUBACK awaited, then the next 500 (activity
// mode's page barrier); stream, published while fewer than WINDOW (default 1000, the sink's max_in_flight, which
// libmosquitto also cuts to the broker's Receive Maximum) are unacknowledged. `loop` (the default): one thread,
// publishing and then running libmosquitto's loop (mosquitto_loop) until a PUBACK frees the window; `thread`:
// libmosquitto's own network thread (mosquitto_loop_start), publishes from the main thread, PUBACKs counted under a
// mutex, as the bridge's client does. `nagle` (the default) keeps libmosquitto's socket as the bridge's client does,
// `nodelay` sets TCP_NODELAY (MOSQ_OPT_TCP_NODELAY). Like the bridge's client it sets TCP_QUICKACK after each
// PUBACK: mosquitto holds a burst's later PUBACKs (Nagle) until the first is acknowledged, which Linux otherwise
// delays by 40 ms at every page's end (BENCHMARKS.md, "MQTT: the batch-end stall"). Prints one JSON object:
// messages_per_second, cpu_seconds (this process, timed part), failures (PUBACKs with a failure reason code).
#include <mosquitto.h>
#include <mqtt_protocol.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "bench_peer.h"

/// One message's payload and user properties, made before the timed part (as the benchmark's events are).
struct message {
    char *payload;
    int payload_length;
    mosquitto_property *properties;
};

static void make(void *message, long index, const char *prefix) {
    struct message *m = message;
    char line[1024], id[96], key[16];
    snprintf(key, sizeof key, "item-%ld", index % 1000);
    snprintf(id, sizeof id, "%s_%08ld", prefix, index);
    m->payload_length = bench_event_line(line, sizeof line, id, key, index);
    m->payload = strdup(line);
    m->properties = NULL;
    const char *pairs[5][2] = {
        {"id", id}, {"type", "directus.items.update"}, {"collection", "articles"}, {"key", key}, {"event", "update"},
    };
    for (int i = 0; i < 5; i++) {
        if (mosquitto_property_add_string_pair(&m->properties, MQTT_PROP_USER_PROPERTY, pairs[i][0], pairs[i][1])) {
            fprintf(stderr, "mqtt-libmosquitto-peer: cannot add a user property\n");
            exit(1);
        }
    }
}

static struct mosquitto *client;
static int threaded;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static long acknowledged = 0, failures = 0;
static int connected = 0;

static void on_connect(struct mosquitto *m, void *user, int code, int flags, const mosquitto_property *properties) {
    (void)m, (void)user, (void)flags, (void)properties;
    pthread_mutex_lock(&lock);
    connected = code == 0 ? 1 : -1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static void on_publish(struct mosquitto *m, void *user, int mid, int reason, const mosquitto_property *properties) {
    (void)user, (void)mid, (void)properties;
    int on = 1;
    setsockopt(mosquitto_socket(m), IPPROTO_TCP, TCP_QUICKACK, &on, sizeof on);
    pthread_mutex_lock(&lock);
    acknowledged++;
    if (reason >= 0x80) failures++;
    pthread_cond_signal(&changed);
    pthread_mutex_unlock(&lock);
}

static long acknowledged_now(void) {
    pthread_mutex_lock(&lock);
    long value = acknowledged;
    pthread_mutex_unlock(&lock);
    return value;
}

/// Blocks until more than `seen` messages are acknowledged (libmosquitto's loop, or its thread's signal).
static void wait_beyond(long seen) {
    if (threaded) {
        pthread_mutex_lock(&lock);
        while (acknowledged <= seen) pthread_cond_wait(&changed, &lock);
        pthread_mutex_unlock(&lock);
        return;
    }
    while (acknowledged <= seen) {
        int status = mosquitto_loop(client, 1000, 1);
        if (status != MOSQ_ERR_SUCCESS) {
            fprintf(stderr, "mqtt-libmosquitto-peer: loop: %s\n", mosquitto_strerror(status));
            exit(1);
        }
    }
}

/// Publishes messages [first, end), at most `window` unacknowledged, then waits for every PUBACK up to `end`
/// (messages before `first` are all acknowledged).
static void publish_range(const void *context, long first, long end, long window) {
    const struct message *messages = context;
    long sent = first;
    for (;;) {
        long done = acknowledged_now();
        if (done >= end) return;
        while (sent < end && sent - done < window) {
            const struct message *m = &messages[sent++];
            int status = mosquitto_publish_v5(client, NULL, "bench/c/update", m->payload_length, m->payload, 1, false,
                                              m->properties);
            if (status != MOSQ_ERR_SUCCESS) {
                fprintf(stderr, "mqtt-libmosquitto-peer: publish: %s\n", mosquitto_strerror(status));
                exit(1);
            }
        }
        wait_beyond(done);
    }
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: mqtt-libmosquitto-peer PORT COUNT pages|stream PREFIX [WINDOW [loop|thread "
                        "[nagle|nodelay]]]\n");
        return 64;
    }
    int port = atoi(argv[1]);
    long count = atol(argv[2]);
    int pages = strcmp(argv[3], "pages") == 0;
    long window = argc > 5 ? atol(argv[5]) : 1000;
    threaded = argc > 6 && strcmp(argv[6], "thread") == 0;
    int nodelay = argc > 7 && strcmp(argv[7], "nodelay") == 0;
    if (count < 1 || window < 1) return 64;
    long warm_up = 500;
    struct message *messages = bench_make_messages(make, sizeof *messages, warm_up, count, argv[4]);

    mosquitto_lib_init();
    char client_id[64];
    snprintf(client_id, sizeof client_id, "bench-%.50s", argv[4]);
    client = mosquitto_new(client_id, true, NULL);
    if (!client) return 1;
    mosquitto_int_option(client, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5);
    mosquitto_int_option(client, MOSQ_OPT_TCP_NODELAY, nodelay);
    mosquitto_max_inflight_messages_set(client, (unsigned)window);
    mosquitto_connect_v5_callback_set(client, on_connect);
    mosquitto_publish_v5_callback_set(client, on_publish);
    if (mosquitto_connect_bind_v5(client, "127.0.0.1", port, 60, NULL, NULL) != MOSQ_ERR_SUCCESS) {
        fprintf(stderr, "mqtt-libmosquitto-peer: cannot connect to port %d\n", port);
        return 1;
    }
    if (threaded) {
        if (mosquitto_loop_start(client) != MOSQ_ERR_SUCCESS) return 1;
        pthread_mutex_lock(&lock);
        while (connected == 0) pthread_cond_wait(&changed, &lock);
        pthread_mutex_unlock(&lock);
    } else {
        while (connected == 0) {
            if (mosquitto_loop(client, 1000, 1) != MOSQ_ERR_SUCCESS) break;
        }
    }
    if (connected != 1) {
        fprintf(stderr, "mqtt-libmosquitto-peer: the broker refused the connection\n");
        return 1;
    }

    bench_drive(publish_range, messages, warm_up, count, pages, window, &failures);
    mosquitto_disconnect_v5(client, 0, NULL);
    if (threaded) {
        mosquitto_loop_stop(client, false);
    }
    mosquitto_destroy(client);
    mosquitto_lib_cleanup();
    return failures ? 1 : 0;
}
