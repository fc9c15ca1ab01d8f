import BridgeSystem
import BridgeTestSupport
import Testing

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks

/// The reader retries every failed read (Directus may come back), but never a deterministic failure forever
/// without saying so at error level (issue 10, defect 6).
@Suite struct ReadFailureTests {
    static let message = "reading the activity log failed"

    /// Runs a reader whose next `count` reads fail with `failure`, until a change arrives after them; returns the
    /// levels of the failure log lines.
    static func levels(failing count: Int, with failure: DirectusError) async throws -> [LogLevel] {
        let directus = FakeDirectus()
        let logs = RecordingLogHandler()
        let harness = try ReaderHarness(directus: directus, subscriptions: [subscription()], logger: logs.logger())
        harness.start()
        try await harness.waitUntilCaughtUp()
        directus.state.withLock { $0.failure = failure }
        directus.failNext(count)
        directus.commit(1, "create", "articles", "1", item: article(1))
        harness.wakeup.changeSeen(collection: "articles")
        #expect(try await harness.collect(1).map(\.id) == ["act_1"], "retried until it works")
        await harness.halt()
        return logs.all.filter { $0.message.hasPrefix(Self.message) }.map(\.level)
    }

    @Test func aFailureThatRetryingCannotFixIsAnErrorAtOnce() async throws {
        let failure = DirectusError(kind: .tooLarge, message: "the answer is too long", operation: "GET /activity")
        #expect(try await Self.levels(failing: 2, with: failure) == [.error, .error])
    }

    @Test func aRetriableFailureBecomesAnErrorWhenItKeepsComing() async throws {
        let failure = DirectusError(kind: .invalidResponse, message: "not JSON", operation: "GET /activity")
        let levels = try await Self.levels(failing: 6, with: failure)
        #expect(levels == [.warning, .warning, .warning, .warning, .error, .error])
    }
}
