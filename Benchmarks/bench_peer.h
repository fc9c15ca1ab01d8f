// What the C peers of the broker benchmarks (redis_hiredis_peer.c, amqp_librabbitmq_peer.c, jetstream_libnats_peer.c,
// mqtt_libmosquitto_peer.c; http_libcurl_peer.c uses the clocks only) share: their clocks, the drive of the publishing peers, and the benchmark's event, so
// that each peer sends byte for byte what `BrokerBenchmarks.makeEvents` gives the sink.
#ifndef BENCH_PEER_H
#define BENCH_PEER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/// Seconds on the monotonic clock.
static double bench_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/// This process's CPU time so far (user + system), in seconds.
static double bench_cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

/// Event `index` of the benchmark (an `update` of item `key` of `articles`, id `id`, ~450 bytes of JSON) written
/// into `line`; returns its length.
static inline int bench_event_line(char *line, size_t capacity, const char *id, const char *key, long index) {
    char body[300] = "";
    for (int i = 0; i < 22; i++) strcat(body, "lorem ipsum ");
    return snprintf(line, capacity,
                    "{\"id\":\"%s\",\"type\":\"directus.items.update\",\"collection\":\"articles\","
                    "\"event\":\"update\",\"key\":\"%s\",\"seq\":%ld,\"data\":{\"id\":\"%s\",\"title\":"
                    "\"Article %ld\",\"body\":\"%s\",\"tags\":[\"a\",\"b\"],\"rating\":4.5,\"draft\":null}}",
                    id, key, index, key, index, body);
}

/// The broker peers' messages, made before the timed part (as the benchmark's events are): `warm_up` of the
/// warm-up (ids `warm_PREFIX_…`), then `count` timed ones (ids `PREFIX_…`), each made by `make` into an element of
/// `size` bytes of the returned array.
static inline void *bench_make_messages(void (*make)(void *message, long index, const char *prefix), size_t size,
                                        long warm_up, long count, const char *prefix) {
    char *messages = calloc((size_t)(warm_up + count), size), warm_prefix[48];
    snprintf(warm_prefix, sizeof warm_prefix, "warm_%.40s", prefix);
    for (long i = 0; i < warm_up + count; i++) {
        make(messages + (size_t)i * size, i < warm_up ? i : i - warm_up, i < warm_up ? warm_prefix : prefix);
    }
    return messages;
}

/// The broker peers' drive: the warm-up [0, warm_up) untimed, then messages [warm_up, warm_up + count) in pages of
/// 500 (each acknowledged before the next) or one stream, timed; `range(context, first, end, window)` sends
/// [first, end) with at most `window` unacknowledged and returns once all are acknowledged. Prints the peer's JSON
/// result line (`failures` read after the timed part).
static inline void bench_drive(void (*range)(const void *context, long first, long end, long window),
                               const void *context, long warm_up, long count, int pages, long window,
                               const long *failures) {
    long total = warm_up + count;
    range(context, 0, warm_up, window);
    double cpu_before = bench_cpu_seconds(), start = bench_now();
    long page = pages ? 500 : count;
    for (long first = warm_up; first < total; first += page) {
        range(context, first, first + page < total ? first + page : total, window);
    }
    double elapsed = bench_now() - start, cpu = bench_cpu_seconds() - cpu_before;
    printf("{\"messages_per_second\": %.1f, \"cpu_seconds\": %.4f, \"failures\": %ld}\n", count / elapsed, cpu,
           *failures);
}

#endif
