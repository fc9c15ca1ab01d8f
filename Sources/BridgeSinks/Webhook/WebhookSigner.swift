internal import BridgeTLS
internal import BridgeEvents

/// Signs webhook requests the Standard Webhooks way (README.md "Webhooks").
///
/// `webhook-signature: v1,<base64 HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<body>")>`; the key of a
/// `whsec_<base64>` secret is the decoded base64, any other secret is used as its UTF-8 bytes. With several
/// secrets (key rotation) each one signs and the signatures are joined with spaces, so a receiver holding either
/// the old or the new secret accepts the request.
package struct WebhookSigner: Sendable {
    /// A secret that cannot be used (a `whsec_` secret whose rest is not base64; config validation rejects it).
    package struct InvalidSecret: Error, Sendable, CustomStringConvertible {
        /// Which secret of the list (0-based); the value itself is never repeated.
        package var index: Int
        package var description: String { "secret \(index + 1): a \"whsec_\" secret must be base64 after the prefix" }
    }

    private let keys: [HMACSHA256]

    /// Prepares one HMAC key per secret; no secrets means requests go out unsigned.
    package init(secrets: [String]) throws(InvalidSecret) {
        var keys: [HMACSHA256] = []
        for (index, secret) in secrets.enumerated() {
            guard let key = Self.key(for: secret) else { throw InvalidSecret(index: index) }
            keys.append(HMACSHA256(key: key))
        }
        self.keys = keys
    }

    /// The HMAC key of `secret`: the base64-decoded rest of a `whsec_` secret, else the UTF-8 bytes; nil when a
    /// `whsec_` secret is not base64.
    package static func key(for secret: String) -> [UInt8]? {
        guard secret.hasPrefix("whsec_") else { return Array(secret.utf8) }
        return Crypto.base64Decode(String(secret.dropFirst(6)))
    }

    /// Whether requests carry a signature.
    package var isSigning: Bool { !keys.isEmpty }

    /// The `webhook-signature` value for one attempt, or nil without secrets.
    package func signature(id: String, timestamp: Int64, body: [UInt8]) -> String? {
        guard !keys.isEmpty else { return nil }
        // Built in place, each once: `"\(id).\(timestamp)."` and a header grown by `+=` allocated a string per step.
        var prefix: [UInt8] = []
        prefix.reserveCapacity(id.utf8.count + 22)
        prefix.append(contentsOf: id.utf8)
        prefix.append(UInt8(ascii: "."))
        prefix.append(contentsOf: String(timestamp).utf8)
        prefix.append(UInt8(ascii: "."))
        var header = ""
        header.reserveCapacity(keys.count * 48)
        prefix.withUnsafeBytes { prefixBytes in
            body.withUnsafeBytes { bodyBytes in
                for (index, key) in keys.enumerated() {
                    let code = key.authenticationCode(parts: [prefixBytes, bodyBytes])
                    if index > 0 { header += " " }
                    header += "v1,"
                    header += Crypto.base64Encode(code)
                }
            }
        }
        return header
    }
}
