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

#endif
