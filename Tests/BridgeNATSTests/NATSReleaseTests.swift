import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeNATS

/// Dropping the last reference to a `NATSConnection` or a `JetStreamPublisher` leaves what its release blocks on (the
/// wait for libnats's closed callback, the driver thread's join) to the blocking executor: the dropping thread is
/// often one of the cooperative pool's two (docs/RELIABILITY.md, issue 26).
@Suite struct NATSReleaseTests {
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
        _ = await pollUntil(timeout: .seconds(60)) { context == nil }
        #expect(context == nil, "the connection's context was kept: its close was not reported in time")
    }

    /// A publisher dropped without `close` still holding a message (no stream takes its subject: no responders,
    /// retried until the publisher stops) fails it in its shut-down, which joins the driver thread first. That
    /// shut-down, and so the message's completion, runs on the blocking executor, never on the dropping thread.
    @Test func droppingAPublisherShutsItDownOffTheDroppingThread() async throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "nats-release")
        let server = try NATSServer(name: "publisher", in: directory)
        try await server.start()
        let connection = try await NATSConnection.connect(
            settings: NATSSettings(servers: [server.url]),
            logger: .silent
        )
        var publisher: JetStreamPublisher? = try JetStreamPublisher.make(connection: connection)
        let finished = ConditionLock<(thread: pthread_t, outcomes: [JetStreamOutcome])?>(nil)
        let message = JetStreamMessage(
            subject: "nostream.articles",
            messageID: "evt_1",
            orderingKey: "1",
            payload: Array("{}".utf8)
        )
        try await publisher?.submit([message]) { outcomes in finished.withLock { $0 = (pthread_self(), outcomes) } }
        try #require(publisher?.outstanding.held == 1, "the message is held until the publisher stops")
        let dropping = pthread_self()
        publisher = nil
        _ = await pollUntil(timeout: .seconds(60)) { finished.withLock { $0 != nil } }
        let outcome = try #require(finished.withLock { $0 }, "the held message was never finished")
        #expect(pthread_equal(outcome.thread, dropping) == 0, "shut down on the thread that dropped the publisher")
        guard case .failed(let error) = outcome.outcomes.first else {
            Issue.record("finished as \(outcome.outcomes)")
            return
        }
        #expect(error.message.contains("publisher closed"), "\(error)")
        await connection.close()
    }
}
