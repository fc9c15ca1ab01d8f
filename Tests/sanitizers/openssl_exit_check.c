// The check scripts/test.sh runs before every AddressSanitizer suite (docs/RELIABILITY.md "Suppressions"): a thread
// that used OpenSSL and ends while the process exits must not leave OpenSSL's per-thread state behind.
// OPENSSL_cleanup, OpenSSL's default atexit handler, drops every thread's stop handlers without calling them and
// deletes the thread-local keys; a thread ending after it keeps its random generators and error queue with no owner,
// which LeakSanitizer reports as direct leaks from CRYPTO_zalloc (a CI run did, once, from the test runner).
// Built twice by scripts/test.sh:
//   openssl-exit-check-default   this file alone: the leak must be reported (the check can fail)
//   openssl-exit-check-setup     with Sources/COpenSSLInit/openssl_init.c, the bridge's setup before main
//                                (OPENSSL_INIT_NO_ATEXIT): nothing may be reported
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static int wake[2], ready[2];
static pthread_t worker;

// Uses OpenSSL as a connection thread does (random bytes, a TLS context, an error queued by a CA file that is not
// there), then waits until the process is exiting.
static void *use_openssl_then_wait(void *unused) {
    (void)unused;
    unsigned char bytes[16];
    RAND_bytes(bytes, sizeof bytes);
    SSL_CTX *context = SSL_CTX_new(TLS_client_method());
    if (context != NULL) {
        SSL_CTX_load_verify_locations(context, "/nonexistent/ca.pem", NULL);
        SSL_CTX_free(context);
    }
    if (write(ready[1], "x", 1) < 0) perror("write");
    char byte;
    if (read(wake[0], &byte, 1) < 0) perror("read");
    return NULL;
}

// Registered before OpenSSL initialises, so it runs after OpenSSL's own atexit handler and before LeakSanitizer's
// (atexit handlers run last registered first; LeakSanitizer registered its own at start).
static void end_worker_during_exit(void) {
    if (write(wake[1], "x", 1) < 0) perror("write");
    pthread_join(worker, NULL);
}

int main(void) {
    if (pipe(wake) != 0 || pipe(ready) != 0) return 2;
    atexit(end_worker_during_exit);
    OPENSSL_init_ssl(0, NULL);
    if (pthread_create(&worker, NULL, use_openssl_then_wait, NULL) != 0) return 2;
    char byte;
    if (read(ready[0], &byte, 1) != 1) return 2;  // the worker has used OpenSSL
    return 0;
}
