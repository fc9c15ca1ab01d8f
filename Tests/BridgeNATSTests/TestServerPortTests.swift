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

    /// Below the kernel's ephemeral range: a socket bound to port 0 or an outgoing connection, which take their ports
    /// from that range, cannot take it between `freeLoopbackPort` and the server's bind (nats-server stopped with
    /// "address already in use" under load when the port was the kernel's choice for port 0).
    @Test func freeLoopbackPortsAreBelowTheEphemeralRange() throws {
        let range = try String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)
        let ephemeral = try #require(range.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) })
        try #require(ephemeral > 11_000, "this machine's ephemeral range starts at \(ephemeral)")
        for _ in 0..<200 {
            let port = try freeLoopbackPort()
            #expect(port >= 10_000 && port < ephemeral, "port \(port)")
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
