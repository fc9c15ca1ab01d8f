/// The lease of one bridge name, as one bridge sees it (docs/ARCHITECTURE.md "Shared state, lease and fencing").
/// Sans-IO: the keeper reads and writes the lease key as the actions say and reports the answers back.
///
/// Time is this bridge's own monotonic clock only — never another machine's wall clock:
/// * a standby takes the lease only after it has seen the key at the same revision for a whole `lease` (or when the
///   key is free: never written, or released by a bridge that stopped);
/// * the active bridge renews every `lease/3`, a compare-and-set on the revision it holds, and counts its lease from
///   the instant *before* it sent the renewal that succeeded; it must stop delivering at `lease·2/3` after that
///   instant (`mayDeliver`), well before any standby can count a whole `lease` from having seen that renewal.
package struct LeaseStateMachine: Sendable {
    /// What the bridge knows of the lease.
    package enum State: Sendable, Equatable {
        /// Not holding the lease. `seen` is the key's revision as last read, since when it has not changed, and
        /// whether the key was free (no value); nil until the first read.
        case standby(seen: Seen?)
        /// Holding the lease at `revision`, renewed (sent) at `renewedAt`; `retryAt` delays the next attempt after a
        /// failed renewal.
        case active(revision: UInt64, renewedAt: ContinuousClock.Instant, retryAt: ContinuousClock.Instant?)
    }

    /// A revision of the lease key and since when it is unchanged.
    package struct Seen: Sendable, Equatable {
        package var revision: UInt64
        package var since: ContinuousClock.Instant
        package var free: Bool
    }

    /// What the keeper does next.
    package enum Action: Sendable, Equatable {
        /// Read the lease key and report it with `receivedLease`.
        case read
        /// Write this bridge's holder value, expecting `revision`; report with `receivedAcquired`/`receivedLost`.
        case acquire(expecting: UInt64)
        /// Rewrite the holder value, expecting `revision`, with a request that gives up by `deadline`; report with
        /// `receivedRenewed`/`receivedLost`/`receivedFailure`.
        case renew(expecting: UInt64, deadline: ContinuousClock.Instant)
        /// Nothing until `until` (or an answer).
        case wait(until: ContinuousClock.Instant)
    }

    /// A change of role the keeper announces (logs, metrics, the runtime).
    package enum Transition: Sendable, Equatable {
        case becameActive
        case becameStandby(reason: String)
    }

    /// How long a lease lasts without renewal.
    package let lease: Duration
    /// How often a standby reads the key.
    package let pollInterval: Duration
    /// The current state.
    package private(set) var state: State = .standby(seen: nil)

    /// A machine for `lease`; a standby reads the key every tenth of it (at least 100 ms, at most 1 s).
    package init(lease: Duration) {
        self.lease = lease
        self.pollInterval = min(.seconds(1), max(.milliseconds(100), lease / 10))
    }

    /// The renewal period: a third of the lease.
    package var renewEvery: Duration { lease / 3 }
    /// How long after its last renewal the active bridge may still deliver: two thirds of the lease.
    package var deliverFor: Duration { lease * 2 / 3 }

    /// Whether this bridge holds the lease at `now` with time to spare.
    package func mayDeliver(now: ContinuousClock.Instant) -> Bool {
        guard case .active(_, let renewedAt, _) = state else { return false }
        return now < renewedAt + deliverFor
    }

    /// Until when this bridge may deliver unless it renews: nil when not active.
    package var deliverableUntil: ContinuousClock.Instant? {
        guard case .active(_, let renewedAt, _) = state else { return nil }
        return renewedAt + deliverFor
    }

    /// The lease's age at `now`: since the active bridge's last renewal, or since a standby last saw the key change.
    package func age(now: ContinuousClock.Instant) -> Duration? {
        switch state {
        case .active(_, let renewedAt, _): now - renewedAt
        case .standby(let seen?): now - seen.since
        case .standby(nil): nil
        }
    }

    /// What to do at `now`; may step down (the lease ran out before a renewal succeeded).
    package mutating func nextAction(now: ContinuousClock.Instant) -> (Action, Transition?) {
        switch state {
        case .standby(nil):
            return (.read, nil)
        case .standby(let seen?):
            if seen.free || now - seen.since >= lease { return (.acquire(expecting: seen.revision), nil) }
            return (.wait(until: min(seen.since + lease, now + pollInterval)), nil)
        case .active(let revision, let renewedAt, let retryAt):
            let stopAt = renewedAt + deliverFor
            if now >= stopAt {
                state = .standby(seen: nil)
                return (.read, .becameStandby(reason: "the lease could not be renewed in time"))
            }
            let due = max(renewedAt + renewEvery, retryAt ?? renewedAt)
            if now >= due { return (.renew(expecting: revision, deadline: stopAt), nil) }
            return (.wait(until: due), nil)
        }
    }

    /// The key as read at `now`: nil when never written; `free` when its latest entry is not a value.
    package mutating func receivedLease(revision: UInt64?, free: Bool, now: ContinuousClock.Instant) {
        guard case .standby(let seen) = state else { return }
        let revision = revision ?? 0
        if let seen, seen.revision == revision, seen.free == free { return }
        state = .standby(seen: Seen(revision: revision, since: now, free: free || revision == 0))
    }

    /// The acquisition sent at `sentAt` succeeded with `revision`.
    package mutating func receivedAcquired(revision: UInt64, sentAt: ContinuousClock.Instant) -> Transition? {
        guard case .standby = state else { return nil }
        state = .active(revision: revision, renewedAt: sentAt, retryAt: nil)
        return .becameActive
    }

    /// The renewal sent at `sentAt` succeeded with `revision`.
    package mutating func receivedRenewed(revision: UInt64, sentAt: ContinuousClock.Instant) {
        guard case .active(_, let renewedAt, _) = state, sentAt >= renewedAt else { return }
        state = .active(revision: revision, renewedAt: sentAt, retryAt: nil)
    }

    /// An acquisition or renewal lost its compare-and-set (another bridge wrote the key), or a cursor write did
    /// (`reason`): back to standby at once.
    package mutating func receivedLost(reason: String) -> Transition? {
        let wasActive = if case .active = state { true } else { false }
        state = .standby(seen: nil)
        return wasActive ? .becameStandby(reason: reason) : nil
    }

    /// A renewal failed without an answer (timeout, lost connection) at `now`: try again soon, until the lease
    /// runs out (`nextAction` steps down then). Not a backoff: the retries must fit before the lease's deadline.
    package mutating func receivedFailure(now: ContinuousClock.Instant) {
        guard case .active(let revision, let renewedAt, _) = state else { return }
        state = .active(revision: revision, renewedAt: renewedAt, retryAt: now + min(pollInterval, .milliseconds(250)))
    }

    /// The bridge is stopping: the revision to release (delete, expecting it) when it holds the lease.
    package mutating func stopping() -> UInt64? {
        defer { state = .standby(seen: nil) }
        if case .active(let revision, _, _) = state { return revision }
        return nil
    }
}
