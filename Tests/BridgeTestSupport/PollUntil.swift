/// Checks `condition` every 20 ms until it holds or `timeout` passes; returns whether it held. For conditions that
/// stay true once reached (counts that only grow, a state that is kept), so a loaded machine only makes it slower.
/// The timeout is stretched by `TestEnvironment.patience`.
public func pollUntil(timeout: Duration = .seconds(30), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout * TestEnvironment.patience)
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return try await condition()
}
