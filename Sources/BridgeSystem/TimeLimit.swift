/// Runs `operation` and returns its result, or nil when `limit` passed first; the operation is then cancelled (and
/// waited for until it notices).
///
/// The one place that races work against a timer (a probe's test event, a lease's read, the graceful phase of a
/// shutdown, a signal's sleep): a task group of the operation and a `Task.sleep`, the first to finish wins.
public func withTimeLimit<T: Sendable>(_ limit: Duration, _ operation: @escaping @Sendable () async -> T?) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await operation() }
        group.addTask {
            try? await Task.sleep(for: limit)  // the limit itself: a real timer
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}
