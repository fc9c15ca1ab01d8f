import BridgeNATS
import BridgeSystem
import BridgeTestSupport
import Foundation
import Synchronization
import Testing

/// The JetStream publisher against real nats-server processes (single node and a three-node cluster on loopback),
/// read back with nats-py to check what the streams really stored.
@Suite(.timeLimit(.minutes(5)))
struct JetStreamPublisherTests {
    @Test func publishesAreAcknowledgedAndStoredWithTheirIDsInOrderPerKey() async throws {
        let (server, connection) = try await singleServerWithStream("single")
        let publisher = try JetStreamPublisher.make(connection: connection)

        let messages = jetStreamMessages(count: 600, items: 40)
        let outcomes = try await publisher.send(messages)
        #expect(outcomes.count == 600 && outcomes.allSatisfy { $0.ack?.duplicate == false }, natsFailure(outcomes))
        #expect(Set(outcomes.compactMap { $0.ack?.sequence }) == Set(1...600))
        #expect(outcomes.allSatisfy { $0.ack?.stream == "EVENTS" })
        #expect(
            try await publisher.streamNames(matching: "directus.articles.update", timeout: .seconds(5)) == ["EVENTS"]
        )
        #expect(try await publisher.streamNames(matching: "elsewhere.>", timeout: .seconds(5)).isEmpty)

        try await expectStored(server.url, exactly: messages)
        await publisher.close(drainTimeout: .seconds(5))
        await connection.close()
    }

    /// Found by the JetStream sink's integration tests (a bridge restarted with nothing left to send crashed at
    /// SIGTERM): libnats makes a context's table of pending publishes at the first asynchronous publish, and
    /// `js_PublishAsyncGetPendingList` reads it without a check, so closing a publisher that never published read
    /// through a null pointer.
    @Test func closingAPublisherThatNeverPublishedIsSafe() async throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "nats")
        let server = try NATSServer(name: "idle", in: directory)
        try await server.start()
        let connection = try await NATSConnection.connect(
            settings: NATSSettings(servers: [server.url]),
            logger: .silent
        )
        let publisher = try JetStreamPublisher.make(connection: connection)
        #expect(publisher.outstanding.held == 0)
        await publisher.close(drainTimeout: .seconds(1))
        await connection.close()
    }

    @Test func aResentMessageIsStoredOnceWithinTheDuplicateWindow() async throws {
        let (server, connection) = try await singleServerWithStream("dedup")
        let publisher = try JetStreamPublisher.make(connection: connection)

        let messages = jetStreamMessages(count: 100, items: 10)
        let first = try await publisher.send(messages)
        let again = try await publisher.send(messages)
        #expect(first.allSatisfy { $0.ack?.duplicate == false }, natsFailure(first))
        #expect(again.allSatisfy { $0.ack?.duplicate == true }, natsFailure(again))
        #expect(
            again.map { $0.ack?.sequence } == first.map { $0.ack?.sequence },
            "a duplicate names the stored sequence"
        )
        try await expectStored(server.url, exactly: messages)
        await publisher.close(drainTimeout: .seconds(5))
    }

    @Test func wrongCredentialsAreAnAuthenticationError() async throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "nats")
        let server = try NATSServer(
            name: "auth",
            in: directory,
            authorization: "authorization { user: bridge, password: right-password }"
        )
        try await server.start()
        for credentials: NATSSettings.Credentials in [
            .userPassword(user: "bridge", password: "wrong-password"), .token("wrong-token"), .none,
        ] {
            do {
                _ = try await NATSConnection.connect(
                    settings: NATSSettings(servers: [server.url], credentials: credentials),
                    logger: .silent
                )
                Issue.record("connected with \(credentials)")
            } catch let error as NATSError {
                #expect(error.kind == .authentication, "\(error)")
                #expect(!error.description.contains("wrong-password") && !error.description.contains("wrong-token"))
            }
        }
        let connection = try await NATSConnection.connect(
            settings: NATSSettings(
                servers: [server.url],
                credentials: .userPassword(user: "bridge", password: "right-password")
            ),
            logger: .silent
        )
        #expect(connection.status.state == .connected)
        await connection.close()
    }

    @Test func nothingIsLostWhileTheServerIsDownForTenSeconds() async throws {
        let (server, connection) = try await singleServerWithStream("restart")
        let publisher = try JetStreamPublisher.make(
            connection: connection,
            settings: JetStreamPublisherSettings(maxOutstanding: 256, ackTimeout: .seconds(2))
        )
        let messages = jetStreamMessages(count: 3_000, items: 60)
        let stream = StreamRun()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [publisher = UnsafeTransfer(value: publisher)] in
                try await stream.publish(messages, with: publisher.value, batchSize: 50)
            }
            #expect(await pollUntil(timeout: .seconds(60)) { stream.acknowledged >= 500 })
            try await server.kill()
            let down = ContinuousClock.now
            try await Task.sleep(for: .seconds(10))
            #expect(stream.acknowledged < messages.count, "publishes waited while the server was down")
            try await server.start()
            try await group.waitForAll()
            #expect(ContinuousClock.now - down >= .seconds(10))
        }
        #expect(stream.failures.isEmpty, "\(stream.failures.prefix(3))")
        #expect(stream.acknowledged == messages.count)
        #expect(connection.status.reconnects >= 1)
        try await expectStored(server.url, exactly: messages)
        await publisher.close(drainTimeout: .seconds(5))
    }

    /// Publishes a frozen server never answers time out after `ackTimeout` and are published again (under new
    /// tokens, with the same `Nats-Msg-Id`); once it thaws, every message is stored once, and the answers that count
    /// are the retries' (duplicates), not the first publishes' late ones.
    ///
    /// Then the same when the submitter publishes on its own thread (a sink's runner): the driver, asleep while
    /// nothing was in flight, is woken to keep the acknowledgement deadlines of what the submitter published. One
    /// item, so that only that deadline can make a retry (with several, the first answer after the thaw wakes the
    /// driver, which then times out the others). The server stays frozen until the publisher timed out and published
    /// again every head, and the connection does not ping meanwhile (docs/RELIABILITY.md).
    @Test func unansweredPublishesTimeOutAndAreRetriedAndStoredOnce() async throws {
        try await expectUnansweredPublishesRetried(count: 40, items: 8, publishingHere: false)
        try await expectUnansweredPublishesRetried(count: 10, items: 1, publishingHere: true)
    }

    private func expectUnansweredPublishesRetried(count: Int, items: Int, publishingHere: Bool) async throws {
        // No keep-alive within the freeze: a connection found dead (two unanswered pings, 10-15 s by default, which
        // a starved cooperative pool can let pass before the thaw) loses the copies in the frozen server's socket,
        // and the retries after the reconnect are first copies (docs/RELIABILITY.md).
        let (server, connection) = try await singleServerWithStream(
            publishingHere ? "frozen-submitter" : "frozen",
            pingInterval: .seconds(600)
        )
        let publisher = try JetStreamPublisher.make(
            connection: connection,
            settings: JetStreamPublisherSettings(ackTimeout: .milliseconds(200), maxRetryDelay: .milliseconds(300))
        )
        let messages = jetStreamMessages(count: count, items: items)
        try await server.pause()
        #expect(server.isStopped, "every thread of the server stopped before the publishes")
        let frozen = ContinuousClock.now
        let done = NATSOutcomeBox()
        // A thread of its own, never the cooperative pool, when the publishes go out on it.
        try await withTaskExecutorPreference(DedicatedThreadExecutor(name: "submitter")) {
            try await publisher.submit(messages, publishingHere: publishingHere) { done.store($0) }
        }
        let submitted = ContinuousClock.now - frozen
        // Frozen until every item's head timed out and was published again, not for a fixed time a loaded machine
        // can let pass before the driver thread ran.
        let retried = await pollUntil(timeout: .seconds(60)) {
            let activity = publisher.activity
            return activity.timedOut >= items && activity.publishes >= items * 2
        }
        // What the driver did while the server was frozen, for the failure messages (times after the freeze).
        let whileFrozen =
            "submitted at \(submitted), thawed at \(ContinuousClock.now - frozen) (still stopped: "
            + "\(server.isStopped)); while frozen: "
            + publisher.activity.summary(since: frozen)
        #expect(retried, "\(whileFrozen)")
        #expect(done.outcomes == nil, "\(whileFrozen)")
        server.resume()
        let outcomes = try #require(await done.wait(timeout: .seconds(60)))
        #expect(outcomes.count == count && outcomes.allSatisfy { $0.ack != nil }, natsFailure(outcomes))
        let inAll = publisher.activity.summary(since: frozen)
        #expect(
            outcomes.contains { $0.ack?.duplicate == true },
            "the acknowledgements that count are the retries'; \(whileFrozen); in all: \(inAll)"
        )
        try await expectStored(server.url, exactly: messages)
        await publisher.close(drainTimeout: .seconds(5))
        await connection.close()
    }

    /// The driver waits for a retry far away with nothing in flight (a publish to a frozen server timed out); the
    /// submitter then publishes another item on its own thread: the driver is woken to keep that publish's
    /// acknowledgement deadline, not left asleep until the retry is due.
    @Test func aDriverWaitingForARetryKeepsTheDeadlinesOfTheSubmittersPublishes() async throws {
        // No keep-alive within the test: a connection found dead would wake the driver too (after two pings).
        let (server, connection) = try await singleServerWithStream("retry-wait", pingInterval: .seconds(600))
        let publisher = try JetStreamPublisher.make(
            connection: connection,
            settings: JetStreamPublisherSettings(
                ackTimeout: .milliseconds(200),
                retryDelay: .seconds(600),
                maxRetryDelay: .seconds(600)
            )
        )
        let submitter = DedicatedThreadExecutor(name: "submitter")
        let messages = jetStreamMessages(count: 2, items: 2)
        try await server.pause()
        let frozen = ContinuousClock.now
        try await withTaskExecutorPreference(submitter) {
            try await publisher.submit([messages[0]], publishingHere: true) { _ in }
        }
        // The driver timed the first out and, in the same turn under the lock, went to sleep until its retry.
        #expect(await pollUntil(timeout: .seconds(60)) { publisher.activity.timedOut == 1 })
        try await withTaskExecutorPreference(submitter) {
            try await publisher.submit([messages[1]], publishingHere: true) { _ in }
        }
        // Timed out about `ackTimeout` after its publish; without the wake-up, only when the retry is due (600 s).
        let timedOut = await pollUntil(timeout: .seconds(60)) { publisher.activity.timedOut == 2 }
        #expect(timedOut, "\(publisher.activity.summary(since: frozen))")
        server.resume()
        await publisher.close(drainTimeout: .milliseconds(100))
        await connection.close()
    }

    @Test func aClusterLosingItsStreamLeaderLosesNothing() async throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "nats-cluster")
        let servers = try await NATSServer.cluster(in: directory)
        let urls = servers.map(\.url)
        try await createStream(urls.joined(separator: ","), replicas: 3)
        let connection = try await NATSConnection.connect(settings: NATSSettings(servers: urls), logger: .silent)
        let publisher = try JetStreamPublisher.make(
            connection: connection,
            settings: JetStreamPublisherSettings(maxOutstanding: 256, ackTimeout: .seconds(2))
        )
        let messages = jetStreamMessages(count: 3_000, items: 60)
        let stream = StreamRun()
        let leaderName = try await natsAdmin(["stream-leader", urls.joined(separator: ","), "EVENTS"])
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let leader = try #require(servers.first { $0.name == leaderName }, "leader \(leaderName)")
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [publisher = UnsafeTransfer(value: publisher)] in
                try await stream.publish(messages, with: publisher.value, batchSize: 50)
            }
            #expect(await pollUntil(timeout: .seconds(60)) { stream.acknowledged >= 800 })
            try await leader.kill()
            try await group.waitForAll()
        }
        #expect(stream.failures.isEmpty, "\(stream.failures.prefix(3))")
        let survivors = servers.filter { $0 !== leader }.map(\.url).joined(separator: ",")
        try await expectStored(survivors, exactly: messages)
        await publisher.close(drainTimeout: .seconds(5))
    }

    @Test func closingReportsWhatWasNeverAcknowledged() async throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "nats")
        let server = try NATSServer(name: "close", in: directory)
        try await server.start()
        // No stream takes these subjects: every publish is answered "no responders" and retried.
        let connection = try await NATSConnection.connect(
            settings: NATSSettings(servers: [server.url]),
            logger: .silent
        )
        let publisher = try JetStreamPublisher.make(connection: connection)
        let done = NATSOutcomeBox()
        try await publisher.submit(jetStreamMessages(count: 20, items: 5)) { done.store($0) }
        #expect(await pollUntil(timeout: .seconds(10)) { publisher.outstanding.held == 20 })
        try await Task.sleep(for: .milliseconds(300))
        #expect(done.outcomes == nil)
        await publisher.close(drainTimeout: .milliseconds(100))
        let outcomes = try #require(await done.wait(timeout: .seconds(10)))
        #expect(outcomes.count == 20 && outcomes.allSatisfy { $0.error?.isRetriable == true })
    }
}
