package import BridgeSystem
internal import Synchronization

/// What `/readyz` reports: the bridge is ready only when connected, authenticated, every subscription initialised
/// and no sink stuck. Components update their part; the HTTP server reads a snapshot.
public final class HealthState: Sendable {
    /// A point-in-time view of readiness.
    public struct Snapshot: Sendable, Equatable {
        /// The socket is open and authenticated.
        public var connected = false
        /// The credentials are currently accepted (false after a rejected refresh/login).
        public var authenticated = false
        /// Subscriptions that answered `init` on the current connection.
        public var liveSubscriptions: Set<String> = []
        /// Every configured subscription uid.
        public var expectedSubscriptions: Set<String> = []
        /// Sinks (by id, the metrics' `sink` label) that have failed for longer than the stuck threshold, with the last
        /// error.
        public var stuckSinks: [String: String] = [:]
        /// Why the last connection ended, if it did.
        public var lastDisconnectReason: String?
        /// Set once shutdown began.
        public var shuttingDown = false
        /// A standby of shared state: another bridge of the same name holds the lease (or the state store cannot be
        /// reached), so this one neither reads Directus nor delivers.
        public var standby = false
        /// Each sink's lag, by sink id (the metrics' `sink` label): activity rows between the newest id seen and its
        /// cursor (activity mode only;
        /// information, not a reason to be unready — a sink that cannot take events shows in `stuckSinks`).
        public var sinkLag: [String: Int64] = [:]

        /// Whether the bridge is ready.
        public var isReady: Bool {
            connected && authenticated && expectedSubscriptions.isSubset(of: liveSubscriptions) && stuckSinks.isEmpty
                && !shuttingDown && !standby
        }

        /// Human-readable reasons it is not ready (empty when ready).
        public var reasons: [String] {
            var reasons: [String] = []
            if standby { reasons.append("standby") }
            if shuttingDown { reasons.append("shutting down") }
            if !connected {
                reasons.append("not connected to Directus" + (lastDisconnectReason.map { " (\($0))" } ?? ""))
            }
            if !authenticated { reasons.append("credentials not accepted") }
            let missing = expectedSubscriptions.subtracting(liveSubscriptions).sorted()
            if !missing.isEmpty { reasons.append("subscriptions not initialised: " + missing.joined(separator: ", ")) }
            for (sink, error) in stuckSinks.sorted(by: { $0.key < $1.key }) {
                reasons.append("sink \(sink) stuck: \(error)")
            }
            return reasons
        }
    }

    /// Where the sinks' lag is read. A closure stored directly as a `Mutex`'s value is reabstracted into
    /// `withLock`'s generic `inout` and written back wrapped in two more thunks on every read (swiftlang/swift#91348):
    /// each snapshot made it bigger and one thunk pair deeper until calling it overflowed the stack. Inside a struct
    /// it has one representation and is stored as it is.
    private struct LagReader: Sendable {
        let read: @Sendable () -> [String: Int64]
    }

    private let state: Mutex<Snapshot>
    private let sinkLag = Mutex<LagReader?>(nil)

    /// Creates the state for the configured subscription uids.
    public init(expectedSubscriptions: Set<String>) {
        var initial = Snapshot()
        initial.expectedSubscriptions = expectedSubscriptions
        state = Mutex(initial)
    }

    /// The current readiness.
    public var snapshot: Snapshot {
        var snapshot = state.withLock { $0 }
        if let reader = sinkLag.withLock({ $0 }) { snapshot.sinkLag = reader.read() }
        return snapshot
    }

    /// Where `snapshot` reads each sink's lag (the activity service's cursors).
    package func setSinkLag(_ read: @escaping @Sendable () -> [String: Int64]) {
        sinkLag.withLock { $0 = LagReader(read: read) }
    }

    /// Rung after every `update`: a task waiting for a state (the live benchmark, for the connection) checks
    /// `snapshot` after each ring instead of polling it. One waiter at a time (`Wakeup`).
    package let changed = Wakeup()

    /// Applies `change` under the lock, then rings `changed`.
    public func update(_ change: (inout Snapshot) -> Void) {
        state.withLock { change(&$0) }
        changed.ring()
    }
}
