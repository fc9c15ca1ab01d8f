// The C ceiling of the webhook benchmarks (`http-multi`, `webhook-delivery`): libcurl's multi interface alone, one
// thread, POSTing the same 300-byte bodies with the same headers as the Python aiohttp sender
// (Tests/tools/http_peers/bench_sender.py) at a fixed number in flight over kept-alive connections, doing nothing
// else — no outbox, no signing, no scheduler. It is the library the bridge's HTTP engine drives, so its rate and CPU
// per request are what any sender built on libcurl can reach on this machine.
//
//     http-libcurl-peer URL CONCURRENCY TOTAL
//
// After a warm-up of min(TOTAL / 10, 1000) requests it sends TOTAL, timed, and prints one JSON line as the broker
// peers do: {"messages_per_second": R, "cpu_seconds": S, "failures": F} (F: transfers that failed or were not 2xx).
#include <curl/curl.h>
#include <poll.h>

#include "bench_peer.h"

static size_t discard(char *data, size_t size, size_t count, void *context) {
    (void)data;
    (void)context;
    return size * count;
}

/// Sends `total` requests with at most `concurrency` in flight, each handle reused for its next request so its
/// connection stays alive; counts the ones that failed.
static void send_all(CURLM *multi, CURL **handles, int concurrency, long total, long *failures) {
    long started = 0, finished = 0;
    for (int i = 0; i < concurrency && started < total; i++, started++) curl_multi_add_handle(multi, handles[i]);
    while (finished < total) {
        int running = 0;
        curl_multi_perform(multi, &running);
        CURLMsg *message;
        int left;
        while ((message = curl_multi_info_read(multi, &left))) {
            if (message->msg != CURLMSG_DONE) continue;
            CURL *handle = message->easy_handle;
            long status = 0;
            curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
            if (message->data.result != CURLE_OK || status < 200 || status > 299) (*failures)++;
            finished++;
            curl_multi_remove_handle(multi, handle);
            if (started < total) {
                curl_multi_add_handle(multi, handle);
                started++;
            }
        }
        if (finished < total) curl_multi_poll(multi, NULL, 0, 1000, NULL);
    }
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s URL CONCURRENCY TOTAL\n", argv[0]);
        return 64;
    }
    const char *url = argv[1];
    int concurrency = atoi(argv[2]);
    long total = atol(argv[3]);
    if (concurrency < 1 || concurrency > 4096 || total < 1) {
        fprintf(stderr, "http-libcurl-peer: CONCURRENCY 1...4096 and TOTAL >= 1\n");
        return 64;
    }
    // The aiohttp sender's body: {"event":"update","data":"xxx…"} of 300 bytes.
    static char body[301];
    int prefix = snprintf(body, sizeof body, "{\"event\":\"update\",\"data\":\"");
    memset(body + prefix, 'x', 300 - 28);
    snprintf(body + prefix + 300 - 28, sizeof body - (size_t)(prefix + 300 - 28), "\"}");
    size_t body_length = strlen(body);

    curl_global_init(CURL_GLOBAL_DEFAULT);
    struct curl_slist *headers = curl_slist_append(NULL, "content-type: application/json");
    headers = curl_slist_append(headers, "webhook-id: evt_bench");
    CURLM *multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)concurrency);
    CURL **handles = calloc((size_t)concurrency, sizeof *handles);
    for (int i = 0; i < concurrency; i++) {
        CURL *handle = curl_easy_init();
        curl_easy_setopt(handle, CURLOPT_URL, url);
        curl_easy_setopt(handle, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE, (long)body_length);
        curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(handle, CURLOPT_TCP_NODELAY, 1L);
        handles[i] = handle;
    }
    long failures = 0;
    long warm_up = total / 10 < 1000 ? total / 10 : 1000;
    if (warm_up > 0) send_all(multi, handles, concurrency, warm_up, &failures);
    failures = 0;
    double cpu_before = bench_cpu_seconds(), start = bench_now();
    send_all(multi, handles, concurrency, total, &failures);
    double elapsed = bench_now() - start, cpu = bench_cpu_seconds() - cpu_before;
    printf("{\"messages_per_second\": %.1f, \"cpu_seconds\": %.4f, \"failures\": %ld}\n", total / elapsed, cpu,
           failures);
    for (int i = 0; i < concurrency; i++) curl_easy_cleanup(handles[i]);
    free(handles);
    curl_multi_cleanup(multi);
    curl_slist_free_all(headers);
    curl_global_cleanup();
    return failures == 0 ? 0 : 1;
}
