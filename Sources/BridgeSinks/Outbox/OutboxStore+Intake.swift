internal import BridgeJSON
internal import BridgeStore
package import BridgeEvents

/// The outbox refused events because the sink's outbox holds its limit already.
package struct OutboxFull: Error, Sendable {
    /// Events waiting in the sink's outbox.
    package var depth: Int
}

/// What one insert did.
package struct OutboxInsertion: Sendable {
    /// Events added to the outbox.
    package var inserted: Int
    /// Events of the batch dealt with, from its start: added, already waiting, or conflicts. Fewer than the batch
    /// when the outbox reached its limit; the rest were not looked at.
    package var taken: Int
    /// Events not added because a different event holds their id in the sink's outbox (a bug: ids are unique
    /// per sink, see ``EventID``).
    package var conflicts: [EncodedEvent]
    /// The rows added, in `seq` order: what intake hands to delivery once the transaction committed.
    package var committed: [OutboxRecord] = []
}

// MARK: - Intake (the webhook sink, on the dispatcher thread)

extension OutboxStore {
    /// Inserts `events` for `sink` in one transaction, due at once. An event whose id already waits in the sink's
    /// outbox is not added twice: when the waiting row is the same event (a batch offered again, a change read
    /// again after a crash: same collection, key, subscription, event and `seq`), that is the at-least-once repeat;
    /// when it is another event, it is returned as a conflict. Throws `OutboxFull` when the sink's outbox already
    /// holds `limit` events or more; below it, the batch is taken from its start up to the limit (`taken`), and the
    /// SQLite error when the transaction failed (then nothing was added). The rows added come back as `committed`
    /// records only once the transaction committed: delivery never sees a row that a crash could still take back.
    ///
    /// `handOver` receives those records (when there are any) after the commit and before the store's lock is let
    /// go: a delivery read, which takes the lock, then never finds a row whose record is not on its way in memory
    /// yet (it would read that row's body back from SQLite). It runs under the lock: it must not call the store.
    package func insert(
        _ events: [EncodedEvent],
        sink: String,
        now: Int64,
        limit: Int,
        handOver: ([OutboxRecord]) -> Void = { _ in }
    ) throws -> OutboxInsertion {
        try withState { state in
            let depth = try Self.depth(of: sink, in: &state)
            guard depth < limit else { throw OutboxFull(depth: depth) }
            let database = state.database
            let insertion = try database.transaction { () throws -> OutboxInsertion in
                let statement = try database.statement(
                    for: """
                        INSERT OR IGNORE INTO outbox (sink, event_id, collection, item_key, body, next_attempt_at,
                            created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
                        """
                )
                defer { statement.reset() }
                var insertion = OutboxInsertion(inserted: 0, taken: 0, conflicts: [])
                insertion.committed.reserveCapacity(events.count)
                for event in events {
                    guard depth + insertion.inserted < limit else { break }
                    insertion.taken += 1
                    statement.reset()
                    try statement.bind(sink, at: 1)
                    try statement.bind(event.id, at: 2)
                    try statement.bind(event.collection, at: 3)
                    try statement.bind(event.key, at: 4)
                    try event.body.withUnsafeBytes { try statement.bind($0, at: 5) }
                    try statement.bind(now, at: 6)
                    try statement.bind(now, at: 7)
                    try statement.step()
                    if database.changes > 0 {
                        insertion.inserted += 1
                        insertion.committed.append(OutboxRecord(seq: database.lastInsertRowID, event: event, now: now))
                    } else if try !Self.waitingRow(of: event, sink: sink, in: database) {
                        insertion.conflicts.append(event)
                    }
                }
                return insertion
            }
            state.depth[sink] = depth + insertion.inserted
            if !insertion.committed.isEmpty { handOver(insertion.committed) }
            return insertion
        }
    }

    /// Whether the row waiting under `event`'s id is the same change (see ``insert(_:sink:now:limit:)``).
    private static func waitingRow(of event: EncodedEvent, sink: String, in database: SQLiteDatabase) throws -> Bool {
        let rows = try database.query(
            "SELECT collection, item_key, body FROM outbox WHERE sink = ? AND event_id = ?",
            [.text(sink), .text(event.id)]
        ) { ($0.string(at: 0), $0.string(at: 1), $0.blob(at: 2)) }
        guard let (collection, key, body) = rows.first else { return true }  // gone meanwhile: nothing to compare
        // Bytes, not `String ==`: keys that differ only in their Unicode normalisation are different items.
        guard collection.utf8.elementsEqual(event.collection.utf8), key.utf8.elementsEqual(event.key.utf8) else {
            return false
        }
        if body == event.body { return true }
        return identity(of: body).map { $0 == identity(of: event.body.bytes) } ?? false
    }

    /// The members of a stored event line that say which change it is (not when it was read, nor the item's state).
    /// A CloudEvent (`format: cloudevents`) carries the event line as its `data`: its own top level names none of
    /// them, and comparing the envelopes would take every event with the same id for a repeat.
    private static func identity(of body: [UInt8]) -> [JSONValue?]? {
        guard let parsed = try? JSONValue.parse(body), case .object = parsed else { return nil }
        let line = parsed["specversion"] != nil ? parsed["data"] : parsed
        guard let line, case .object = line else { return nil }
        return ["event", "collection", "key", "subscription", "seq"].map { line[$0] }
    }

    /// Events waiting in the outbox of `sink` as this process counts them (see `recountDepth`).
    package func depth(sink: String) throws -> Int {
        try withState { state in try Self.depth(of: sink, in: &state) }
    }

    package static func depth(of sink: String, in state: inout State) throws -> Int {
        if let known = state.depth[sink] { return known }
        let counted =
            try state.database.query("SELECT COUNT(*) FROM outbox WHERE sink = ?", [.text(sink)]) { $0.int(at: 0) }
            .first ?? 0
        state.depth[sink] = counted
        return counted
    }

    /// Counts the outbox of `sink` again (rows `dlq replay` added from another process) and returns the count.
    @discardableResult
    package func recountDepth(sink: String) throws -> Int {
        try withState { state in
            state.depth[sink] = nil
            return try Self.depth(of: sink, in: &state)
        }
    }
}
