import BridgeSystem

/// A `ws://` or `wss://` URL (RFC 6455 §3): host (name, IPv4, or IPv6 in brackets), port, path and query.
public struct WebSocketURL: Sendable, Equatable, CustomStringConvertible {
    /// `wss` (TLS) or `ws`.
    public var isSecure: Bool
    /// The host name or IP literal, without brackets (`example.com`, `127.0.0.1`, `::1`).
    public var host: String
    /// The TCP port; 80 for `ws` and 443 for `wss` unless the URL names one.
    public var port: Int
    /// The path, starting with `/` (`/` when the URL has none), still percent-encoded as given.
    public var path: String
    /// The query without `?`, as given; `nil` when there is none.
    public var query: String?

    /// Parses `text`. Throws `WebSocketError` (`.invalidURL`) saying what is wrong.
    ///
    /// Fragments are refused (RFC 6455 §3), as are user info, spaces and control characters.
    public init(_ text: String) throws {
        func invalid(_ why: String) -> WebSocketError {
            WebSocketError(.invalidURL, "invalid WebSocket URL \"\(ShownURL.of(text))\": \(why)")
        }
        var rest = Substring(text)
        guard let schemeEnd = rest.firstRange(of: "://") else { throw invalid("expected ws:// or wss://") }
        switch rest[..<schemeEnd.lowerBound].lowercased() {
        case "ws": isSecure = false
        case "wss": isSecure = true
        case let other: throw invalid("scheme \"\(other)\" is not ws or wss")
        }
        rest = rest[schemeEnd.upperBound...]
        if rest.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) { throw invalid("spaces or control characters") }
        if rest.contains("#") { throw invalid("fragments are not allowed") }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let target = rest[authorityEnd...]
        if authority.contains("@") { throw invalid("user info is not supported") }

        do {
            (host, port) = try URLAuthority.hostAndPort(authority, defaultPort: isSecure ? 443 : 80)
        } catch {
            throw invalid(error.message)
        }
        if let questionMark = target.firstIndex(of: "?") {
            path = target[..<questionMark].isEmpty ? "/" : String(target[..<questionMark])
            query = String(target[target.index(after: questionMark)...])
        } else {
            path = target.isEmpty ? "/" : String(target)
            query = nil
        }
    }

    /// Whether the host is an IPv6 literal.
    public var isIPv6Literal: Bool { host.contains(":") }

    /// The request target of the upgrade request: path plus `?query`.
    public var requestTarget: String {
        guard let query else { return path }
        return path + "?" + query
    }

    /// The `Host` header value: the host (bracketed when IPv6) and the port unless it is the default.
    public var hostHeader: String {
        let name = isIPv6Literal ? "[\(host)]" : host
        return port == (isSecure ? 443 : 80) ? name : "\(name):\(port)"
    }

    /// The URL as the bridge shows URLs (`ShownURL`): `wss://host:443`, never the path or query (an access token
    /// may travel as `?access_token=`).
    public var description: String { ShownURL.of(scheme: isSecure ? "wss" : "ws", host: host, port: port) }
}
