// The ceiling of the system's librdkafka for the `kafka-sink` benchmark: the same messages (key, 4 headers, the
// ~450-byte event JSON), the same producer settings (idempotent, acks=all) and the same mock cluster (3 brokers, a
// topic of 6 partitions with replication 3, partition p led by broker p % 3 + 1, TCP_NODELAY on the listeners) and
// the same allocator setting (a fixed mmap threshold) as `bridge-benchmarks kafka-sink`, with
// nothing but librdkafka's produce call per message and its delivery-report callback counting outcomes. See
// BENCHMARKS.md, "Broker sinks", the ceiling. `bridge-benchmarks kafka-sink` runs it as a peer in the same run
// (Benchmarks/run builds it next to bridge-benchmarks as kafka-ceiling).
//
//     cc -O2 -o kafka-ceiling Benchmarks/kafka_ceiling.c $(pkg-config --cflags --libs rdkafka)
//     kafka-ceiling [COUNT [pages|stream|stream-nopoll [OUTSTANDING [outcomes] [NAME=VALUE ...]]]]
//                                                  (default 200000 pages; stream: 0 = no bound)
//
// pages: 500 produced, then rd_kafka_flush until all 500 are reported, then the next 500. stream: produce all,
// rd_kafka_poll(0) after each (as the Python peer does), waiting in rd_kafka_poll while OUTSTANDING are unreported,
// then one flush. NAME=VALUE: a librdkafka property of the producer (the benchmark's `property=`).
// `outcomes`: besides counting, each message's outcome is recorded in its batch of 500 as the sink must, for dead
// letters and redelivery (Benchmarks/kafka_ceiling_outcomes.h); in the stream a batch then starts only once the
// batches not settled hold at most OUTSTANDING - 500 messages, as the sink's `accept` waits for room. Prints on stderr
// events/s and CPU µs per event per thread group (client: the producing thread, which also serves the delivery
// reports; librdkafka: its broker threads; mock: the mock brokers), and on stdout one JSON object as the benchmark's
// peers print it: messages_per_second, cpu_seconds (the whole process over the timed part, from getrusage: client,
// librdkafka and mock, as the benchmark counts ours with its mock), failures (failed and missing delivery reports).
#include <dirent.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long delivered, failed;

static void report(rd_kafka_t *rk, const rd_kafka_message_t *message, void *opaque) {
    (void)rk;
    (void)opaque;
    if (message->err) failed++; else delivered++;
}

// `outcomes`: each message's outcome recorded in its batch, as the sink must (slots, batches, settling).
#include "kafka_ceiling_outcomes.h"

static void reportOutcome(rd_kafka_t *rk, const rd_kafka_message_t *message, void *opaque) {
    report(rk, message, opaque);
    recordOutcome(message);
}

static void quiet(const rd_kafka_t *rk, int level, const char *facility, const char *text) {
    (void)rk; (void)level; (void)facility; (void)text;
}

static void set(rd_kafka_conf_t *conf, const char *name, const char *value) {
    char error[512];
    if (rd_kafka_conf_set(conf, name, value, error, sizeof error) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "%s: %s\n", name, error);
        exit(2);
    }
}

// TCP_NODELAY on the listening sockets of these ports (as KafkaMockCluster does).
static void nodelay(const char *servers) {
    int ports[32], count = 0;
    for (const char *p = servers; p && *p && count < 32;) {
        const char *colon = strchr(p, ':');
        if (!colon) break;
        ports[count++] = atoi(colon + 1);
        p = strchr(colon, ',');
        if (p) p++;
    }
    DIR *dir = opendir("/proc/self/fd");
    struct dirent *entry;
    while (dir && (entry = readdir(dir))) {
        int fd = atoi(entry->d_name);
        struct sockaddr_in address;
        socklen_t length = sizeof address;
        int listening = 0;
        socklen_t size = sizeof listening;
        if (getsockname(fd, (struct sockaddr *)&address, &length) != 0 || address.sin_family != AF_INET) continue;
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) != 0 || !listening) continue;
        for (int i = 0; i < count; i++) {
            if (ntohs(address.sin_port) == ports[i]) {
                int on = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
            }
        }
    }
    if (dir) closedir(dir);
}

// CPU seconds of this process's threads: [0] the producing thread, [1] rdk:mock, [2] other rdk:* threads.
static void cpu(double out[3], long self) {
    out[0] = out[1] = out[2] = 0;
    DIR *dir = opendir("/proc/self/task");
    struct dirent *entry;
    double ticks = (double)sysconf(_SC_CLK_TCK);
    while (dir && (entry = readdir(dir))) {
        if (entry->d_name[0] == '.') continue;
        char path[300], text[1024];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", entry->d_name);
        FILE *file = fopen(path, "r");
        if (!file) continue;
        size_t n = fread(text, 1, sizeof text - 1, file);
        fclose(file);
        text[n] = 0;
        char *open = strchr(text, '('), *close = strrchr(text, ')');
        if (!open || !close) continue;
        *close = 0;
        unsigned long user = 0, system = 0;
        // After ") ": state, then fields 4..15; utime and stime are fields 14 and 15.
        sscanf(close + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &user, &system);
        double seconds = (user + system) / ticks;
        if (atol(entry->d_name) == self) out[0] += seconds;
        else if (strcmp(open + 1, "rdk:mock") == 0) out[1] += seconds;
        else out[2] += seconds;
    }
    if (dir) closedir(dir);
}

/// This process's CPU time so far (all its threads, user + system, finer than the ticks of /proc), in seconds.
static double process_cpu(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/// One message, made before the timed part (as the benchmark's events are).
struct message {
    char key[16], id[24], *value;
    int length;
};

static void make(struct message *message, long index, const char *prefix) {
    char body[300] = "", value[1024];
    snprintf(message->key, sizeof message->key, "item-%ld", index % 1000);
    snprintf(message->id, sizeof message->id, "%s_%08ld", prefix, index);
    for (int i = 0; i < 22; i++) strcat(body, "lorem ipsum ");
    message->length = snprintf(value, sizeof value,
                               "{\"id\":\"%s\",\"type\":\"directus.items.update\",\"collection\":\"articles\","
                               "\"event\":\"update\",\"key\":\"%s\",\"seq\":%ld,\"data\":{\"id\":\"%s\",\"title\":"
                               "\"Article %ld\",\"body\":\"%s\",\"tags\":[\"a\",\"b\"],\"rating\":4.5,\"draft\":null}}",
                               message->id, message->key, index, message->key, index, body);
    message->value = strdup(value);
}

static void produce(rd_kafka_t *rk, rd_kafka_topic_t *topic, const struct message *m, void *opaque) {
    for (;;) {
        rd_kafka_resp_err_t err = rd_kafka_producev(
            rk, RD_KAFKA_V_RKT(topic), RD_KAFKA_V_PARTITION(RD_KAFKA_PARTITION_UA), RD_KAFKA_V_OPAQUE(opaque),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(m->key, strlen(m->key)),
            RD_KAFKA_V_VALUE(m->value, (size_t)m->length), RD_KAFKA_V_HEADER("id", m->id, (ssize_t)strlen(m->id)),
            RD_KAFKA_V_HEADER("type", "directus.items.update", 21), RD_KAFKA_V_HEADER("collection", "articles", 8),
            RD_KAFKA_V_HEADER("event", "update", 6), RD_KAFKA_V_END);
        if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return;
        if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            fprintf(stderr, "produce: %s\n", rd_kafka_err2str(err));
            exit(1);
        }
        rd_kafka_poll(rk, 1);
    }
}

int main(int argc, char **argv) {
    long count = argc > 1 ? atol(argv[1]) : 200000;
    int stream = argc > 2 && strncmp(argv[2], "stream", 6) == 0;
    int pollEach = !(argc > 2 && strcmp(argv[2], "stream-nopoll") == 0);
    long bound = argc > 3 ? atol(argv[3]) : 0;
    int outcomes = argc > 4 && strcmp(argv[4], "outcomes") == 0;
    char error[512];
    // glibc's allocator as the bridge (and bridge-benchmarks) sets it: a fixed 4 MiB mmap threshold (LargeAllocations).
    mallopt(M_MMAP_THRESHOLD, 4 << 20);

    rd_kafka_conf_t *hostConf = rd_kafka_conf_new();
    set(hostConf, "log_level", "0");
    rd_kafka_conf_set_log_cb(hostConf, quiet);
    rd_kafka_t *host = rd_kafka_new(RD_KAFKA_PRODUCER, hostConf, error, sizeof error);
    rd_kafka_mock_cluster_t *cluster = rd_kafka_mock_cluster_new(host, 3);
    const char *servers = rd_kafka_mock_cluster_bootstraps(cluster);
    nodelay(servers);
    rd_kafka_mock_topic_create(cluster, "ceiling", 6, 3);
    // Partition p led by broker p % 3 + 1, as KafkaMockCluster spreads them (the mock's own choice is random).
    for (int partition = 0; partition < 6; partition++) {
        rd_kafka_mock_partition_set_leader(cluster, "ceiling", partition, partition % 3 + 1);
    }

    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    set(conf, "bootstrap.servers", servers);
    set(conf, "client.id", "directus-bridge");
    set(conf, "enable.idempotence", "true");
    set(conf, "acks", "all");
    set(conf, "message.timeout.ms", "0");
    set(conf, "queue.buffering.max.messages", "100000");
    for (int i = 4 + outcomes; i < argc; i++) {
        char *equals = strchr(argv[i], '=');
        if (!equals) {
            fprintf(stderr, "not a NAME=VALUE property: %s\n", argv[i]);
            return 64;
        }
        *equals = 0;
        set(conf, argv[i], equals + 1);
    }
    rd_kafka_conf_set_dr_msg_cb(conf, outcomes ? reportOutcome : report);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
    if (!rk) {
        fprintf(stderr, "%s\n", error);
        return 2;
    }
    rd_kafka_topic_t *topic = rd_kafka_topic_new(rk, "ceiling", NULL);

    // Warm-up: connected, partitions and leaders known.
    struct message *messages = calloc((size_t)count + 500, sizeof *messages);
    for (long i = 0; i < count; i++) make(&messages[i], i, "evt");
    for (long i = 0; i < 500; i++) make(&messages[count + i], i, "warm");
    // `outcomes`: a ring of batch records, enough for every batch the stream's bound lets be outstanding at once.
    long ringSize = bound > 0 ? bound / 500 + 2 : count / 500 + 2, nextBatch = 0;
    struct batch *ring = outcomes ? calloc((size_t)ringSize, sizeof *ring) : NULL, *batch = NULL;
    if (outcomes) batch = begin(rk, ring, ringSize, &nextBatch, 500);
    for (long i = 0; i < 500; i++) produce(rk, topic, &messages[count + i], outcomes ? slotOf(batch, i) : NULL);
    rd_kafka_flush(rk, 30000);
    delivered = failed = settledDelivered = settledFailed = 0;

    long self = syscall(SYS_gettid);
    double before[3], after[3];
    cpu(before, self);
    double processBefore = process_cpu(), start = now();
    if (stream) {
        for (long i = 0; i < count; i++) {
            if (outcomes && i % 500 == 0) {
                long size = count - i < 500 ? count - i : 500;
                while (bound > 0 && pending + size > bound) rd_kafka_poll(rk, 1);
                batch = begin(rk, ring, ringSize, &nextBatch, size);
            }
            while (bound > 0 && i - delivered - failed >= bound) rd_kafka_poll(rk, 1);
            produce(rk, topic, &messages[i], outcomes ? slotOf(batch, i % 500) : NULL);
            if (pollEach) rd_kafka_poll(rk, 0);
        }
        rd_kafka_flush(rk, 120000);
    } else {
        for (long first = 0; first < count; first += 500) {
            if (outcomes) batch = begin(rk, ring, ringSize, &nextBatch, count - first < 500 ? count - first : 500);
            for (long i = first; i < first + 500 && i < count; i++) {
                produce(rk, topic, &messages[i], outcomes ? slotOf(batch, i - first) : NULL);
            }
            rd_kafka_flush(rk, 120000);
        }
    }
    double elapsed = now() - start, processCPU = process_cpu() - processBefore;
    cpu(after, self);
    if (delivered + failed != count || failed) {
        fprintf(stderr, "delivered %ld failed %ld of %ld\n", delivered, failed, count);
    }
    // `outcomes`: what the batches settled is what counts (every batch complete, every slot delivered).
    if (outcomes && (settledDelivered + settledFailed != count || pending != 0)) {
        fprintf(stderr, "settled %ld delivered, %ld failed of %ld; %ld pending\n", settledDelivered, settledFailed,
                count, pending);
    }
    long missing = count - (outcomes ? settledDelivered : delivered);
    FILE *load = fopen("/proc/loadavg", "r");
    char loadText[64] = "?";
    if (load) {
        if (fscanf(load, "%63s", loadText) != 1) strcpy(loadText, "?");
        fclose(load);
    }
    double client = after[0] - before[0], library = after[2] - before[2], mock = after[1] - before[1];
    fprintf(stderr, "ceiling %s%s: %.0f events/s; CPU µs/event client %.2f, librdkafka %.2f, mock %.2f; load %s\n",
            stream ? "stream" : "pages", outcomes ? " with outcomes" : "", delivered / elapsed, client / count * 1e6, library / count * 1e6,
            mock / count * 1e6, loadText);
    printf("{\"messages_per_second\": %.1f, \"cpu_seconds\": %.4f, \"failures\": %ld}\n", delivered / elapsed,
           processCPU, missing);
    rd_kafka_topic_destroy(topic);
    rd_kafka_destroy(rk);
    rd_kafka_mock_cluster_destroy(cluster);
    rd_kafka_destroy(host);
    return 0;
}
