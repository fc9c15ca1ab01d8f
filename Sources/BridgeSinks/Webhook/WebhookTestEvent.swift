package import BridgeJSON
package import BridgeSystem
package import BridgeEvents

/// The signed test request `check --send-test-event` POSTs to a webhook: an event-shaped body with
/// `type: directus.bridge.test` (so receivers can recognise and ignore it) and the Standard Webhooks headers of
/// real deliveries (README.md "Webhooks", "Check the setup").
///
/// It is signed exactly like real deliveries, by `WebhookSigner`.
package struct WebhookTestEvent {
    /// `evt_test_<uuid v7>`, the `webhook-id`.
    package var id: String
    /// The JSON body.
    package var body: [UInt8]
    /// The unix time of the attempt, the `webhook-timestamp`.
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
