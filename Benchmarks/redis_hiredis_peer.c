// The peer of the `redis-sink` benchmark: libhiredis (Debian's, the C client most Redis clients wrap) doing the
// appends the bridge's Redis sink does, with nothing else: the same dedup script (loaded from SCRIPT_FILE, which the
// benchmark writes from the sink's own source), the same EVALSHA arguments (the stream, the dedup key
// `directus-bridge:dedup:<stream>:<id>`, the window of 86400 s, MAXLEN 0) and the same six fields (id, type,
// collection, key, event, and the ~450-byte event JSON as payload), against the same server. See BENCHMARKS.md,
// "Redis sink".
//
//     cc -O2 -o redis-hiredis-peer Benchmarks/redis_hiredis_peer.c $(pkg-config --cflags --libs hiredis)
//     redis-hiredis-peer PORT COUNT pages|stream SCRIPT_FILE PREFIX [WINDOW]
//
// pages: 500 appends pipelined, then every answer read, then the next 500 (activity mode's page barrier). stream:
// appends written while fewer than WINDOW (default 1000, the sink's max_in_flight) are unanswered, answers read as
// they come (each wait for an answer writes every append made since the last, then takes every answer read). Prints one JSON object: messages_per_second, cpu_seconds (this process, timed part), failures.
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_peer.h"

/// One append's arguments, made before the timed part (as the benchmark's events are).
struct append {
    char id[32], key[16], dedup[96], *payload;
    int payload_length;
};

static const char *stream = "directus.articles";

static void make(struct append *a, long index, const char *prefix) {
    char payload[1024];
    snprintf(a->key, sizeof a->key, "item-%ld", index % 1000);
    snprintf(a->id, sizeof a->id, "%s_%08ld", prefix, index);
    snprintf(a->dedup, sizeof a->dedup, "directus-bridge:dedup:%s:%s", stream, a->id);
    a->payload_length = bench_event_line(payload, sizeof payload, a->id, a->key, index);
    a->payload = strdup(payload);
}

static void send_append(redisContext *c, const char *sha, const struct append *a) {
    const char *argv[19] = {"EVALSHA", sha, "2", stream, a->dedup, "86400", "0",
                            "id", a->id, "type", "directus.items.update", "collection", "articles",
                            "key", a->key, "event", "update", "payload", a->payload};
    size_t lengths[19];
    for (int i = 0; i < 19; i++) lengths[i] = strlen(argv[i]);
    lengths[18] = (size_t)a->payload_length;
    if (redisAppendCommandArgv(c, 19, argv, lengths) != REDIS_OK) {
        fprintf(stderr, "redis-hiredis-peer: %s\n", c->errstr);
        exit(1);
    }
}

/// 1 unless `reply` is the script's {1, entry id} (appended); frees it.
static long check_answer(redisReply *reply) {
    long failed = !(reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 &&
                    reply->element[0]->type == REDIS_REPLY_INTEGER && reply->element[0]->integer == 1);
    if (failed && reply->type == REDIS_REPLY_ERROR) fprintf(stderr, "redis-hiredis-peer: %s\n", reply->str);
    freeReplyObject(reply);
    return failed;
}

/// Waits for one answer (writing what was appended first) and checks it.
static long read_answer(redisContext *c) {
    redisReply *reply = NULL;
    if (redisGetReply(c, (void **)&reply) != REDIS_OK || reply == NULL) {
        fprintf(stderr, "redis-hiredis-peer: %s\n", c->errstr);
        exit(1);
    }
    return check_answer(reply);
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: redis-hiredis-peer PORT COUNT pages|stream SCRIPT_FILE PREFIX [WINDOW]\n");
        return 64;
    }
    int port = atoi(argv[1]);
    long count = atol(argv[2]);
    int pages = strcmp(argv[3], "pages") == 0;
    long window = argc > 6 ? atol(argv[6]) : 1000;
    FILE *file = fopen(argv[4], "r");
    if (!file) return perror(argv[4]), 1;
    static char script[8192];
    size_t script_length = fread(script, 1, sizeof script - 1, file);
    fclose(file);

    struct append *appends = calloc((size_t)count, sizeof *appends);
    for (long i = 0; i < count; i++) make(&appends[i], i, argv[5]);
    redisContext *c = redisConnect("127.0.0.1", port);
    if (!c || c->err) {
        fprintf(stderr, "redis-hiredis-peer: cannot connect: %s\n", c ? c->errstr : "no memory");
        return 1;
    }
    redisReply *loaded = redisCommand(c, "SCRIPT LOAD %b", script, script_length);
    if (!loaded || loaded->type != REDIS_REPLY_STRING) {
        fprintf(stderr, "redis-hiredis-peer: SCRIPT LOAD failed\n");
        return 1;
    }
    char sha[64];
    snprintf(sha, sizeof sha, "%s", loaded->str);
    freeReplyObject(loaded);

    long failures = 0, sent = 0, answered = 0;
    double cpu_before = bench_cpu_seconds(), start = bench_now();
    if (pages) {
        while (sent < count) {
            long page_end = sent + 500 < count ? sent + 500 : count;
            for (; sent < page_end; sent++) send_append(c, sha, &appends[sent]);
            for (; answered < sent; answered++) failures += read_answer(c);
        }
    } else {
        while (answered < count) {
            while (sent < count && sent - answered < window) send_append(c, sha, &appends[sent++]);
            // One answer waited for (which writes what was appended), then every answer already read: the window
            // is topped up in one write, not one append per answer.
            failures += read_answer(c);
            answered++;
            redisReply *reply = NULL;
            while (answered < sent && redisReaderGetReply(c->reader, (void **)&reply) == REDIS_OK && reply) {
                failures += check_answer(reply);
                answered++;
                reply = NULL;
            }
        }
    }
    double elapsed = bench_now() - start, cpu = bench_cpu_seconds() - cpu_before;
    printf("{\"messages_per_second\": %.1f, \"cpu_seconds\": %.4f, \"failures\": %ld}\n", count / elapsed, cpu,
           failures);
    redisFree(c);
    return failures ? 1 : 0;
}
