#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

extension SocketAddress {
    /// Lends the C socket address (`sockaddr_in` or `sockaddr_in6` bytes) and its length to a call in another
    /// module, e.g. a C library's bind option. Raw so that callers need not share this module's C imports.
    /// - Warning: The pointer is valid only inside `body`; do not keep it.
    public func withUnsafeSocketAddressBytes<T>(_ body: (UnsafeRawPointer, Int) throws -> T) rethrows -> T {
        try withSocketAddress { pointer, length in try body(UnsafeRawPointer(pointer), Int(length)) }
    }

    /// Whether this is the IPv6 wildcard address `::` (listening on it can accept IPv4 too).
    public var isIPv6Wildcard: Bool { isIPv6 && ipAddress == "::" }
}
