internal import BridgeSystem

extension NATSSettings {
    /// The host name a TLS server's certificate must name (`natsOptions_SetExpectedHostname`): the one host of every
    /// configured server, when they share one name. nil when they name several hosts (libnats checks one name for
    /// all connections; the CA check still holds) or an IP address (whose certificates name the address, which
    /// OpenSSL's host check does not match).
    package var expectedHostname: String? {
        let hosts = Set(servers.compactMap(Self.host(of:)).map { $0.lowercased() })
        guard hosts.count == 1, let host = hosts.first, SocketAddress(ipAddress: host, port: 0) == nil else {
            return nil
        }
        return host
    }

    /// The host of `scheme://[user@]host[:port][/…]`, without brackets; nil when there is none.
    private static func host(of url: String) -> String? {
        var authority = Substring(url)
        if let scheme = authority.firstRange(of: "://") { authority = authority[scheme.upperBound...] }
        if let end = authority.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) {
            authority = authority[..<end]
        }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            return String(authority[authority.index(after: authority.startIndex)..<close])
        }
        if let colon = authority.lastIndex(of: ":") { authority = authority[..<colon] }
        return authority.isEmpty ? nil : String(authority)
    }
}
