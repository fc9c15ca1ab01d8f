// The ceiling peer of the `amqp-sink` benchmark: librabbitmq (Debian's rabbitmq-c, the library the bridge's AMQP
// client wraps) publishing what the bridge's AMQP sink publishes, with nothing else: persistent messages with
// message_id = the event id, content_type application/json, the headers type, collection, key and event, mandatory,
// the ~450-byte event JSON as body, on one channel in confirm mode, against the same broker. RabbitMQ's own load
// tool (PerfTest) is not packaged here (no Debian package, not on PyPI), so this stands in for it: the broker's rate
// for these publishes with confirms when the client costs as little as C makes it. See BENCHMARKS.md, "AMQP sink".
//
//     cc -O2 -o amqp-librabbitmq-peer Benchmarks/amqp_librabbitmq_peer.c $(pkg-config --cflags --libs librabbitmq)
//     amqp-librabbitmq-peer PORT COUNT pages|stream EXCHANGE PREFIX [WINDOW]
//
// Logs in as guest/guest to vhost "/" on 127.0.0.1:PORT and publishes to EXCHANGE with the routing key
// articles.update (the sink's default template for these events). After a warm-up of 500 messages: pages, 500
// published, then every confirm awaited, then the next 500 (activity mode's page barrier); stream, published while
// fewer than WINDOW (default 1000, the sink's max_in_flight) are unconfirmed, confirms taken as they come. Prints one
// JSON object: messages_per_second, cpu_seconds (this process, timed part), failures (nacks and returns).
#include <amqp.h>
#include <amqp_framing.h>
#include <amqp_tcp_socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_peer.h"

static void fail(const char *what, amqp_rpc_reply_t reply) {
    if (reply.reply_type == AMQP_RESPONSE_NORMAL) return;
    fprintf(stderr, "amqp-librabbitmq-peer: %s failed (reply type %d, library error %s)\n", what, reply.reply_type,
            amqp_error_string2(reply.library_error));
    exit(1);
}

/// One message's id, item key and body, made before the timed part (as the benchmark's events are).
struct message {
    char id[96], key[16], *body;
    int body_length;
};

static void make(void *message, long index, const char *prefix) {
    struct message *m = message;
    char line[1024];
    snprintf(m->key, sizeof m->key, "item-%ld", index % 1000);
    snprintf(m->id, sizeof m->id, "%s_%08ld", prefix, index);
    m->body_length = bench_event_line(line, sizeof line, m->id, m->key, index);
    m->body = strdup(line);
}

static amqp_connection_state_t connection;
static amqp_bytes_t exchange;
static const amqp_bytes_t routing_key = {15, "articles.update"};

static void publish(const struct message *m) {
    amqp_table_entry_t headers[4] = {
        {amqp_cstring_bytes("type"), {AMQP_FIELD_KIND_UTF8, {.bytes = amqp_cstring_bytes("directus.items.update")}}},
        {amqp_cstring_bytes("collection"), {AMQP_FIELD_KIND_UTF8, {.bytes = amqp_cstring_bytes("articles")}}},
        {amqp_cstring_bytes("key"), {AMQP_FIELD_KIND_UTF8, {.bytes = amqp_cstring_bytes(m->key)}}},
        {amqp_cstring_bytes("event"), {AMQP_FIELD_KIND_UTF8, {.bytes = amqp_cstring_bytes("update")}}},
    };
    amqp_basic_properties_t properties;
    memset(&properties, 0, sizeof properties);
    properties._flags = AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_DELIVERY_MODE_FLAG | AMQP_BASIC_MESSAGE_ID_FLAG |
                        AMQP_BASIC_HEADERS_FLAG;
    properties.content_type = amqp_cstring_bytes("application/json");
    properties.delivery_mode = 2;
    properties.message_id = amqp_cstring_bytes(m->id);
    properties.headers.num_entries = 4;
    properties.headers.entries = headers;
    amqp_bytes_t body = {(size_t)m->body_length, m->body};
    int status = amqp_basic_publish(connection, 1, exchange, routing_key, 1, 0, &properties, body);
    if (status != AMQP_STATUS_OK) {
        fprintf(stderr, "amqp-librabbitmq-peer: publish: %s\n", amqp_error_string2(status));
        exit(1);
    }
}

static char *confirmed;         // confirmed[tag] for delivery tags 1...total
static long confirmed_below = 1; // every tag below it is confirmed
static long failures = 0;

static void mark(long tag) {
    confirmed[tag] = 1;
    while (confirmed[confirmed_below]) confirmed_below++;
}

/// Waits for one frame (blocking when `block`, else only if one is buffered or readable now) and takes a confirm or
/// return from it; 0 when nothing was there.
static int take_frame(int block) {
    amqp_frame_t frame;
    struct timeval zero = {0, 0};
    int status = amqp_simple_wait_frame_noblock(connection, &frame, block ? NULL : &zero);
    if (status == AMQP_STATUS_TIMEOUT) return 0;
    if (status != AMQP_STATUS_OK) {
        fprintf(stderr, "amqp-librabbitmq-peer: reading: %s\n", amqp_error_string2(status));
        exit(1);
    }
    if (frame.frame_type != AMQP_FRAME_METHOD) return 1;
    switch (frame.payload.method.id) {
    case AMQP_BASIC_NACK_METHOD:
        failures++;
        __attribute__((fallthrough));  // a nacked message is answered too
    case AMQP_BASIC_ACK_METHOD: {
        // basic.ack and basic.nack share the layout of their first two fields.
        amqp_basic_ack_t *ack = (amqp_basic_ack_t *)frame.payload.method.decoded;
        if (ack->multiple) {
            for (long tag = confirmed_below; tag <= (long)ack->delivery_tag; tag++) confirmed[tag] = 1;
        }
        mark((long)ack->delivery_tag);
        return 1;
    }
    case AMQP_BASIC_RETURN_METHOD: {
        failures++;
        amqp_message_t returned;
        fail("reading a returned message", amqp_read_message(connection, frame.channel, &returned, 0));
        amqp_destroy_message(&returned);
        return 1;
    }
    default:
        fprintf(stderr, "amqp-librabbitmq-peer: the broker sent method 0x%08x\n", frame.payload.method.id);
        exit(1);
    }
}

/// Publishes messages [first, end), at most `window` unconfirmed, then waits for every confirm up to `end`.
static void publish_range(const void *context, long first, long end, long window) {
    const struct message *messages = context;
    long sent = first;
    while (confirmed_below <= end) {
        while (sent < end && (sent + 1) - confirmed_below < window) publish(&messages[sent++]);
        // One frame waited for, then every frame already there: the window is topped up per read, not per confirm.
        take_frame(1);
        while (take_frame(0)) {}
        amqp_maybe_release_buffers(connection);  // the decoded frames' memory, once nothing is buffered
    }
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: amqp-librabbitmq-peer PORT COUNT pages|stream EXCHANGE PREFIX [WINDOW]\n");
        return 64;
    }
    int port = atoi(argv[1]);
    long count = atol(argv[2]);
    int pages = strcmp(argv[3], "pages") == 0;
    exchange = amqp_cstring_bytes(argv[4]);
    long window = argc > 6 ? atol(argv[6]) : 1000;
    if (count < 1 || window < 1) return 64;
    long warm_up = 500, total = warm_up + count;
    struct message *messages = bench_make_messages(make, sizeof *messages, warm_up, count, argv[5]);
    confirmed = calloc((size_t)total + 2, 1);

    connection = amqp_new_connection();
    amqp_socket_t *socket = amqp_tcp_socket_new(connection);
    if (!socket || amqp_socket_open(socket, "127.0.0.1", port) != AMQP_STATUS_OK) {
        fprintf(stderr, "amqp-librabbitmq-peer: cannot connect to port %d\n", port);
        return 1;
    }
    fail("login", amqp_login(connection, "/", 0, 131072, 0, AMQP_SASL_METHOD_PLAIN, "guest", "guest"));
    amqp_channel_open(connection, 1);
    fail("channel.open", amqp_get_rpc_reply(connection));
    amqp_confirm_select(connection, 1);
    fail("confirm.select", amqp_get_rpc_reply(connection));

    bench_drive(publish_range, messages, warm_up, count, pages, window, &failures);
    amqp_connection_close(connection, AMQP_REPLY_SUCCESS);
    amqp_destroy_connection(connection);
    return failures ? 1 : 0;
}
