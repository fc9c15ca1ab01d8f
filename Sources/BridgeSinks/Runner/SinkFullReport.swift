/// How often a sink that stays slower than its input says it is full. Such a sink is full at nearly every batch,
/// several times a second for as long as the load lasts, and a warning and an "accepting again" per batch buried the
/// log (a scale run: 139 warnings in 80 s from one slow webhook, docs/RELIABILITY.md "Careless or hostile
/// operators"). The first wait for room is logged; later ones at most once a minute, with how many were not.
struct SinkFullReport {
    /// The least time between two warnings.
    static let interval: Duration = .seconds(60)

    private var lastWarning: ContinuousClock.Instant?
    private var unlogged = 0

    /// Whether the wait for room that starts at `now` is logged; if so, how many waits since the last warning were
    /// not.
    mutating func waitStarts(at now: ContinuousClock.Instant) -> Int? {
        if let lastWarning, now - lastWarning < Self.interval {
            unlogged += 1
            return nil
        }
        defer {
            lastWarning = now
            unlogged = 0
        }
        return unlogged
    }
}
