// The ceiling peer of the `jetstream-sink` benchmark: libnats (Debian's libnats-dev, the library BridgeNATS wraps)
// publishing what the bridge's JetStream sink publishes, with nothing else: to the subject bench.articles.update
// (the benchmark's template for these events), the header Nats-Msg-Id = the event id, the ~450-byte event JSON as
// body, into the stream the benchmark made (file storage, the same duplicate window), through libnats's own
// asynchronous JetStream publisher. What it costs per acknowledged publish is the library's share; the server's is
// measured beside it by the benchmark. See BENCHMARKS.md, "Broker sinks".
//
//     cc -O2 -o jetstream-libnats-peer Benchmarks/jetstream_libnats_peer.c $(pkg-config --cflags --libs libnats)
//     jetstream-libnats-peer URL COUNT pages|stream PREFIX [WINDOW]
//
// After a warm-up of 500 messages: pages, 500 published asynchronously, then every acknowledgement awaited, then
// the next 500 (activity mode's page barrier); stream, published asynchronously with at most WINDOW (default 10000,
// the sink's max_outstanding) unacknowledged (libnats's MaxPending), every acknowledgement awaited at the end.
// Prints one JSON object: messages_per_second, cpu_seconds (this process, all its threads, timed part), failures
// (negative acknowledgements and publishes without an answer).
#include <nats/nats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_peer.h"

/// One message's id and body, made before the timed part (as the benchmark's events are).
struct message {
    char id[96], *body;
    int body_length;
};

static void make(void *message, long index, const char *prefix) {
    struct message *m = message;
    char line[1024], key[16];
    snprintf(key, sizeof key, "item-%ld", index % 1000);
    snprintf(m->id, sizeof m->id, "%s_%08ld", prefix, index);
    m->body_length = bench_event_line(line, sizeof line, m->id, key, index);
    m->body = strdup(line);
}

static jsCtx *js;
static long failures = 0;  // written by libnats's acknowledgement thread, read after js_PublishAsyncComplete

static void check(const char *what, natsStatus status) {
    if (status == NATS_OK) return;
    fprintf(stderr, "jetstream-libnats-peer: %s: %s (%s)\n", what, natsStatus_GetText(status), nats_GetLastError(NULL));
    exit(1);
}

/// An acknowledgement (or its failure) of one asynchronous publish; the message is ours to destroy.
static void acknowledged(jsCtx *context, natsMsg *msg, jsPubAck *ack, jsPubAckErr *error, void *closure) {
    (void)context;
    (void)closure;
    if (ack == NULL || error != NULL) failures++;
    natsMsg_Destroy(msg);
}

/// Publishes messages [first, end) asynchronously (libnats holds the window: MaxPending), then waits for every
/// acknowledgement.
static void publish_range(const void *context, long first, long end, long window) {
    (void)window;
    const struct message *messages = context;
    for (long i = first; i < end; i++) {
        natsMsg *msg = NULL;
        check("natsMsg_Create",
              natsMsg_Create(&msg, "bench.articles.update", NULL, messages[i].body, messages[i].body_length));
        check("natsMsgHeader_Set", natsMsgHeader_Set(msg, "Nats-Msg-Id", messages[i].id));
        // On success libnats owns the message (and sets msg to NULL); the acknowledgement handler destroys it.
        check("js_PublishMsgAsync", js_PublishMsgAsync(js, &msg, NULL));
    }
    jsPubOptions options;
    jsPubOptions_Init(&options);
    options.MaxWait = 120000;
    check("js_PublishAsyncComplete", js_PublishAsyncComplete(js, &options));
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: jetstream-libnats-peer URL COUNT pages|stream PREFIX [WINDOW]\n");
        return 64;
    }
    long count = atol(argv[2]);
    int pages = strcmp(argv[3], "pages") == 0;
    long window = argc > 5 ? atol(argv[5]) : 10000;
    if (count < 1 || window < 1) return 64;
    long warm_up = 500;
    struct message *messages = bench_make_messages(make, sizeof *messages, warm_up, count, argv[4]);

    natsConnection *connection = NULL;
    check("connect", natsConnection_ConnectTo(&connection, argv[1]));
    jsOptions options;
    jsOptions_Init(&options);
    options.PublishAsync.MaxPending = window;
    options.PublishAsync.AckHandler = acknowledged;
    check("JetStream context", natsConnection_JetStream(&js, connection, &options));

    bench_drive(publish_range, messages, warm_up, count, pages, window, &failures);
    jsCtx_Destroy(js);
    natsConnection_Destroy(connection);
    return failures ? 1 : 0;
}
