private import Synchronization

/// What one webhook delivery loop read back from SQLite, and why: updated once per read and once per turn whose
/// hand-off brought bodies for rows read already, never per event in steady state (which reads nothing). Tests
/// assert on it; each read is also logged at debug level.
package final class OutboxReadTally: Sendable {
    /// The counts so far.
    package struct Counts: Sendable, Equatable {
        /// Reads, whatever their causes.
        package var totalReads = 0
        /// Reads by cause: a read with two causes counts for both.
        package var reads: [OutboxReadCause: Int] = [:]
        /// Rows the reads returned, rows delivery knew already included (a row's body is read only once it is due,
        /// and not at all when the hand-off brings it first).
        package var rowsLoaded = 0
        /// Bodies read from SQLite.
        package var bodiesRead = 0
        /// Rows read from SQLite whose bodies then came through the hand-off (the read ran while their records
        /// were on the way in memory).
        package var bodiesFromHandOff = 0

        /// Reads whose causes included `cause`.
        package func reads(_ cause: OutboxReadCause) -> Int { reads[cause] ?? 0 }
    }

    private let counts = Mutex(Counts())

    /// An empty tally.
    package init() {}

    /// The counts so far.
    package var snapshot: Counts { counts.withLock { $0 } }

    /// A read for `causes` loaded `rows` rows and `bodies` bodies.
    package func read(_ causes: OutboxReadCause, rows: Int, bodies: Int) {
        counts.withLock { counts in
            counts.totalReads += 1
            for (cause, _) in OutboxReadCause.named where causes.contains(cause) {
                counts.reads[cause, default: 0] += 1
            }
            counts.rowsLoaded += rows
            counts.bodiesRead += bodies
        }
    }

    /// The hand-off brought the bodies of `count` rows read from SQLite before.
    package func tookBodiesFromHandOff(_ count: Int) {
        counts.withLock { $0.bodiesFromHandOff += count }
    }
}
