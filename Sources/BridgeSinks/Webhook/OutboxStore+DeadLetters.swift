package import BridgeStore
package import BridgeEvents

// MARK: - Dead letters (`directus-bridge dlq`)

extension OutboxStore {
    /// The dead letters matching `filter`, oldest first.
    package func deadLetters(matching filter: DeadLetterFilter) throws -> [DeadLetter] {
        try withState { state in try Self.select(filter, in: state.database) }
    }

    /// Moves the matching dead letters back into the outbox of their sink — same event id and body, attempts
    /// from zero, due at `now` (Unix ms) — and removes them from the dead letters, in one transaction. A running
    /// bridge picks them up within its poll interval. Returns the letters moved.
    package func replay(matching filter: DeadLetterFilter, now: Int64) throws -> [DeadLetter] {
        try withState { state in
            let database = state.database
            let letters = try database.transaction { () throws -> [DeadLetter] in
                let letters = try Self.select(filter, in: database)
                for letter in letters {
                    // OR IGNORE: an event id already waiting in the outbox again is not queued twice.
                    try database.run(
                        """
                        INSERT OR IGNORE INTO outbox (sink, event_id, collection, item_key, body, attempts,
                            next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, 0, ?, ?)
                        """,
                        [
                            .text(letter.sink), .text(letter.eventID), .text(letter.collection), .text(letter.key),
                            .blob(letter.body), .integer(now), .integer(now),
                        ]
                    )
                    try database.run("DELETE FROM dead_letters WHERE seq = ?", [.integer(letter.seq)])
                }
                return letters
            }
            for sink in Set(letters.map(\.sink)) { state.depth[sink] = nil }  // counted again on next use
            return letters
        }
    }

    /// Deletes the matching dead letters in one transaction; returns them.
    package func purge(matching filter: DeadLetterFilter) throws -> [DeadLetter] {
        try withState { state in
            let database = state.database
            return try database.transaction { () throws -> [DeadLetter] in
                let letters = try Self.select(filter, in: database)
                for letter in letters {
                    try database.run("DELETE FROM dead_letters WHERE seq = ?", [.integer(letter.seq)])
                }
                return letters
            }
        }
    }

    private static func select(_ filter: DeadLetterFilter, in database: SQLiteDatabase) throws -> [DeadLetter] {
        var conditions: [String] = []
        var values: [SQLiteValue] = []
        if let collection = filter.collection {
            conditions.append("collection = ?")
            values.append(.text(collection))
        }
        if let since = filter.since {
            conditions.append("dead_at >= ?")
            values.append(.integer(since))
        }
        if !filter.ids.isEmpty {
            conditions.append("event_id IN (\(Array(repeating: "?", count: filter.ids.count).joined(separator: ", ")))")
            values.append(contentsOf: filter.ids.map { .text($0) })
        }
        let whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let sql = """
            SELECT seq, sink, event_id, collection, item_key, body, attempts, created_at, dead_at, reason, last_status,
                response FROM dead_letters\(whereClause) ORDER BY seq
            """
        // Not cached: the SQL depends on the filter, and each dlq command runs it once.
        let statement = try database.prepare(sql)
        try statement.bind(values)
        var letters: [DeadLetter] = []
        while try statement.step() {
            letters.append(
                DeadLetter(
                    seq: statement.int64(at: 0),
                    sink: statement.string(at: 1),
                    eventID: statement.string(at: 2),
                    collection: statement.string(at: 3),
                    key: statement.string(at: 4),
                    body: statement.blob(at: 5),
                    attempts: statement.int(at: 6),
                    createdAt: statement.int64(at: 7),
                    deadAt: statement.int64(at: 8),
                    reason: statement.string(at: 9),
                    lastStatus: statement.isNull(at: 10) ? nil : statement.int(at: 10),
                    response: statement.blob(at: 11)
                )
            )
        }
        return letters
    }
}
