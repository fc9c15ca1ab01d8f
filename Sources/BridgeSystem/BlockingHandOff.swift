import Synchronization

/// A non-Sendable value handed to a `BlockingExecutor` thread by the one task that owns it, while that task awaits
/// the work and touches the value nowhere else (a broker client's connection: one call at a time), so the value is
/// never used by two threads at once.
package struct BlockingHandOff<Value>: @unchecked Sendable {
    /// The value.
    package let value: Value

    /// Wraps `value`.
    package init(_ value: Value) { self.value = value }
}

/// Set when the task that waits for blocking work is cancelled (from its cancellation handler); the blocking work
/// checks it between its bounded waits.
package final class CancellationFlag: Sendable {
    private let flag = Atomic<Bool>(false)

    /// A flag not set.
    package init() {}

    /// Whether the waiting task was cancelled.
    package var isSet: Bool { flag.load(ordering: .relaxed) }

    /// Sets the flag.
    package func set() { flag.store(true, ordering: .relaxed) }
}
