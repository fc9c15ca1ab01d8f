/// What a `JetStreamPublisher` did about its acknowledgement deadlines, counted under its lock: publishes, the
/// driver's deadline checks and the publishes they timed out, with the times of the first and last. A test that
/// freezes the server names it when no retry came, so that the failure says whether the driver published, checked
/// or timed out nothing in that window.
package struct JetStreamPublisherActivity: Sendable {
    /// Publishes handed to libnats (retries included).
    package var publishes = 0
    /// When the first of them was registered.
    package var firstPublish: ContinuousClock.Instant?
    /// When the last of them was registered.
    package var lastPublish: ContinuousClock.Instant?
    /// Deadline checks the driver made (each looks at every publish in flight).
    package var deadlineChecks = 0
    /// When the driver made its first deadline check.
    package var firstDeadlineCheck: ContinuousClock.Instant?
    /// When the driver made its last deadline check.
    package var lastDeadlineCheck: ContinuousClock.Instant?
    /// Publishes failed for want of an acknowledgement within the timeout.
    package var timedOut = 0
    /// When the first publish timed out.
    package var firstTimeOut: ContinuousClock.Instant?
    /// Times the connection was reported down.
    package var disconnects = 0

    mutating func recordPublishes(_ count: Int, at now: ContinuousClock.Instant) {
        guard count > 0 else { return }
        publishes += count
        if firstPublish == nil { firstPublish = now }
        lastPublish = now
    }

    mutating func recordDeadlineCheck(timedOut count: Int, at now: ContinuousClock.Instant) {
        deadlineChecks += 1
        if firstDeadlineCheck == nil { firstDeadlineCheck = now }
        lastDeadlineCheck = now
        guard count > 0 else { return }
        timedOut += count
        if firstTimeOut == nil { firstTimeOut = now }
    }

    /// The counts, with each time as milliseconds after `origin` (a test's own reference, such as the freeze).
    package func summary(since origin: ContinuousClock.Instant) -> String {
        func at(_ instant: ContinuousClock.Instant?) -> String {
            guard let instant else { return "never" }
            let (seconds, attoseconds) = (instant - origin).components
            return "\(seconds * 1000 + attoseconds / 1_000_000_000_000_000) ms"
        }
        return "\(publishes) publishes (first \(at(firstPublish)), last \(at(lastPublish))), "
            + "\(deadlineChecks) deadline checks (first \(at(firstDeadlineCheck)), last \(at(lastDeadlineCheck))), "
            + "\(timedOut) timed out (first \(at(firstTimeOut))), \(disconnects) disconnects"
    }
}
