/// A test server whose stop waits for its process and is awaited (on `BlockingExecutor.shared`), not done on one of
/// the cooperative pool's threads.
public protocol StoppableServer: Sendable {
    /// Stops the server and waits until it is gone.
    func stop() async throws
}

/// Runs `body`, then stops `server` whether `body` returned or threw: what `defer { server.stop() }` does in a
/// synchronous test, without the synchronous stop (a wait for a process's exit) holding one of the cooperative pool's
/// two threads — a `defer` cannot await.
public func withServer<Server: StoppableServer, Result>(
    _ server: Server,
    _ body: () async throws -> Result
) async throws -> Result {
    let result: Result
    do {
        result = try await body()
    } catch {
        try? await server.stop()
        throw error
    }
    try await server.stop()
    return result
}
