import Synchronization

/// A flag set once from any thread and read from another: a task's cancellation handler telling blocking code, a
/// network thread telling a sink's runner. Set and read with release/acquire ordering, so what the setter wrote
/// before `set()` is visible to a reader that sees `isSet`.
package final class SetOnceFlag: Sendable {
    private let flag = Atomic<Bool>(false)

    /// Creates an unset flag.
    package init() {}

    /// Whether `set()` was called.
    package var isSet: Bool { flag.load(ordering: .acquiring) }

    /// Sets the flag (for good).
    package func set() { flag.store(true, ordering: .releasing) }
}
