/// A broker URL with credentials: `scheme://[user[:password]@]host[:port][/path]` (Redis, AMQP, MQTT).
///
/// The user and password are percent-decoded (a password may hold `@`, `:` or `/` written as `%40`, `%3A`,
/// `%2F`); the path is kept as written, without its leading `/`. A query or fragment is refused: none of these
/// clients reads one, and silently ignoring an option someone wrote there would be worse. `description` shows the
/// URL as the bridge shows every URL (`ShownURL`): never the credentials.
package struct ServiceURL: Sendable, Equatable, CustomStringConvertible {
    /// The scheme, lower-cased (`redis`, `rediss`, `amqp`, …).
    package var scheme: String
    /// The host name or IP literal, without brackets.
    package var host: String
    /// The port: the URL's, else the scheme's default.
    package var port: Int
    /// The percent-decoded user name; nil when the URL has none.
    package var user: String?
    /// The percent-decoded password; nil when the URL has none.
    package var password: String?
    /// The path without its leading `/`, still percent-encoded; empty when there is none.
    package var path: String

    /// Parses `text`, accepting the schemes of `defaultPorts` (scheme → port when the URL names none). Throws
    /// `ServiceURLError` saying what is wrong, without repeating the credentials.
    package init(_ text: String, defaultPorts: [String: Int]) throws(ServiceURLError) {
        func invalid(_ why: String) -> ServiceURLError {
            ServiceURLError(message: "invalid URL \"\(ShownURL.of(text))\": \(why)")
        }
        var rest = Substring(text)
        guard let schemeEnd = rest.firstRange(of: "://") else {
            throw invalid("expected \(defaultPorts.keys.sorted().map { $0 + "://" }.joined(separator: " or "))")
        }
        scheme = rest[..<schemeEnd.lowerBound].lowercased()
        guard let defaultPort = defaultPorts[scheme] else {
            throw invalid("scheme \"\(scheme)\" is not one of \(defaultPorts.keys.sorted().joined(separator: ", "))")
        }
        rest = rest[schemeEnd.upperBound...]
        if rest.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) { throw invalid("spaces or control characters") }
        if rest.contains("?") || rest.contains("#") { throw invalid("a query or fragment is not supported") }
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        path = authorityEnd == rest.endIndex ? "" : String(rest[rest.index(after: authorityEnd)...])
        user = nil
        password = nil
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
            let colon = userInfo.firstIndex(of: ":")
            guard let name = Self.percentDecoded(userInfo[..<(colon ?? userInfo.endIndex)]) else {
                throw invalid("bad percent-encoding in the user name")
            }
            user = name.isEmpty ? nil : name
            if let colon {
                guard let secret = Self.percentDecoded(userInfo[userInfo.index(after: colon)...]) else {
                    throw invalid("bad percent-encoding in the password")
                }
                password = secret
            }
        }
        do {
            (host, port) = try URLAuthority.hostAndPort(authority, defaultPort: defaultPort)
        } catch {
            throw invalid(error.message)
        }
    }

    /// `scheme://host:port`, as the bridge shows URLs.
    package var description: String { ShownURL.of(scheme: scheme, host: host, port: port) }

    /// The percent-decoded path (nil when its encoding is broken or it is not UTF-8).
    package var decodedPath: String? { Self.percentDecoded(Substring(path)) }

    /// `text` with each `%XX` replaced by its byte; nil when a `%` is not followed by two hex digits or the result
    /// is not UTF-8.
    static func percentDecoded(_ text: Substring) -> String? {
        guard text.contains("%") else { return String(text) }
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// The host and port part of a URL's authority (RFC 3986, without user information): a host name, an IPv4
/// address, or an IPv6 address in brackets, and an optional port. Shared by every URL parser of the bridge.
package enum URLAuthority {
    /// The host (without brackets) and port of `authority`; `defaultPort` when it names none. Throws saying what is
    /// wrong.
    package static func hostAndPort(_ authority: Substring, defaultPort: Int) throws(ServiceURLError)
        -> (host: String, port: Int)
    {
        func invalid(_ why: String) -> ServiceURLError { ServiceURLError(message: why) }
        let host: String
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw invalid("unclosed [ in IPv6 address") }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("unexpected text after ]") }
                portText = after.dropFirst()
            }
            guard host.contains(":"), host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw invalid("\"\(host)\" is not an IPv6 address")
            }
        } else {
            if let colon = authority.firstIndex(of: ":") {
                host = String(authority[..<colon])
                portText = authority[authority.index(after: colon)...]
            } else {
                host = String(authority)
            }
            let allowed: (Character) -> Bool = { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." || $0 == "_" }
            guard host.allSatisfy(allowed) else {
                throw invalid("host \"\(host)\" has characters a host cannot have")
            }
        }
        if host.isEmpty { throw invalid("missing host") }
        guard let portText else { return (host, defaultPort) }
        guard !portText.isEmpty, portText.allSatisfy(\.isASCII), let value = Int(portText), (1...65535).contains(value)
        else { throw invalid("port \"\(portText)\" is not a number from 1 to 65535") }
        return (host, value)
    }
}

/// A broker URL that cannot be used; the message never contains its credentials.
package struct ServiceURLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, for a person.
    package var message: String
    /// The message.
    package var description: String { message }
}
