#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// An IPv4 or IPv6 socket address (address and port), as `getaddrinfo` returns it.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// The raw `sockaddr_in` / `sockaddr_in6` bytes.
    private let bytes: [UInt8]

    /// Wraps `length` bytes of a C socket address.
    init(_ address: UnsafePointer<sockaddr>, length: socklen_t) {
        self.bytes = Array(UnsafeRawBufferPointer(start: address, count: Int(length)))
    }

    /// Parses a numeric IPv4 (`127.0.0.1`) or IPv6 (`::1`, no brackets) address; `nil` for anything else.
    public init?(ipAddress: String, port: Int) {
        guard (0...65535).contains(port) else { return nil }
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, ipAddress, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(port).bigEndian)
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, ipAddress, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(port).bigEndian)
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
            return
        }
        return nil
    }

    /// `AF_INET` or `AF_INET6`.
    public var family: Int32 {
        bytes.withUnsafeBytes { Int32($0.loadUnaligned(fromByteOffset: 0, as: sa_family_t.self)) }
    }

    /// Whether this is an IPv6 address.
    public var isIPv6: Bool { family == AF_INET6 }

    /// The port in host byte order.
    public var port: Int {
        // sin_port and sin6_port sit at the same offset (2) in both structures.
        bytes.withUnsafeBytes { Int(UInt16(bigEndian: $0.loadUnaligned(fromByteOffset: 2, as: UInt16.self))) }
    }

    /// The numeric address without port (`127.0.0.1`, `::1`).
    public var ipAddress: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        bytes.withUnsafeBytes { raw in
            if isIPv6 {
                var address = raw.loadUnaligned(as: sockaddr_in6.self).sin6_addr
                _ = inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
            } else {
                var address = raw.loadUnaligned(as: sockaddr_in.self).sin_addr
                _ = inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
            }
        }
        let length = text.firstIndex(of: 0) ?? text.count
        return String(decoding: text[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether the address is a loopback one: 127.0.0.0/8, `::1`, or 127.0.0.0/8 mapped into IPv6.
    public var isLoopback: Bool {
        bytes.withUnsafeBytes { raw in
            if !isIPv6 {
                // sin_addr is in network byte order: its first byte is the first octet.
                return raw[4] == 127
            }
            let address = Array(raw[8..<24])  // sin6_addr
            let mapped: [UInt8] = Array(repeating: 0, count: 10) + [0xFF, 0xFF]
            return address == Array(repeating: 0, count: 15) + [1]
                || (address.starts(with: mapped) && address[12] == 127)
        }
    }

    /// Whether `host` (a URL's host, without brackets) names the local machine: `localhost` or a numeric loopback
    /// address (`isLoopback`). Other names are not resolved: what they resolve to can change.
    public static func isLoopback(host: String) -> Bool {
        let name = host.hasSuffix(".") ? String(host.dropLast()) : host
        if name.lowercased() == "localhost" { return true }
        return SocketAddress(ipAddress: name, port: 0)?.isLoopback ?? false
    }

    /// `127.0.0.1:80` or `[::1]:80`.
    public var description: String { isIPv6 ? "[\(ipAddress)]:\(port)" : "\(ipAddress):\(port)" }

    /// Lends the address to a C call such as `connect` or `bind`.
    /// - Warning: Do not escape the pointer from the closure.
    func withSocketAddress<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> T) rethrows -> T {
        try bytes.withUnsafeBytes { raw in
            try body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
    }
}
