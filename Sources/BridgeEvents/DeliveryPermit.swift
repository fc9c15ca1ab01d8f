/// Whether this bridge may deliver right now: with shared state (docs/ARCHITECTURE.md "Shared state, lease and
/// fencing") only while it holds the lease, measured on its own monotonic clock before each delivery attempt.
public protocol DeliveryPermit: Sendable {
    /// True while this bridge holds the lease with time to spare; false from the moment it must stop delivering.
    func mayDeliver() -> Bool
}

/// This bridge is no longer the writer of the shared state: its lease lapsed or another bridge took over (a
/// compare-and-set on a cursor found a newer revision). Never retried: the bridge stops reading and delivering
/// and goes back to standby.
public struct FencedError: Error, Sendable, CustomStringConvertible {
    /// What showed it.
    public var reason: String

    /// Creates the error.
    public init(reason: String) { self.reason = reason }

    /// `fenced: <reason>`.
    public var description: String { "fenced: \(reason)" }
}
