// Wrappers for OpenSSL APIs that are macros (and so are not imported into Swift). Prefix: copenssl_.
#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/x509v3.h>
#include <openssl/core_names.h>
#include <openssl/params.h>

static inline long copenssl_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}
static inline int copenssl_ctx_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}
static inline long copenssl_ctx_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}
static inline void copenssl_free(void *pointer) {
    OPENSSL_free(pointer);
}
static inline int copenssl_err_get_lib(unsigned long code) { return ERR_GET_LIB(code); }
static inline int copenssl_err_get_reason(unsigned long code) { return ERR_GET_REASON(code); }

// SSL_OP_* are built with the SSL_OP_BIT() function-like macro, which Swift does not import.
// No renegotiation: SSL_write could otherwise need to read, which breaks the one-reader/one-writer model.
// Ignore unexpected EOF: WebSocket has its own close handshake, and servers often drop TCP without close_notify.
static inline uint64_t copenssl_client_options(void) {
    return SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_COMPRESSION;
}
// Partial writes and a moving write buffer: a non-blocking SSL_write may take part of a buffer, and the retry
// after WANT_WRITE may pass a different pointer.
static inline long copenssl_client_modes(void) {
    return SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER;
}
// Keys an EVP_MAC_CTX for HMAC-SHA256 (OSSL_PARAM arrays are awkward to build from Swift).
static inline int copenssl_hmac_sha256_init(EVP_MAC_CTX *ctx, const unsigned char *key, size_t key_length) {
    OSSL_PARAM params[2];
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0);
    params[1] = OSSL_PARAM_construct_end();
    return EVP_MAC_init(ctx, key, key_length, params);
}

// Starts a new message on a context keyed by copenssl_hmac_sha256_init, with the key and digest it holds. Without
// parameters: passing the digest's name again looked the digest up in OpenSSL's method store for every message.
static inline int copenssl_hmac_restart(EVP_MAC_CTX *ctx) {
    return EVP_MAC_init(ctx, NULL, 0, NULL);
}

#endif
