import BridgeSystem
import Synchronization

/// Every port `freeLoopbackPort` handed out in this process.
private let handedOut = Mutex<Set<Int>>([])

/// A loopback port nothing listens on right now: the kernel's choice for port 0, released at once (a server started
/// a moment later binds it; a client connecting to it is refused). Never the same port twice in one process: the
/// kernel hands a released port out again readily (hundreds of repeats in 3 000 calls), and two servers of one test
/// given the same port cannot both bind it.
public func freeLoopbackPort() throws -> Int {
    for _ in 0..<1000 {
        let port = try ListeningSocket(binding: SocketAddress(ipAddress: "127.0.0.1", port: 0)!).port
        if handedOut.withLock({ $0.insert(port).inserted }) { return port }
    }
    throw FreePortError()
}

/// The kernel kept choosing ports this process had handed out already.
public struct FreePortError: Error, CustomStringConvertible {
    public var description: String { "no loopback port left that this test process has not handed out before" }
}
