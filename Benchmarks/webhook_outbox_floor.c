// The floor of the webhook sink's design, in C (`webhook-delivery`): what the same work costs with none of the
// bridge's code. Each event is committed to a SQLite write-ahead outbox before it is sent (the same schema, WAL,
// synchronous=NORMAL, 100 rows per transaction, `INSERT OR IGNORE` under the unique index on the id), sent from memory
// as a Standard Webhooks POST (HMAC-SHA256 signature, the same five headers, a time limit per request) through
// libcurl's multi interface at a fixed number in flight, and its row deleted once answered 2xx (32 rows per statement,
// one transaction per 2 ms of answers). Three threads, as the bridge has at least: the feeder (intake), the sender
// (libcurl), the writer (deletes), sharing one SQLite connection under a mutex. No scheduler, no retries, no metrics.
//
//     webhook-outbox-floor URL CONCURRENCY TOTAL DIRECTORY
//
// After a warm-up of min(TOTAL / 10, 1000) events it feeds TOTAL, timed from the first insert until the outbox is
// empty, and prints one JSON line as the other peers do: {"messages_per_second": R, "cpu_seconds": S, "failures": F}
// (F: transfers that failed or were not 2xx; they are deleted too). DIRECTORY gets `floor.db` and its WAL.
#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <pthread.h>
#include <sqlite3.h>

#include "bench_peer.h"

enum { BATCH = 100, DELETE_CHUNK = 32, BODY_CAPACITY = 512, ID_CAPACITY = 32 };

/// One event: its id and body, made before the timed part; `seq` is its row once inserted.
typedef struct {
    char id[ID_CAPACITY];
    char body[BODY_CAPACITY];
    int body_length;
    sqlite3_int64 seq;
} Event;

/// A first-in first-out list of event indexes handed between two threads under `lock`.
typedef struct {
    long *items;
    long head, tail, capacity;
} Queue;

static void queue_push(Queue *queue, long item) {
    if (queue->tail == queue->capacity) {
        long count = queue->tail - queue->head;
        if (queue->head > 0) {
            memmove(queue->items, queue->items + queue->head, (size_t)count * sizeof(long));
        } else {
            queue->capacity = queue->capacity * 2 + 1024;
            queue->items = realloc(queue->items, (size_t)queue->capacity * sizeof(long));
        }
        queue->head = 0;
        queue->tail = count;
    }
    queue->items[queue->tail++] = item;
}

static struct {
    const char *url;
    int concurrency;
    Event *events;
    sqlite3 *db;
    pthread_mutex_t db_lock;
    sqlite3_stmt *insert, *delete_chunk;
    CURLM *multi;
    // Feeder → sender: inserted events (the queue and `stopping` under `send_lock`; the sender is woken through curl).
    pthread_mutex_t send_lock;
    Queue to_send;
    int stopping;
    // Sender → writer: answered events (under `write_lock`; `writer_waits` says whether to signal; `writer_stopping`
    // ends the writer once nothing is left).
    pthread_mutex_t write_lock;
    pthread_cond_t write_ready;
    Queue to_delete;
    int writer_waits, writer_stopping;
    // Writer → feeder: rows deleted so far (under `write_lock`, signalled on `deleted_changed`).
    long deleted;
    pthread_cond_t deleted_changed;
    long failures;
} floor_state;

static void check_sqlite(int code, const char *what) {
    if (code != SQLITE_OK && code != SQLITE_DONE && code != SQLITE_ROW) {
        fprintf(stderr, "webhook-outbox-floor: %s: %s\n", what, sqlite3_errmsg(floor_state.db));
        exit(1);
    }
}

static void open_outbox(const char *directory) {
    char path[4096];
    snprintf(path, sizeof path, "%s/floor.db", directory);
    check_sqlite(sqlite3_open(path, &floor_state.db), "open");
    check_sqlite(sqlite3_exec(floor_state.db,
                              "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                              "CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT,"
                              " sink TEXT NOT NULL, event_id TEXT NOT NULL, collection TEXT NOT NULL,"
                              " item_key TEXT NOT NULL, body BLOB NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,"
                              " next_attempt_at INTEGER NOT NULL, created_at INTEGER NOT NULL, last_status INTEGER,"
                              " last_error TEXT);"
                              "CREATE UNIQUE INDEX IF NOT EXISTS outbox_sink_event ON outbox(sink, event_id);",
                              NULL, NULL, NULL),
                 "schema");
    check_sqlite(sqlite3_prepare_v2(floor_state.db,
                                    "INSERT OR IGNORE INTO outbox (sink, event_id, collection, item_key, body,"
                                    " next_attempt_at, created_at) VALUES ('bench', ?, 'articles', ?, ?, ?, ?)",
                                    -1, &floor_state.insert, NULL),
                 "prepare insert");
    char sql[512] = "DELETE FROM outbox WHERE seq IN (?";
    for (int i = 1; i < DELETE_CHUNK; i++) strcat(sql, ", ?");
    strcat(sql, ")");
    check_sqlite(sqlite3_prepare_v2(floor_state.db, sql, -1, &floor_state.delete_chunk, NULL), "prepare delete");
}

// MARK: - Feeder (intake)

/// Inserts events [first, end) in transactions of BATCH and hands each committed batch to the sender.
static void feed(long first, long end) {
    char key[24];
    for (long start = first; start < end; start += BATCH) {
        long stop = start + BATCH < end ? start + BATCH : end;
        sqlite3_int64 now = (sqlite3_int64)time(NULL);
        pthread_mutex_lock(&floor_state.db_lock);
        check_sqlite(sqlite3_exec(floor_state.db, "BEGIN IMMEDIATE", NULL, NULL, NULL), "begin");
        for (long i = start; i < stop; i++) {
            Event *event = &floor_state.events[i];
            sqlite3_stmt *insert = floor_state.insert;
            int key_length = snprintf(key, sizeof key, "%ld", i);
            sqlite3_bind_text(insert, 1, event->id, -1, SQLITE_STATIC);
            sqlite3_bind_text(insert, 2, key, key_length, SQLITE_STATIC);
            sqlite3_bind_blob(insert, 3, event->body, event->body_length, SQLITE_STATIC);
            sqlite3_bind_int64(insert, 4, now);
            sqlite3_bind_int64(insert, 5, now);
            check_sqlite(sqlite3_step(insert), "insert");
            sqlite3_reset(insert);
            event->seq = sqlite3_last_insert_rowid(floor_state.db);
        }
        check_sqlite(sqlite3_exec(floor_state.db, "COMMIT", NULL, NULL, NULL), "commit");
        pthread_mutex_unlock(&floor_state.db_lock);
        pthread_mutex_lock(&floor_state.send_lock);
        for (long i = start; i < stop; i++) queue_push(&floor_state.to_send, i);
        pthread_mutex_unlock(&floor_state.send_lock);
        curl_multi_wakeup(floor_state.multi);
    }
}

/// Waits until `count` rows in all were deleted.
static void wait_deleted(long count) {
    pthread_mutex_lock(&floor_state.write_lock);
    while (floor_state.deleted < count) pthread_cond_wait(&floor_state.deleted_changed, &floor_state.write_lock);
    pthread_mutex_unlock(&floor_state.write_lock);
}

// MARK: - Sender

/// One slot in flight: its handle, the event it sends, and the header lines curl reads until the transfer ends.
typedef struct {
    CURL *handle;
    long event;
    struct curl_slist nodes[5];
    char lines[5][128];
} Slot;

static size_t discard(char *data, size_t size, size_t count, void *context) {
    (void)data;
    (void)context;
    return size * count;
}

/// `webhook-signature: v1,<base64 HMAC-SHA256(key, "id.timestamp.body")>` into `line`.
static void sign(EVP_MAC_CTX *mac, const Event *event, const char *timestamp, char *line, size_t capacity) {
    unsigned char code[32], encoded[48];
    size_t length = 0;
    EVP_MAC_init(mac, NULL, 0, NULL);  // a new message with the key the context holds
    EVP_MAC_update(mac, (const unsigned char *)event->id, strlen(event->id));
    EVP_MAC_update(mac, (const unsigned char *)".", 1);
    EVP_MAC_update(mac, (const unsigned char *)timestamp, strlen(timestamp));
    EVP_MAC_update(mac, (const unsigned char *)".", 1);
    EVP_MAC_update(mac, (const unsigned char *)event->body, (size_t)event->body_length);
    EVP_MAC_final(mac, code, &length, sizeof code);
    EVP_EncodeBlock(encoded, code, 32);
    snprintf(line, capacity, "webhook-signature: v1,%s", encoded);
}

static void start_transfer(Slot *slot, long index, EVP_MAC_CTX *mac) {
    Event *event = &floor_state.events[index];
    char timestamp[24];
    snprintf(timestamp, sizeof timestamp, "%lld", (long long)time(NULL));
    snprintf(slot->lines[0], sizeof slot->lines[0], "content-type: application/json");
    snprintf(slot->lines[1], sizeof slot->lines[1], "user-agent: directus-bridge/bench");
    snprintf(slot->lines[2], sizeof slot->lines[2], "webhook-id: %s", event->id);
    snprintf(slot->lines[3], sizeof slot->lines[3], "webhook-timestamp: %s", timestamp);
    sign(mac, event, timestamp, slot->lines[4], sizeof slot->lines[4]);
    for (int i = 0; i < 5; i++) {
        slot->nodes[i].data = slot->lines[i];
        slot->nodes[i].next = i < 4 ? &slot->nodes[i + 1] : NULL;
    }
    slot->event = index;
    curl_easy_setopt(slot->handle, CURLOPT_POSTFIELDSIZE, (long)event->body_length);
    curl_easy_setopt(slot->handle, CURLOPT_POSTFIELDS, event->body);
    curl_easy_setopt(slot->handle, CURLOPT_HTTPHEADER, slot->nodes);
    curl_easy_setopt(slot->handle, CURLOPT_TIMEOUT_MS, 15000L);
    curl_multi_add_handle(floor_state.multi, slot->handle);
}

static void *sender(void *unused) {
    (void)unused;
    int concurrency = floor_state.concurrency;
    static const unsigned char key[] = "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";  // any 32-byte key: the cost is the same
    EVP_MAC *algorithm = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MAC_CTX *mac = EVP_MAC_CTX_new(algorithm);
    OSSL_PARAM parameters[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0),
                               OSSL_PARAM_construct_end()};
    EVP_MAC_init(mac, key, 32, parameters);
    Slot *slots = calloc((size_t)concurrency, sizeof *slots);
    Slot **free_slots = calloc((size_t)concurrency, sizeof *free_slots);
    int free_count = 0;
    for (int i = 0; i < concurrency; i++) {
        CURL *handle = curl_easy_init();
        curl_easy_setopt(handle, CURLOPT_URL, floor_state.url);
        curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(handle, CURLOPT_TCP_NODELAY, 1L);
        curl_easy_setopt(handle, CURLOPT_PRIVATE, &slots[i]);
        slots[i].handle = handle;
        free_slots[free_count++] = &slots[i];
    }
    Queue pending = {0};
    Queue answered = {0};
    for (;;) {
        pthread_mutex_lock(&floor_state.send_lock);
        int stopping = floor_state.stopping;
        while (floor_state.to_send.head < floor_state.to_send.tail) {
            queue_push(&pending, floor_state.to_send.items[floor_state.to_send.head++]);
        }
        floor_state.to_send.head = floor_state.to_send.tail = 0;
        pthread_mutex_unlock(&floor_state.send_lock);
        if (stopping) break;
        while (free_count > 0 && pending.head < pending.tail) {
            start_transfer(free_slots[--free_count], pending.items[pending.head++], mac);
        }
        if (pending.head == pending.tail) pending.head = pending.tail = 0;
        int running = 0;
        curl_multi_perform(floor_state.multi, &running);
        CURLMsg *message;
        int left;
        while ((message = curl_multi_info_read(floor_state.multi, &left))) {
            if (message->msg != CURLMSG_DONE) continue;
            Slot *slot = NULL;
            long status = 0;
            curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, (char **)&slot);
            curl_easy_getinfo(message->easy_handle, CURLINFO_RESPONSE_CODE, &status);
            if (message->data.result != CURLE_OK || status < 200 || status > 299) floor_state.failures++;
            curl_multi_remove_handle(floor_state.multi, slot->handle);
            queue_push(&answered, slot->event);
            free_slots[free_count++] = slot;
        }
        if (answered.tail > 0) {
            pthread_mutex_lock(&floor_state.write_lock);
            for (long i = 0; i < answered.tail; i++) queue_push(&floor_state.to_delete, answered.items[i]);
            if (floor_state.writer_waits) pthread_cond_signal(&floor_state.write_ready);
            pthread_mutex_unlock(&floor_state.write_lock);
            answered.head = answered.tail = 0;
        }
        // Freed slots take pending events at once, not after the next socket event.
        if (free_count > 0 && pending.head < pending.tail) continue;
        curl_multi_poll(floor_state.multi, NULL, 0, 1000, NULL);
    }
    for (int i = 0; i < concurrency; i++) curl_easy_cleanup(slots[i].handle);
    free(slots);
    free(free_slots);
    free(pending.items);
    free(answered.items);
    EVP_MAC_CTX_free(mac);
    EVP_MAC_free(algorithm);
    return NULL;
}

// MARK: - Writer (deletes)

static void delete_rows(const long *indexes, long count) {
    sqlite3_stmt *statement = floor_state.delete_chunk;
    pthread_mutex_lock(&floor_state.db_lock);
    check_sqlite(sqlite3_exec(floor_state.db, "BEGIN IMMEDIATE", NULL, NULL, NULL), "begin");
    for (long start = 0; start < count; start += DELETE_CHUNK) {
        long end = start + DELETE_CHUNK < count ? start + DELETE_CHUNK : count;
        // A short chunk names its last row again in the places left (`IN` matches a row once).
        for (int place = 0; place < DELETE_CHUNK; place++) {
            long index = indexes[start + place < end ? start + place : end - 1];
            sqlite3_bind_int64(statement, place + 1, floor_state.events[index].seq);
        }
        check_sqlite(sqlite3_step(statement), "delete");
        sqlite3_reset(statement);
    }
    check_sqlite(sqlite3_exec(floor_state.db, "COMMIT", NULL, NULL, NULL), "commit");
    pthread_mutex_unlock(&floor_state.db_lock);
}

static void *writer(void *unused) {
    (void)unused;
    Queue taken = {0};
    double last_commit = 0;
    for (;;) {
        // One transaction per 2 ms of answers at most (the bridge's group commit window).
        double since = bench_now() - last_commit;
        if (since < 0.002) {
            struct timespec pause = {0, (long)((0.002 - since) * 1e9)};
            nanosleep(&pause, NULL);
        }
        pthread_mutex_lock(&floor_state.write_lock);
        while (floor_state.to_delete.tail == 0 && !floor_state.writer_stopping) {
            floor_state.writer_waits = 1;
            pthread_cond_wait(&floor_state.write_ready, &floor_state.write_lock);
            floor_state.writer_waits = 0;
        }
        if (floor_state.to_delete.tail == 0) {
            pthread_mutex_unlock(&floor_state.write_lock);
            break;
        }
        Queue swap = floor_state.to_delete;
        floor_state.to_delete = taken;
        taken = swap;
        pthread_mutex_unlock(&floor_state.write_lock);
        delete_rows(taken.items + taken.head, taken.tail - taken.head);
        last_commit = bench_now();
        pthread_mutex_lock(&floor_state.write_lock);
        floor_state.deleted += taken.tail - taken.head;
        pthread_cond_broadcast(&floor_state.deleted_changed);
        pthread_mutex_unlock(&floor_state.write_lock);
        taken.head = taken.tail = 0;
    }
    free(taken.items);
    return NULL;
}

/// The body the bridge's benchmark posts for item `index` (`WebhookDeliveryBenchmark.event`).
static void make_event(Event *event, long index) {
    snprintf(event->id, sizeof event->id, "evt_bench_%ld", index);
    char title[121];
    memset(title, 'x', 120);
    title[120] = 0;
    event->body_length = snprintf(
        event->body, sizeof event->body,
        "{\"id\":\"%s\",\"type\":\"directus.items.update\",\"event\":\"update\",\"collection\":\"articles\","
        "\"key\":\"%ld\",\"data\":{\"id\":%ld,\"title\":\"%s\"},\"origin\":\"live\",\"seq\":null,"
        "\"time\":\"2026-12-02T10:15:00.123Z\",\"received_at\":\"2026-12-02T10:15:00.125Z\","
        "\"subscription\":\"articles\"}",
        event->id, index, index, title);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s URL CONCURRENCY TOTAL DIRECTORY\n", argv[0]);
        return 64;
    }
    floor_state.url = argv[1];
    floor_state.concurrency = atoi(argv[2]);
    long total = atol(argv[3]);
    if (floor_state.concurrency < 1 || floor_state.concurrency > 4096 || total < 1) {
        fprintf(stderr, "webhook-outbox-floor: CONCURRENCY 1...4096 and TOTAL >= 1\n");
        return 64;
    }
    long warm_up = total / 10 < 1000 ? total / 10 : 1000;
    floor_state.events = calloc((size_t)(warm_up + total), sizeof(Event));
    for (long i = 0; i < warm_up; i++) make_event(&floor_state.events[i], i);
    for (long i = 0; i < total; i++) make_event(&floor_state.events[warm_up + i], 1000000 + i);

    curl_global_init(CURL_GLOBAL_DEFAULT);
    pthread_mutex_init(&floor_state.db_lock, NULL);
    pthread_mutex_init(&floor_state.send_lock, NULL);
    pthread_mutex_init(&floor_state.write_lock, NULL);
    pthread_cond_init(&floor_state.write_ready, NULL);
    pthread_cond_init(&floor_state.deleted_changed, NULL);
    open_outbox(argv[4]);
    floor_state.multi = curl_multi_init();
    curl_multi_setopt(floor_state.multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)floor_state.concurrency);
    pthread_t sender_thread, writer_thread;
    pthread_create(&sender_thread, NULL, sender, NULL);
    pthread_create(&writer_thread, NULL, writer, NULL);

    feed(0, warm_up);
    wait_deleted(warm_up);
    long failures_before = floor_state.failures;
    double cpu_before = bench_cpu_seconds(), start = bench_now();
    feed(warm_up, warm_up + total);
    wait_deleted(warm_up + total);
    double elapsed = bench_now() - start, cpu = bench_cpu_seconds() - cpu_before;
    long failures = floor_state.failures - failures_before;  // read after the writer saw every answer
    printf("{\"messages_per_second\": %.1f, \"cpu_seconds\": %.4f, \"failures\": %ld}\n", total / elapsed, cpu,
           failures);
    fflush(stdout);

    pthread_mutex_lock(&floor_state.send_lock);
    floor_state.stopping = 1;
    pthread_mutex_unlock(&floor_state.send_lock);
    curl_multi_wakeup(floor_state.multi);
    pthread_join(sender_thread, NULL);
    pthread_mutex_lock(&floor_state.write_lock);
    floor_state.writer_stopping = 1;
    pthread_cond_signal(&floor_state.write_ready);
    pthread_mutex_unlock(&floor_state.write_lock);
    pthread_join(writer_thread, NULL);
    sqlite3_finalize(floor_state.insert);
    sqlite3_finalize(floor_state.delete_chunk);
    sqlite3_close(floor_state.db);
    curl_multi_cleanup(floor_state.multi);
    curl_global_cleanup();
    free(floor_state.events);
    return failures == 0 ? 0 : 1;
}
