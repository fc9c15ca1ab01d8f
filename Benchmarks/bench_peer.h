// What the C peers of the broker benchmarks (redis_hiredis_peer.c, amqp_librabbitmq_peer.c,
// mqtt_libmosquitto_peer.c) share: their clocks and the benchmark's event, so that each peer sends byte for byte what
// `BrokerBenchmarks.makeEvents` gives the sink.
#ifndef BENCH_PEER_H
#define BENCH_PEER_H

#include <stdio.h>
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
static int bench_event_line(char *line, size_t capacity, const char *id, const char *key, long index) {
    char body[300] = "";
    for (int i = 0; i < 22; i++) strcat(body, "lorem ipsum ");
    return snprintf(line, capacity,
                    "{\"id\":\"%s\",\"type\":\"directus.items.update\",\"collection\":\"articles\","
                    "\"event\":\"update\",\"key\":\"%s\",\"seq\":%ld,\"data\":{\"id\":\"%s\",\"title\":"
                    "\"Article %ld\",\"body\":\"%s\",\"tags\":[\"a\",\"b\"],\"rating\":4.5,\"draft\":null}}",
                    id, key, index, key, index, body);
}

#endif
