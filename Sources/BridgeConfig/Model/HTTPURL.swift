import BridgeSystem

/// An absolute `http://` or `https://` URL, parsed just enough to derive the socket URL and to connect.
public struct HTTPURL: Sendable, Equatable, CustomStringConvertible {
    /// True for `https`.
    public var isTLS: Bool
    /// The host without IPv6 brackets (`::1`, `example.com`, `127.0.0.1`).
    public var host: String
    /// The port as written, or nil when the URL has none (see `effectivePort`).
    public var port: Int?
    /// The path as written (`""`, `/`, `/cms/`).
    public var path: String
    /// The query without `?`, or nil.
    public var query: String?

    /// `http` or `https`.
    public var scheme: String { isTLS ? "https" : "http" }

    /// `port`, or 443/80 by scheme.
    public var effectivePort: Int { port ?? (isTLS ? 443 : 80) }

    /// `host[:port]` as it goes back into a URL (IPv6 hosts in brackets).
    public var authority: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return port.map { "\(shownHost):\($0)" } ?? shownHost
    }

    /// The path with trailing slashes removed (`""` for the root), ready for appending `/auth/login`.
    public var pathWithoutTrailingSlash: String {
        var trimmed = Substring(path)
        while trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        return String(trimmed)
    }

    /// The URL as the bridge shows it anywhere (`ShownURL`): `https://host:443`, without the path or query, which
    /// may carry a token.
    public var shown: String { ShownURL.of(scheme: scheme, host: host, port: effectivePort) }

    /// The URL as text (scheme lower-cased, otherwise as written): what requests go to, never what is shown.
    public var description: String {
        scheme + "://" + authority + path + (query.map { "?" + $0 } ?? "")
    }

    /// Parses `text`; nil when it is not an absolute http(s) URL (use `parse` for the reason).
    public init?(_ text: String) {
        guard case .success(let url) = Self.parse(text) else { return nil }
        self = url
    }

    private init(isTLS: Bool, host: String, port: Int?, path: String, query: String?) {
        self.isTLS = isTLS
        self.host = host
        self.port = port
        self.path = path
        self.query = query
    }

    /// Why a text is not an http(s) URL, phrased to follow "url ".
    package struct Problem: Error, Sendable, Equatable {
        /// The reason ("must start with http:// or https://").
        package var reason: String
    }

    /// Parses `text` or says what is wrong with it.
    package static func parse(_ text: String) -> Result<HTTPURL, Problem> {
        func fail(_ reason: String) -> Result<HTTPURL, Problem> { .failure(Problem(reason: reason)) }
        guard let schemeEnd = text.firstRange(of: "://") else {
            return fail("must be an absolute URL starting with http:// or https://")
        }
        let isTLS: Bool
        switch text[..<schemeEnd.lowerBound].lowercased() {
        case "http": isTLS = false
        case "https": isTLS = true
        case "ws", "wss": return fail("must be the http:// or https:// URL (the WebSocket URL is derived from it)")
        default: return fail("must start with http:// or https://")
        }
        if text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
            return fail("must not contain spaces or control characters")
        }
        var rest = text[schemeEnd.upperBound...]
        if rest.contains("#") { return fail("must not have a #fragment") }
        var query: String? = nil
        if let mark = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: mark)...])
            rest = rest[..<mark]
        }
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let path = String(rest[authorityEnd...])
        if authority.contains("@") {
            return fail("must not contain credentials (user:password@); use directus.auth or headers instead")
        }
        switch parseHostPort(authority, portRequired: false) {
        case .failure(let problem): return .failure(problem)
        case .success(let (host, port)):
            return .success(HTTPURL(isTLS: isTLS, host: host, port: port, path: path, query: query))
        }
    }

    /// Splits `host[:port]` or `[v6]:port`; the port must be 1…65535, or 0…65535 where `portZeroAllowed` (by default
    /// where a port is required: a listen address, where 0 picks a free port).
    package static func parseHostPort(_ text: Substring, portRequired: Bool, portZeroAllowed: Bool? = nil)
        -> Result<(String, Int?), Problem>
    {
        let lowestPort = (portZeroAllowed ?? portRequired) ? 0 : 1
        func fail(_ reason: String) -> Result<(String, Int?), Problem> { .failure(Problem(reason: reason)) }
        var host: Substring
        var portText: Substring? = nil
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return fail("has an IPv6 address without \"]\"") }
            host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return fail("has text after the IPv6 address that is not :port") }
                portText = after.dropFirst()
            }
            guard host.contains(":"), host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." || $0 == "%" })
            else { return fail("has an invalid IPv6 address \"[\(host)]\"") }
        } else {
            if let colon = text.lastIndex(of: ":") {
                host = text[..<colon]
                portText = text[text.index(after: colon)...]
                if host.contains(":") { return fail("has an IPv6 address that is not in brackets (write [::1]:9464)") }
            } else {
                host = text
            }
            let allowed = host.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || "-._~%".contains($0) }
            guard allowed else { return fail("has an invalid host \"\(host)\"") }
        }
        if host.isEmpty { return fail("has no host") }
        guard let portText else {
            return portRequired ? fail("has no port") : .success((String(host), nil))
        }
        guard let port = Int(portText), portText.allSatisfy(\.isASCIIDigit), (lowestPort...65535).contains(port)
        else { return fail("has an invalid port \"\(portText)\" (allowed: \(lowestPort)…65535)") }
        return .success((String(host), port))
    }
}

/// A `host:port` to listen on (`http.listen`): `127.0.0.1:9464`, `[::1]:9464`, `localhost:0`.
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// The host name or address, IPv6 without brackets.
    public var host: String
    /// The port, 0…65535 (0 picks a free port).
    public var port: Int

    /// Creates an address.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `host:port`, IPv6 hosts in brackets.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Parses `host:port`; `problem` says why not.
    package static func parse(_ text: String) -> Result<ListenAddress, HTTPURL.Problem> {
        if !text.isEmpty, text.allSatisfy(\.isASCIIDigit) {
            return .failure(
                HTTPURL.Problem(reason: "has no host (write 127.0.0.1:\(text), or 0.0.0.0:\(text) for all)")
            )
        }
        return HTTPURL.parseHostPort(Substring(text), portRequired: true).map {
            ListenAddress(host: $0.0, port: $0.1 ?? 0)
        }
    }
}

extension Character {
    /// 0–9 only.
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
