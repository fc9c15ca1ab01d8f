import BridgeSystem
import Foundation
import Synchronization

/// Every port `freeLoopbackPort` handed out in this process.
private let handedOut = Mutex<Set<Int>>([])

/// A loopback port nothing listens on right now, for a server a test starts a moment later (a client connecting to it
/// before is refused). Never the same port twice in one process: two servers of one test given the same port cannot
/// both bind it.
///
/// Chosen below the kernel's ephemeral range (`net.ipv4.ip_local_port_range`) and checked by binding it: a socket bound
/// to port 0 and every outgoing connection take their ports from that range, so nothing else in the run takes this
/// one between the check and the server's bind. The kernel's own choice for port 0, used before, was an ephemeral
/// port: under load a connection or another server took it in between, and nats-server stopped with "address already
/// in use" (`LeaseKeeperTests`, 1 of 13 unit runs at load 36). Falls back to the kernel's choice when the range
/// leaves no room below it.
public func freeLoopbackPort() throws -> Int {
    let below = belowEphemeralPorts
    for _ in 0..<1000 {
        let candidate: Int
        if let below {
            candidate = Int.random(in: below)
            // Closed at once (the socket's deinit); SO_REUSEADDR lets the server bind it despite TIME_WAIT.
            guard (try? ListeningSocket(binding: SocketAddress(ipAddress: "127.0.0.1", port: candidate)!)) != nil
            else { continue }
        } else {
            candidate = try ListeningSocket(binding: SocketAddress(ipAddress: "127.0.0.1", port: 0)!).port
        }
        if handedOut.withLock({ $0.insert(candidate).inserted }) { return candidate }
    }
    throw FreePortError()
}

/// Ports from 10,000 up to the start of the kernel's ephemeral range, or nil when that leaves fewer than 1,000.
private let belowEphemeralPorts: ClosedRange<Int>? = {
    let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
    guard let first = text.split(whereSeparator: \.isWhitespace).first.flatMap({ Int($0) }), first > 11_000 else {
        return nil
    }
    return 10_000...(first - 1)
}()

/// The kernel kept choosing ports this process had handed out already.
public struct FreePortError: Error, CustomStringConvertible {
    public var description: String { "no loopback port left that this test process has not handed out before" }
}
