// librabbitmq (rabbitmq-c, AMQP 0-9-1) for Swift. Its frames and properties are C unions and tables, which Swift
// reads clumsily; these helpers (prefix camqp_) build a publish's properties and reduce each incoming frame to what
// the publisher needs: an ack, a nack, a returned message's id, or why the channel or connection closed. Every
// length copied out of a frame is bounded by the destination buffer.
#ifndef CRABBITMQ_SHIM_H
#define CRABBITMQ_SHIM_H

#include <amqp.h>
#include <amqp_framing.h>
#include <amqp_ssl_socket.h>
#include <amqp_tcp_socket.h>
#include <string.h>
#include <sys/time.h>

/// What one incoming frame meant for a publisher.
typedef enum {
    CAMQP_EVENT_NONE = 0,        ///< nothing arrived before the timeout
    CAMQP_EVENT_ACK = 1,         ///< basic.ack: tag (and every tag below it when multiple)
    CAMQP_EVENT_NACK = 2,        ///< basic.nack: the broker lost the message(s)
    CAMQP_EVENT_RETURN = 3,      ///< basic.return: text holds the returned message's message_id, code the reason
    CAMQP_EVENT_CHANNEL_CLOSED = 4,    ///< channel.close: code and text say why (404: no such exchange)
    CAMQP_EVENT_CONNECTION_CLOSED = 5, ///< connection.close: code and text say why
    CAMQP_EVENT_OTHER = 6,       ///< a frame the publisher ignores (heartbeat, another method)
    CAMQP_EVENT_ERROR = 7,       ///< the connection failed: code is librabbitmq's status
    CAMQP_EVENT_BLOCKED = 8,     ///< connection.blocked: the broker reads no more publishes (text: its reason)
    CAMQP_EVENT_UNBLOCKED = 9,   ///< connection.unblocked: it reads them again
} camqp_event_kind;

typedef struct {
    camqp_event_kind kind;
    uint64_t tag;
    int multiple;
    int code;
    char text[256];
} camqp_event;

static inline void camqp_copy(char *target, size_t capacity, amqp_bytes_t bytes) {
    size_t length = bytes.len < capacity - 1 ? bytes.len : capacity - 1;
    if (length > 0 && bytes.bytes != NULL) memcpy(target, bytes.bytes, length);
    target[length] = '\0';
}

/// Waits up to timeout_ms for one frame and reduces it to an event.
static inline void camqp_next_event(amqp_connection_state_t connection, amqp_channel_t channel, int timeout_ms,
                                    camqp_event *event) {
    memset(event, 0, sizeof(*event));
    struct timeval timeout = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    amqp_frame_t frame;
    int status = amqp_simple_wait_frame_noblock(connection, &frame, &timeout);
    if (status == AMQP_STATUS_TIMEOUT) return;
    if (status != AMQP_STATUS_OK) {
        event->kind = CAMQP_EVENT_ERROR;
        event->code = status;
        return;
    }
    if (frame.frame_type != AMQP_FRAME_METHOD) {
        event->kind = CAMQP_EVENT_OTHER;
        return;
    }
    switch (frame.payload.method.id) {
    case AMQP_BASIC_ACK_METHOD: {
        amqp_basic_ack_t *ack = (amqp_basic_ack_t *)frame.payload.method.decoded;
        event->kind = CAMQP_EVENT_ACK;
        event->tag = ack->delivery_tag;
        event->multiple = ack->multiple;
        return;
    }
    case AMQP_BASIC_NACK_METHOD: {
        amqp_basic_nack_t *nack = (amqp_basic_nack_t *)frame.payload.method.decoded;
        event->kind = CAMQP_EVENT_NACK;
        event->tag = nack->delivery_tag;
        event->multiple = nack->multiple;
        return;
    }
    case AMQP_BASIC_RETURN_METHOD: {
        amqp_basic_return_t *returned = (amqp_basic_return_t *)frame.payload.method.decoded;
        event->kind = CAMQP_EVENT_RETURN;
        event->code = returned->reply_code;
        // The returned message (header and body frames) follows at once; its message_id names the event.
        amqp_message_t message;
        amqp_rpc_reply_t reply = amqp_read_message(connection, frame.channel, &message, 0);
        if (reply.reply_type != AMQP_RESPONSE_NORMAL) {
            event->kind = CAMQP_EVENT_ERROR;
            event->code = reply.library_error != 0 ? reply.library_error : AMQP_STATUS_UNEXPECTED_STATE;
            return;
        }
        if (message.properties._flags & AMQP_BASIC_MESSAGE_ID_FLAG) {
            camqp_copy(event->text, sizeof(event->text), message.properties.message_id);
        }
        amqp_destroy_message(&message);
        return;
    }
    case AMQP_CHANNEL_CLOSE_METHOD: {
        amqp_channel_close_t *close = (amqp_channel_close_t *)frame.payload.method.decoded;
        event->kind = CAMQP_EVENT_CHANNEL_CLOSED;
        event->code = close->reply_code;
        camqp_copy(event->text, sizeof(event->text), close->reply_text);
        amqp_channel_close_ok_t ok;
        amqp_send_method(connection, frame.channel, AMQP_CHANNEL_CLOSE_OK_METHOD, &ok);
        return;
    }
    case AMQP_CONNECTION_CLOSE_METHOD: {
        amqp_connection_close_t *close = (amqp_connection_close_t *)frame.payload.method.decoded;
        event->kind = CAMQP_EVENT_CONNECTION_CLOSED;
        event->code = close->reply_code;
        camqp_copy(event->text, sizeof(event->text), close->reply_text);
        amqp_connection_close_ok_t ok;
        amqp_send_method(connection, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &ok);
        return;
    }
    case AMQP_CONNECTION_BLOCKED_METHOD: {
        amqp_connection_blocked_t *blocked = (amqp_connection_blocked_t *)frame.payload.method.decoded;
        event->kind = CAMQP_EVENT_BLOCKED;
        camqp_copy(event->text, sizeof(event->text), blocked->reason);
        return;
    }
    case AMQP_CONNECTION_UNBLOCKED_METHOD:
        event->kind = CAMQP_EVENT_UNBLOCKED;
        return;
    default:
        event->kind = CAMQP_EVENT_OTHER;
        (void)channel;
        return;
    }
}

/// Why an RPC (login, channel.open, confirm.select) failed: its kind (0 normal, else failed), the server's code and
/// text, or librabbitmq's status.
static inline int camqp_reply_failure(amqp_rpc_reply_t reply, int *code, char *text, size_t capacity) {
    text[0] = '\0';
    *code = 0;
    switch (reply.reply_type) {
    case AMQP_RESPONSE_NORMAL:
        return 0;
    case AMQP_RESPONSE_NONE:
        strncpy(text, "missing reply", capacity - 1);
        text[capacity - 1] = '\0';
        return 1;
    case AMQP_RESPONSE_LIBRARY_EXCEPTION:
        *code = reply.library_error;
        strncpy(text, amqp_error_string2(reply.library_error), capacity - 1);
        text[capacity - 1] = '\0';
        return 2;
    case AMQP_RESPONSE_SERVER_EXCEPTION:
        if (reply.reply.id == AMQP_CONNECTION_CLOSE_METHOD) {
            amqp_connection_close_t *close = (amqp_connection_close_t *)reply.reply.decoded;
            *code = close->reply_code;
            camqp_copy(text, capacity, close->reply_text);
        } else if (reply.reply.id == AMQP_CHANNEL_CLOSE_METHOD) {
            amqp_channel_close_t *close = (amqp_channel_close_t *)reply.reply.decoded;
            *code = close->reply_code;
            camqp_copy(text, capacity, close->reply_text);
        }
        return 3;
    }
    return 1;
}

/// Connects `socket` (TCP, and TLS for an SSL socket) within timeout_ms, which also bounds each later RPC.
static inline int camqp_open(amqp_connection_state_t connection, amqp_socket_t *socket, const char *host, int port,
                             int timeout_ms) {
    struct timeval timeout = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    int status = amqp_socket_open_noblock(socket, host, port, &timeout);
    if (status == AMQP_STATUS_OK) amqp_set_rpc_timeout(connection, &timeout);
    return status;
}

/// amqp_login (variadic in C) with SASL PLAIN, no channel limit and 128 KiB frames, telling the broker that the
/// client understands connection.blocked (librabbitmq merges it into its own capabilities): RabbitMQ then says when
/// a memory or disk alarm stops it reading publishes, instead of going silent.
static inline amqp_rpc_reply_t camqp_login_plain(amqp_connection_state_t connection, const char *vhost, int heartbeat,
                                                 const char *user, const char *password) {
    amqp_table_entry_t capability;
    capability.key = amqp_cstring_bytes("connection.blocked");
    capability.value.kind = AMQP_FIELD_KIND_BOOLEAN;
    capability.value.value.boolean = 1;
    amqp_table_entry_t capabilities;
    capabilities.key = amqp_cstring_bytes("capabilities");
    capabilities.value.kind = AMQP_FIELD_KIND_TABLE;
    capabilities.value.value.table.num_entries = 1;
    capabilities.value.value.table.entries = &capability;
    amqp_table_t properties = {1, &capabilities};
    return amqp_login_with_properties(connection, vhost, 0, 131072, heartbeat, &properties, AMQP_SASL_METHOD_PLAIN,
                                      user, password);
}

/// basic.publish of a persistent message with content_type application/json, message_id, and string headers
/// (names[i] = values[i], count of them), mandatory.
static inline int camqp_publish(amqp_connection_state_t connection, amqp_channel_t channel, amqp_bytes_t exchange,
                                amqp_bytes_t routing_key, amqp_bytes_t message_id, const amqp_bytes_t *names,
                                const amqp_bytes_t *values, int count, amqp_bytes_t body) {
    amqp_table_entry_t entries[16];
    if (count > 16) count = 16;
    for (int i = 0; i < count; i++) {
        entries[i].key = names[i];
        entries[i].value.kind = AMQP_FIELD_KIND_UTF8;
        entries[i].value.value.bytes = values[i];
    }
    amqp_basic_properties_t properties;
    memset(&properties, 0, sizeof(properties));
    properties._flags = AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_DELIVERY_MODE_FLAG | AMQP_BASIC_MESSAGE_ID_FLAG |
                        AMQP_BASIC_HEADERS_FLAG;
    properties.content_type = amqp_cstring_bytes("application/json");
    properties.delivery_mode = 2;  // persistent
    properties.message_id = message_id;
    properties.headers.num_entries = count;
    properties.headers.entries = entries;
    return amqp_basic_publish(connection, channel, exchange, routing_key, 1, 0, &properties, body);
}

#endif
