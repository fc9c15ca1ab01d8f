// hiredis for Swift: the bridge uses its reply parser (redisReader) only. Debian 12 ships hiredis 0.14, which has
// no TLS (hiredis_ssl came with 1.0), so BridgeRedis does its own I/O over BridgeTLS's streams and feeds the bytes
// it reads to the parser.
//
// The reader is created with the reply constructors below instead of hiredis's defaults: the same objects (freed
// by freeReplyObject), except that an array header announcing more than CHIREDIS_MAX_ELEMENTS elements is refused
// before anything is allocated for it (the default allocates the element table at once, 8 bytes per announced
// element: a hostile `*2000000000` would reserve 16 GB). A refused constructor makes the reader fail with its
// out-of-memory error, which the Swift side reports as an oversized reply.
#ifndef CHIREDIS_SHIM_H
#define CHIREDIS_SHIM_H

#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>

/// The most elements one array reply may have (the bridge's replies have at most a few).
#define CHIREDIS_MAX_ELEMENTS 4096

static inline void *chiredis_attach(const redisReadTask *task, redisReply *reply) {
    if (task->parent != NULL) {
        redisReply *parent = (redisReply *)task->parent->obj;
        parent->element[task->idx] = reply;
    }
    return reply;
}

static inline void *chiredis_create_string(const redisReadTask *task, char *bytes, size_t length) {
    redisReply *reply = (redisReply *)calloc(1, sizeof(redisReply));
    if (reply == NULL) return NULL;
    reply->type = task->type;
    reply->str = (char *)malloc(length + 1);
    if (reply->str == NULL) {
        free(reply);
        return NULL;
    }
    memcpy(reply->str, bytes, length);
    reply->str[length] = '\0';
    reply->len = length;
    return chiredis_attach(task, reply);
}

static inline void *chiredis_create_array(const redisReadTask *task, int elements) {
    if (elements < 0 || elements > CHIREDIS_MAX_ELEMENTS) return NULL;
    redisReply *reply = (redisReply *)calloc(1, sizeof(redisReply));
    if (reply == NULL) return NULL;
    reply->type = REDIS_REPLY_ARRAY;
    if (elements > 0) {
        reply->element = (redisReply **)calloc((size_t)elements, sizeof(redisReply *));
        if (reply->element == NULL) {
            free(reply);
            return NULL;
        }
    }
    reply->elements = (size_t)elements;
    return chiredis_attach(task, reply);
}

static inline void *chiredis_create_integer(const redisReadTask *task, long long value) {
    redisReply *reply = (redisReply *)calloc(1, sizeof(redisReply));
    if (reply == NULL) return NULL;
    reply->type = REDIS_REPLY_INTEGER;
    reply->integer = value;
    return chiredis_attach(task, reply);
}

static inline void *chiredis_create_nil(const redisReadTask *task) {
    redisReply *reply = (redisReply *)calloc(1, sizeof(redisReply));
    if (reply == NULL) return NULL;
    reply->type = REDIS_REPLY_NIL;
    return chiredis_attach(task, reply);
}

/// Bytes fed to the reader and not yet consumed by a complete reply.
static inline size_t chiredis_reader_pending(const redisReader *reader) {
    return reader->len - reader->pos;
}

/// A reply parser whose arrays are bounded by CHIREDIS_MAX_ELEMENTS; free it with redisReaderFree.
static inline redisReader *chiredis_reader_create(void) {
    static redisReplyObjectFunctions functions = {
        chiredis_create_string, chiredis_create_array, chiredis_create_integer, chiredis_create_nil, freeReplyObject,
    };
    return redisReaderCreateWithFunctions(&functions);
}

#endif
