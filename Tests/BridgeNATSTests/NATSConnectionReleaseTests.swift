import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeNATS

/// Dropping the last reference to a `NATSConnection` leaves its release (the close, the wait for libnats's closed
/// callback, the destroy) to the blocking executor: the dropping thread is often one of the cooperative pool's two
/// (docs/RELIABILITY.md, issue 26).
@Suite struct NATSConnectionReleaseTests {
    /// libnats's callback thread is held in the close's disconnected callback until the dropping code has gone on,
    /// so the closed callback can only come after the drop returned. A release on the dropping thread waits its two
    /// seconds for that callback, gives up and keeps the connection's context for good (a late callback must not
    /// find it freed); released elsewhere, the close is reported and the context freed.
    @Test func droppingTheLastReferenceDoesNotWaitForTheCloseOnTheDroppingThread() async throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "nats-release")
        let server = try NATSServer(name: "release", in: directory)
        try await server.start()
        var connection: NATSConnection? = try await NATSConnection.connect(
            settings: NATSSettings(servers: [server.url]),
            logger: .silent
        )
        let dropped = ConditionLock(false)
        weak var context = connection?.context
        context?.addListener { state in
            guard state == .reconnecting else { return }
            dropped.wait { isDropped in isDropped ? (true, nil) : (nil, nil) }
        }
        connection = nil
        dropped.withLock { $0 = true }
        dropped.broadcast()
        let deadline = ContinuousClock.now + .seconds(TestEnvironment.patient(60))
        while context != nil && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(context == nil, "the connection's context was kept: its close was not reported in time")
    }
}
