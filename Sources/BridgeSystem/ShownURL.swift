/// The one way the bridge shows a URL anywhere — logs, `status`, `check`, `/readyz`, metrics, error messages:
/// `scheme://host:port`, never user information, path, query or fragment, which often carry credentials (a Slack or
/// Discord hook's token is its path). README.md, "How URLs are shown".
package enum ShownURL {
    /// `url` as shown: `https://hooks.example.com:443`. A URL without a port gets its scheme's (`http`/`ws` 80,
    /// `https`/`wss` 443, `nats`/`tls` 4222); text without `scheme://` is taken as an authority (`host:port`, as
    /// a Kafka broker is written).
    package static func of(_ url: String) -> String {
        let text = Substring(url)
        let schemeEnd = text.firstRange(of: "://")
        let scheme = schemeEnd.map { text[..<$0.lowerBound].lowercased() }
        var authority = text[(schemeEnd?.upperBound ?? text.startIndex)...]
        if let end = authority.firstIndex(where: { "/?#".contains($0) }) { authority = authority[..<end] }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        guard let scheme else { return String(authority) }
        return scheme + "://" + withPort(authority, scheme: scheme)
    }

    /// `scheme://host:port` from its parts (an IPv6 host without brackets gets them).
    package static func of(scheme: String, host: String, port: Int) -> String {
        scheme.lowercased() + "://" + (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }

    /// `text` with every URL in it (`scheme://…` up to a space or a quote) shown as `of` shows it: for texts the
    /// bridge does not write itself that may quote a URL, such as curl's error messages.
    package static func scrubbing(_ text: String) -> String {
        guard text.contains("://") else { return text }
        var output = ""
        var rest = Substring(text)
        while let separator = rest.firstRange(of: "://") {
            let schemeStart =
                rest[..<separator.lowerBound].lastIndex { !isSchemeCharacter($0) }.map { rest.index(after: $0) }
                ?? rest.startIndex
            guard schemeStart < separator.lowerBound else {  // no scheme: not a URL
                output += rest[..<separator.upperBound]
                rest = rest[separator.upperBound...]
                continue
            }
            var end = rest[separator.upperBound...].firstIndex(where: endsURL) ?? rest.endIndex
            // A URL in brackets or parentheses (`[https://host/path]`) leaves the closing one in the text.
            if schemeStart > rest.startIndex, let closer = closers[rest[rest.index(before: schemeStart)]],
                end > separator.upperBound, rest[rest.index(before: end)] == closer
            {
                end = rest.index(before: end)
            }
            output += rest[..<schemeStart]
            output += of(String(rest[schemeStart..<end]))
            rest = rest[end...]
        }
        return output + rest
    }

    private static func withPort(_ authority: Substring, scheme: String) -> String {
        let hasPort = authority.hasPrefix("[") ? authority.contains("]:") : authority.contains(":")
        guard !hasPort, let port = defaultPorts[scheme] else { return String(authority) }
        return "\(authority):\(port)"
    }

    private static let defaultPorts = [
        "http": 80, "ws": 80, "https": 443, "wss": 443, "nats": 4222, "tls": 4222, "redis": 6379, "rediss": 6379,
        "amqp": 5672, "amqps": 5671, "mqtt": 1883, "mqtts": 8883,
    ]

    private static let closers: [Character: Character] = ["[": "]", "(": ")"]

    private static func isSchemeCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || "+-.".contains(character))
    }

    private static func endsURL(_ character: Character) -> Bool {
        character.isWhitespace || "\"'<>`".contains(character) || character.unicodeScalars.first!.value < 0x20
    }
}
