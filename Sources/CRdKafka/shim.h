// librdkafka for Swift: rd_kafka_producev is variadic and its arguments are RD_KAFKA_V_* macros, which Swift can
// neither call nor import; RD_KAFKA_PARTITION_UA is a cast macro. Prefix: crdkafka_.
#ifndef CRDKAFKA_SHIM_H
#define CRDKAFKA_SHIM_H

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

/// Enqueues one message on `topic` (any partition: the partitioner hashes the key), copying key and value.
/// `headers` may be NULL. On success librdkafka owns `headers`; on failure the caller still does (producev's rule).
/// `opaque` comes back as the delivery report's `_private`.
static inline rd_kafka_resp_err_t crdkafka_produce(rd_kafka_t *rk, rd_kafka_topic_t *topic,
                                                   const void *key, size_t key_len,
                                                   const void *value, size_t value_len,
                                                   rd_kafka_headers_t *headers, void *opaque) {
    if (headers == NULL) {
        return rd_kafka_producev(rk, RD_KAFKA_V_RKT(topic), RD_KAFKA_V_PARTITION(RD_KAFKA_PARTITION_UA),
                                 RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(key, key_len),
                                 RD_KAFKA_V_VALUE((void *)value, value_len), RD_KAFKA_V_OPAQUE(opaque),
                                 RD_KAFKA_V_END);
    }
    return rd_kafka_producev(rk, RD_KAFKA_V_RKT(topic), RD_KAFKA_V_PARTITION(RD_KAFKA_PARTITION_UA),
                             RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(key, key_len),
                             RD_KAFKA_V_VALUE((void *)value, value_len), RD_KAFKA_V_HEADERS(headers),
                             RD_KAFKA_V_OPAQUE(opaque), RD_KAFKA_V_END);
}

#endif
