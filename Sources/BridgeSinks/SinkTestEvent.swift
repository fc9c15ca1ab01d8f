internal import BridgeJSON
package import BridgeSystem
package import BridgeEvents

/// The test event of `check --send-test-event`, part of the sink contract (`SinkProbeContext.testEvent`): an
/// event-shaped body with `type: directus.bridge.test` (so receivers can recognise and ignore it), in the sink's
/// format, that every sink type delivers like a real event — a webhook POSTs it signed like real deliveries (with its
/// `timestamp` as `webhook-timestamp`), a broker publishes it to the first collection's topic or subject (README.md
/// "Check the setup").
package struct SinkTestEvent {
    /// `evt_test_<uuid v7>` (a webhook's `webhook-id`, a JetStream `Nats-Msg-Id`, Kafka's `id` header).
    package var id: String
    /// The JSON body.
    package var body: [UInt8]
    /// The unix time it was made (a webhook's `webhook-timestamp`).
    package var timestamp: Int64

    /// A test event for `collection` (the first subscription's) at `now`, in the sink's format (`encoder`).
    package init(collection: String, encoder: EventEncoder = .plain, now: Timestamp = .now()) {
        id = UUIDv7.random(at: now).text(prefix: "evt_test_")
        timestamp = now.unixSeconds
        var bytes: [UInt8] = Array(#"{"id":"#.utf8)
        appendJSONString(id, to: &bytes)
        bytes += Array(#","type":"directus.bridge.test","event":"test","collection":"#.utf8)
        appendJSONString(collection, to: &bytes)
        bytes += Array(#","key":"","data":{"message":"test event from directus-bridge check --send-test-event"},"#.utf8)
        bytes += Array(#""origin":"live","seq":null,"time":""#.utf8)
        now.appendRFC3339(to: &bytes)
        bytes += Array(#"","received_at":""#.utf8)
        now.appendRFC3339(to: &bytes)
        bytes += Array(#"","subscription":""}"#.utf8)
        body = encoder.encode(body: bytes, id: id, type: Self.type, subject: collection + "/", time: now)
    }

    /// The test event's `type`.
    static let type = "directus.bridge.test"

    /// `v1,<sig>` for each secret, space-separated, signed by the sink's own `WebhookSigner`; nil without secrets
    /// (the request goes unsigned) or when a secret is unusable (config validation rejects those).
    package func signature(secrets: [String]) -> String? {
        (try? WebhookSigner(secrets: secrets))?.signature(id: id, timestamp: timestamp, body: body)
    }
}
