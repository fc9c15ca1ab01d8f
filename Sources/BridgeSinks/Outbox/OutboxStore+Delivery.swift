internal import BridgeEvents
internal import BridgeStore

// MARK: - Delivery (the delivery service and its writer, each on its own thread)

/// What one delivery turn read from the outbox.
package struct OutboxStep: Sendable {
    /// Rows above the asked `seq`, oldest first.
    package var loaded: [OutboxEntry]
    /// The payloads asked for that still exist.
    package var payloads: [OutboxPayload]
    /// Rows in the sink's outbox after the step.
    package var depth: Int
    /// The sink's dead letters, counted when the step recounted (nil otherwise).
    package var deadLetters: Int?
}

extension OutboxStore {
    /// The reads of one delivery turn in one lock and one transaction (each statement outside a transaction would
    /// pay WAL lock syscalls of its own): rows above `loadAfter` (when set, at most `loadLimit`), the outbox depth
    /// and the dead letters recounted when asked (rows another process added or removed), and the payloads of
    /// `due`. Only for what memory does not have (a start, a poll, a replay, a full hand-off): the outcomes go
    /// through the sink's `OutboxWriter`.
    package func deliveryStep(
        sink: String,
        loadAfter: Int64?,
        loadLimit: Int,
        recount: Bool,
        due: [Int64]
    ) throws -> OutboxStep {
        try withState { state in
            let database = state.database
            var step = try database.transaction { () throws -> OutboxStep in
                let loaded = try loadAfter.map {
                    try Self.pending(sink: sink, after: $0, limit: loadLimit, in: database)
                }
                var deadLetters: Int?
                if recount {
                    deadLetters =
                        try database.query("SELECT COUNT(*) FROM dead_letters WHERE sink = ?", [.text(sink)]) {
                            $0.int(at: 0)
                        }.first ?? 0
                }
                return OutboxStep(
                    loaded: loaded ?? [],
                    payloads: try Self.payloads(due, in: database),
                    depth: 0,
                    deadLetters: deadLetters
                )
            }
            if recount { state.depth[sink] = nil }
            step.depth = try Self.depth(of: sink, in: &state)
            return step
        }
    }

    /// Outbox rows of `sink` with `seq` above `after`, oldest first, at most `limit`.
    package func pending(sink: String, after: Int64, limit: Int) throws -> [OutboxEntry] {
        try withState { state in try Self.pending(sink: sink, after: after, limit: limit, in: state.database) }
    }

    /// The id and body of each row in `seqs` that still exists, in the order asked.
    package func payloads(_ seqs: [Int64]) throws -> [OutboxPayload] {
        try withState { state in try Self.payloads(seqs, in: state.database) }
    }

    /// Applies the outcome of finished attempts of `sink` in one transaction (the sink's `OutboxWriter`).
    package func apply(_ writes: [OutboxWrite], sink: String) throws {
        guard !writes.isEmpty else { return }
        try withState { state in
            let database = state.database
            let removed = try database.transaction { try Self.apply(writes, in: database) }
            if let depth = state.depth[sink] { state.depth[sink] = max(0, depth - removed) }
        }
    }

    // `+sink` keeps SQLite on the rowid range: through the `(sink, event_id)` index it would read every row of the
    // sink and sort them.
    private static func pending(sink: String, after: Int64, limit: Int, in database: SQLiteDatabase) throws
        -> [OutboxEntry]
    {
        try database.query(
            """
            SELECT seq, collection, item_key, attempts, next_attempt_at, created_at FROM outbox
            WHERE seq > ? AND +sink = ? ORDER BY seq LIMIT ?
            """,
            [.integer(after), .text(sink), .integer(Int64(limit))]
        ) { row in
            OutboxEntry(
                seq: row.int64(at: 0),
                collection: row.string(at: 1),
                key: row.string(at: 2),
                attempts: row.int(at: 3),
                nextAttemptAt: row.int64(at: 4),
                createdAt: row.int64(at: 5)
            )
        }
    }

    private static func payloads(_ seqs: [Int64], in database: SQLiteDatabase) throws -> [OutboxPayload] {
        guard !seqs.isEmpty else { return [] }
        let statement = try database.statement(for: "SELECT event_id, body FROM outbox WHERE seq = ?")
        defer { statement.reset() }
        var payloads: [OutboxPayload] = []
        payloads.reserveCapacity(seqs.count)
        for seq in seqs {
            statement.reset()
            try statement.bind(seq, at: 1)
            if try statement.step() {
                payloads.append(OutboxPayload(seq: seq, eventID: statement.string(at: 0), body: statement.blob(at: 1)))
            }
        }
        return payloads
    }

    /// Applies `writes` in their order; returns how many rows left the outbox.
    ///
    /// Plain removals (a delivery, a letter filed elsewhere) are the bulk of every group commit: each run of them is
    /// deleted `deleteChunk` rows per statement instead of one statement per row (BENCHMARKS.md, "Webhook: the
    /// delivery path per request"). A run ends before any other write, so a row an update or a dead letter reads is
    /// still there, exactly as when every write ran in turn.
    private static func apply(_ writes: [OutboxWrite], in database: SQLiteDatabase) throws -> Int {
        var removed = 0
        var removals: [Int64] = []
        for write in writes {
            switch write {
            case .delivered(let seq), .removed(let seq):
                removals.append(seq)
            case .retry, .deadLetter:
                removed += try delete(removals, in: database)
                removals.removeAll(keepingCapacity: true)
                try apply(write, in: database)
                if write.removesRow { removed += database.changes }
            }
        }
        return removed + (try delete(removals, in: database))
    }

    /// Rows one removal statement deletes at most.
    static let deleteChunk = 32
    private static let deleteSQL =
        "DELETE FROM outbox WHERE seq IN (" + Array(repeating: "?", count: deleteChunk).joined(separator: ", ") + ")"

    /// Deletes the rows `seqs`; returns how many existed. A short chunk binds its last row again in the places left
    /// (`IN` matches a row once however often it is named).
    private static func delete(_ seqs: [Int64], in database: SQLiteDatabase) throws -> Int {
        var removed = 0
        var start = 0
        while start < seqs.count {
            let end = min(start + deleteChunk, seqs.count)
            let statement = try database.statement(for: deleteSQL)
            defer { statement.reset() }
            for place in 0..<deleteChunk {
                try statement.bind(seqs[min(start + place, end - 1)], at: Int32(place + 1))
            }
            while try statement.step() {}
            removed += database.changes
            start = end
        }
        return removed
    }

    private static func apply(_ write: OutboxWrite, in database: SQLiteDatabase) throws {
        switch write {
        case .delivered, .removed:
            preconditionFailure("removals are deleted in runs (`delete`)")
        case .retry(let seq, let attempts, let nextAttemptAt, let lastStatus, let lastError):
            try database.run(
                "UPDATE outbox SET attempts = ?, next_attempt_at = ?, last_status = ?, last_error = ? WHERE seq = ?",
                [
                    .integer(Int64(attempts)), .integer(nextAttemptAt), lastStatus.map { .integer(Int64($0)) } ?? .null,
                    lastError.map { .text($0) } ?? .null, .integer(seq),
                ]
            )
        case .deadLetter(let seq, let attempts, let deadAt, let reason, let lastStatus, let response):
            try database.run(
                """
                INSERT INTO dead_letters (sink, event_id, collection, item_key, body, attempts, created_at, dead_at,
                    reason, last_status, response)
                SELECT sink, event_id, collection, item_key, body, ?, created_at, ?, ?, ?, ? FROM outbox WHERE seq = ?
                """,
                [
                    .integer(Int64(attempts)), .integer(deadAt), .text(reason),
                    lastStatus.map { .integer(Int64($0)) } ?? .null, .blob(response), .integer(seq),
                ]
            )
            try database.run("DELETE FROM outbox WHERE seq = ?", [.integer(seq)])
        }
    }
}
