/// Where sinks' activity progress is made durable (`state.backend`): `CursorDatabase` (`local`, SQLite in
/// `delivery.state_dir`) or `SharedCursorBackend` (`jetstream`, a key-value bucket shared by the bridges of one
/// name). `CursorStore` keeps each sink's progress in memory and writes every change through here.
///
/// Calls block (a disk sync, a request to a server): call them off Swift's cooperative pool.
package protocol CursorBackend: Sendable {
    /// The durable progress of `sink`.
    func load(sink: String) throws -> CursorDatabase.Loaded
    /// Sets the committed cursor of `sink` (its first start, at the newest activity id).
    func writeCursor(sink: String, committed: Int64) throws
    /// Replaces the state of subscription `uid` for `sink`; a stored resync request stays unless `clearingResync`.
    func write(_ subscription: SubscriptionCursorState, uid: String, sink: String, clearingResync: Bool) throws
    /// Makes one batch's progress of `sink` durable: the cursor when it moved (`previous` is what was durable
    /// before), and finished snapshots.
    func record(
        sink: String, cursor: ActivityCursor?, previous: ActivityCursor,
        subscriptions: [(uid: String, state: SubscriptionCursorState)]
    ) throws
}

extension CursorDatabase: CursorBackend {}
