// OpenSSL is told, before main and before any library that uses it initialises it (libcurl, librdkafka, libnats,
// libmosquitto, librabbitmq, BridgeTLS), not to free its state at exit (OPENSSL_INIT_NO_ATEXIT). The first
// initialisation decides this for the whole process, hence a constructor.
//
// Why: by default OPENSSL_cleanup runs as an atexit handler while other threads may still run. It throws away every
// thread's list of stop handlers without calling them and deletes the thread-local keys, so a thread that used
// OpenSSL and ends after it (a connection thread finishing while the process exits) keeps its random generators and
// error queue without any owner: LeakSanitizer reports them as direct leaks from CRYPTO_zalloc, and a thread still
// inside OpenSSL at that moment uses freed memory. Left to the kernel, nothing is freed under a running thread.
// Tests/sanitizers/openssl_exit_check.c shows both outcomes; docs/RELIABILITY.md "Suppressions".
#include "openssl_init.h"

#include <openssl/crypto.h>

static int keeps_state_at_exit = 0;

__attribute__((constructor)) static void copenssl_init_before_main(void) {
    keeps_state_at_exit = OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL) == 1;
}

int copenssl_init_keeps_state_at_exit(void) {
    return keeps_state_at_exit;
}
