import BridgeJSON
import BridgeSystem
import BridgeTLS

/// The signed test request `check --send-test-event` POSTs to a webhook: an event-shaped body with
/// `type: directus.bridge.test` (so receivers can recognise and ignore it) and the Standard Webhooks headers of
/// contract.md "The webhook request".
///
/// Signing follows the contract on its own here (HMAC-SHA256 over `<id>.<timestamp>.<body>`, key from a `whsec_`
/// secret's base64 or the secret's UTF-8 bytes, one `v1,` signature per secret); the webhook sink signs the same
/// way for real deliveries.
struct WebhookTestEvent {
    /// `evt_test_<uuid v7>`, the `webhook-id`.
    var id: String
    /// The JSON body.
    var body: [UInt8]
    /// The unix time of the attempt, the `webhook-timestamp`.
    var timestamp: Int64

    /// A test event for `collection` (the first subscription's) at `now`.
    init(collection: String, now: Timestamp = .now()) {
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
        body = bytes
    }

    /// `v1,<sig>` for each secret, space-separated; nil without secrets (the request goes unsigned).
    func signature(secrets: [String]) -> String? {
        Self.signature(id: id, timestamp: timestamp, body: body, secrets: secrets)
    }

    /// `v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>` per secret, space-separated; nil without secrets.
    static func signature(id: String, timestamp: Int64, body: [UInt8], secrets: [String]) -> String? {
        guard !secrets.isEmpty else { return nil }
        var message = Array("\(id).\(timestamp).".utf8)
        message += body
        return secrets.map { secret in
            "v1," + Crypto.base64Encode(Crypto.hmacSHA256(key: Self.key(of: secret), message: message))
        }.joined(separator: " ")
    }

    /// The HMAC key of a secret: the base64-decoded rest of `whsec_…`, else the secret's UTF-8 bytes.
    static func key(of secret: String) -> [UInt8] {
        if secret.hasPrefix("whsec_"), let decoded = Crypto.base64Decode(String(secret.dropFirst(6))) {
            return decoded
        }
        return Array(secret.utf8)
    }
}
