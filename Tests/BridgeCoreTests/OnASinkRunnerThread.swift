import BridgeSystem
import Testing

/// Runs each test of a suite as a sink's runner calls the sink: on a thread of its own (a `DedicatedThreadExecutor`),
/// never on Swift's cooperative pool. `BrokerSink` blocks its caller on a condition (`makeDurable` up to `stall_after`,
/// `accept` for room, `close` for confirmations); from a test's task that held one of the pool's two threads
/// (docs/RELIABILITY.md, issue 26).
struct OnASinkRunnerThread: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    /// Once per test case: a suite, or a function before its cases, gets no scope of its own.
    func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        let runner = DedicatedThreadExecutor(name: "sink-runner")
        defer { runner.shutdown() }
        try await withTaskExecutorPreference(runner) { try await function() }
    }
}

extension Trait where Self == OnASinkRunnerThread {
    /// Each test runs on a thread of its own, as a sink's runner does (`OnASinkRunnerThread`).
    static var onASinkRunnerThread: Self { Self() }
}
