internal import BridgeSystem

/// The webhook delivery loop's clock: Unix milliseconds that advance with elapsed time only. It reads the wall clock
/// once, when it is made, and adds the monotonic time since; so a wall clock set back or forward while the bridge runs
/// (an NTP step, `date -s`, a VM restored from a snapshot) neither holds a retry back for the size of the step nor
/// sends it early, and rows intake hands over are due at once whatever the wall clock did. The outbox times written
/// with it stay wall-clock times as of that one reading; a later run, whose reading may differ, bounds what they can
/// ask for when it reads them (`WebhookDeliveryState.load`). docs/RELIABILITY.md, "Careless or hostile operators".
package struct DeliveryClock: Sendable {
    /// The wall clock's reading when the clock was made (Unix ms).
    private let startWall: Int64
    /// The monotonic instant of that reading.
    private let start: ContinuousClock.Instant

    /// A clock that reads `wall` (Unix ms) once, now.
    package init(wall: Int64) {
        startWall = wall
        start = .now
    }

    /// Unix milliseconds now: the wall clock's reading at the start plus the whole milliseconds elapsed since
    /// (`Duration.wholeMilliseconds`, saturating).
    package func now() -> Int64 {
        let (sum, overflow) = startWall.addingReportingOverflow((ContinuousClock.now - start).wholeMilliseconds)
        return overflow ? Int64.max : sum
    }
}
