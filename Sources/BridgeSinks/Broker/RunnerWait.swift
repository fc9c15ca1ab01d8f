package import BridgeSystem
package import BridgeEvents

/// Waits, on a sink runner's thread, for asynchronous client work (connecting, submitting, closing).
///
/// A connector's methods are synchronous and are called by its runner, a thread of its own (`SinkConnector`), so
/// blocking there is allowed; the work itself runs as a task on the cooperative pool (and its blocking C calls on
/// `BlockingExecutor`). Never call this from a task: it would hold a pool thread while waiting for the pool.
package enum RunnerWait {
    /// Runs `work` and returns its result (or throws its error) once it finished.
    package static func result<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
        let box = ConditionLock<Result<T, any Error>?>(nil)
        Task {
            let result: Result<T, any Error>
            do {
                result = .success(try await work())
            } catch {
                result = .failure(error)
            }
            box.withLock { $0 = result }
            box.broadcast()
        }
        return try box.wait { ($0, nil) }.get()
    }
}

/// A client object confined to one runner, handed to the task that `RunnerWait` runs for that runner while the
/// runner waits (so only one of them uses it at a time).
package struct RunnerOwned<Value>: @unchecked Sendable {
    package let value: Value
}
