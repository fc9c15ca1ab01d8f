// OpenSSL's process-wide setup, made before main (openssl_init.c). Prefix: copenssl_init_.
#ifndef COPENSSL_INIT_H
#define COPENSSL_INIT_H

// 1 when OpenSSL was initialised before main with OPENSSL_INIT_NO_ATEXIT, so it keeps its state until the process
// is gone; 0 when that call failed.
int copenssl_init_keeps_state_at_exit(void);

#endif
