#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Host name resolution through `getaddrinfo` (blocking: call it off Swift's cooperative pool).
public enum AddressResolver {
    /// The TCP addresses of `host` (a name or a numeric IPv4/IPv6 address without brackets) at `port`,
    /// in the order `getaddrinfo` prefers (RFC 6724), without duplicates.
    ///
    /// `AI_ADDRCONFIG` is deliberately not used: it hides `::1` on hosts whose only IPv6 address is loopback.
    public static func resolve(host: String, port: Int) throws(AddressResolutionError) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(host, String(port), &hints, &list)
        guard code == 0 else {
            let message = String(cString: gai_strerror(code))
            throw AddressResolutionError(host: host, code: code, message: message)
        }
        defer { freeaddrinfo(list) }  // getaddrinfo allocated the whole list; we copy what we need below.
        var addresses: [SocketAddress] = []
        var entry = list
        while let current = entry {
            if let address = current.pointee.ai_addr,
                current.pointee.ai_family == AF_INET || current.pointee.ai_family == AF_INET6
            {
                let socketAddress = SocketAddress(address, length: current.pointee.ai_addrlen)
                if !addresses.contains(socketAddress) { addresses.append(socketAddress) }
            }
            entry = current.pointee.ai_next
        }
        if addresses.isEmpty {
            throw AddressResolutionError(host: host, code: EAI_NONAME, message: "no IPv4 or IPv6 address")
        }
        return addresses
    }
}

/// `getaddrinfo` failed for a host.
public struct AddressResolutionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The name that was looked up.
    public var host: String
    /// The `EAI_*` code.
    public var code: Int32
    /// `gai_strerror` text.
    public var message: String

    /// Creates an error for `host`.
    public init(host: String, code: Int32, message: String) {
        self.host = host
        self.code = code
        self.message = message
    }

    /// `cannot resolve host: message`.
    public var description: String { "cannot resolve \(host): \(message)" }

    /// Name-service failures are retried: DNS may be down, or a container name may not exist yet.
    /// Only codes that mean a programming error are not.
    public var isRetriable: Bool {
        switch code {
        case EAI_BADFLAGS, EAI_FAMILY, EAI_SOCKTYPE, EAI_SERVICE: false
        default: true
        }
    }
}
