import BridgeSystem

/// The server addresses the broker sinks and the shared state list: a Kafka broker `host:port`, a NATS server URL
/// `nats://[user[:password]@]host[:port]` or `tls://…`. Checked when the config is read, so that a typo is a
/// configuration error naming the entry rather than a connection the client library retries forever.
package enum ServerAddress {
    /// Why `text` is not a Kafka broker `host:port` (port 1…65535, an IPv6 host in brackets), or nil when it is.
    package static func kafkaBrokerProblem(_ text: String) -> String? {
        if hasControlCharacters(text) { return controlCharacters }
        if text.contains("://") { return "it has a scheme (librdkafka takes host:port; TLS is set in properties)" }
        return hostPortProblem(Substring(text), portRequired: true)
    }

    /// Why `text` is not a NATS server URL (`nats://` or `tls://`, an optional user information, a host, an optional
    /// port 1…65535, nothing after it), or nil when it is. The reason never repeats the user information.
    package static func natsURLProblem(_ text: String) -> String? {
        // Credentials may be written into the URL: a line break there would reach the protocol line they go in.
        if hasControlCharacters(text) { return controlCharacters }
        guard let schemeEnd = text.firstRange(of: "://"),
            ["nats", "tls"].contains(text[..<schemeEnd.lowerBound])
        else { return "it must start with nats:// or tls://" }
        var authority = text[schemeEnd.upperBound...]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if authority.contains(where: { "/?#".contains($0) }) {
            return "it has a path or query (a server URL is scheme://host:port)"
        }
        return hostPortProblem(authority, portRequired: false)
    }

    /// The configuration message for a `servers` entry `text` of `field` that is not a NATS server URL (credentials in
    /// it redacted), or nil when it is one.
    package static func natsURLIssue(_ text: String, field: String) -> String? {
        natsURLProblem(text).map { "\(field): \"\(ShownURL.of(text))\" is not a NATS server URL: \($0)" }
    }

    private static let controlCharacters = "it has spaces or control characters"

    private static func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F }
    }

    private static func hostPortProblem(_ text: Substring, portRequired: Bool) -> String? {
        switch HTTPURL.parseHostPort(text, portRequired: portRequired, portZeroAllowed: false) {
        case .failure(let problem): return "it \(problem.reason)"
        case .success: return nil
        }
    }
}
