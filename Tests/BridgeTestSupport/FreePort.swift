import BridgeSystem

/// A loopback port nothing listens on right now: the kernel's choice for port 0, released at once (a server started
/// a moment later binds it; a client connecting to it is refused).
public func freeLoopbackPort() throws -> Int {
    try ListeningSocket(binding: SocketAddress(ipAddress: "127.0.0.1", port: 0)!).port
}
