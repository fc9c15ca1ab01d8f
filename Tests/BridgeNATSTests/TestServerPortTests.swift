import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

/// The ports test servers get. Under AddressSanitizer the third node of a cluster was given the port the second
/// node's routes already listened on (`freeLoopbackPort` released each port at once and the kernel handed the same
/// one out twice); the node could not bind it and exited, yet `NATSServer.start` saw the port accept a connection
/// (the other node's route listener) and returned: the test failed three minutes later on a cluster of two.
@Suite struct TestServerPortTests {
    /// No port is handed out twice in one test process, however often the kernel repeats itself.
    @Test func freeLoopbackPortsAreNeverRepeated() throws {
        var seen = Set<Int>()
        for _ in 0..<3000 {
            let port = try freeLoopbackPort()
            #expect(seen.insert(port).inserted, "port \(port) handed out twice")
        }
    }

    /// A server whose port another process took in the meantime does not start, even though something accepts
    /// connections on that port.
    @Test func aNATSServerWhosePortIsTakenDoesNotStart() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "nats-taken")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try NATSServer(name: "taken", in: directory)
        let address = try #require(SocketAddress(ipAddress: "127.0.0.1", port: server.port))
        let squatter = try ListeningSocket(binding: address)
        defer { withExtendedLifetime(squatter) {} }
        #expect(throws: NATSServerError.self) { try server.start() }
    }
}
