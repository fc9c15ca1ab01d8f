import Foundation
import Testing

@testable import BridgeSystem

/// `ShutdownSignal` between threads: a sink runner pausing between retries while shutdown is triggered elsewhere.
@Suite struct ShutdownSignalThreadTests {
    /// Runs `body` `count` times on a thread of its own.
    static func thread(_ count: Int, _ body: @escaping @Sendable () -> Void) -> Thread {
        let thread = Thread {
            for _ in 0..<count { body() }
        }
        thread.start()
        return thread
    }

    /// Pauses and triggers at the same time on two threads. Its ThreadSanitizer run (`scripts/test.sh
    /// --sanitize=thread`) reported a Swift access race here while the signal's thread lock guarded an empty value:
    /// the access instrumentation of a zero-sized stored property reports the object's own address, which every
    /// thread reads (the class header) before it takes the lock (docs/RELIABILITY.md "ThreadSanitizer"). Whatever
    /// the sanitizer, every pause after the trigger returns at once.
    @Test func pausesAndTriggersOnTwoThreads() async {
        let signal = ShutdownSignal()
        let pausing = Self.thread(2_000) { signal.pause(for: .zero) }
        let triggering = Self.thread(2_000) { signal.trigger() }
        while pausing.isExecuting || triggering.isExecuting || !pausing.isFinished || !triggering.isFinished {
            try? await Task.sleep(for: .milliseconds(10))
        }
        let started = ContinuousClock.now
        #expect(!signal.pause(for: .seconds(60)))
        #expect(ContinuousClock.now - started < .seconds(30))
    }
}
