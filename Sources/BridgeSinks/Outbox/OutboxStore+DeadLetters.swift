internal import BridgeStore
internal import BridgeEvents
internal import BridgeJSON

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
                    try Self.queue(letter, now: now, in: database)
                    try database.run("DELETE FROM dead_letters WHERE seq = ?", [.integer(letter.seq)])
                }
                return letters
            }
            for sink in Set(letters.map(\.sink)) { state.depth[sink] = nil }  // counted again on next use
            return letters
        }
    }

    /// Shared state: puts `letters` (marked for replay in the bucket) into their sink's outbox, as `replay` does,
    /// in one transaction. Returns each letter's event id with the seq of the row that now delivers it (the one
    /// already waiting under that id, if any).
    package func requeue(_ letters: [DeadLetter], now: Int64) throws -> [String: Int64] {
        guard !letters.isEmpty else { return [:] }
        return try withState { state in
            let database = state.database
            let rows = try database.transaction { () throws -> [String: Int64] in
                var rows: [String: Int64] = [:]
                for letter in letters {
                    try Self.queue(letter, now: now, in: database)
                    rows[letter.eventID] = try database.query(
                        "SELECT seq FROM outbox WHERE sink = ? AND event_id = ?",
                        [.text(letter.sink), .text(letter.eventID)]
                    ) { $0.int64(at: 0) }.first
                }
                return rows
            }
            for sink in Set(letters.map(\.sink)) { state.depth[sink] = nil }  // counted again on next use
            return rows
        }
    }

    /// The dead letters the `.deadLetter` writes among `writes` make of their outbox rows of `sink`, by row: what the
    /// shared bucket files before the rows leave the outbox.
    package func letters(for writes: [OutboxWrite], sink: String) throws -> [Int64: DeadLetter] {
        try withState { state in
            var letters: [Int64: DeadLetter] = [:]
            for write in writes {
                guard
                    case .deadLetter(let seq, let attempts, let deadAt, let reason, let lastStatus, let response) = write
                else { continue }
                let rows = try state.database.query(
                    "SELECT event_id, collection, item_key, body, created_at FROM outbox WHERE seq = ?", [.integer(seq)]
                ) { row in
                    DeadLetter(
                        seq: seq, sink: sink, eventID: row.string(at: 0), collection: row.string(at: 1),
                        key: row.string(at: 2), body: row.blob(at: 3), attempts: attempts, createdAt: row.int64(at: 4),
                        deadAt: deadAt, reason: reason, lastStatus: lastStatus, response: response)
                }
                letters[seq] = rows.first
            }
            return letters
        }
    }

    /// Queues `letter` in its sink's outbox again: same event id and body, attempts from zero, due at `now`.
    private static func queue(_ letter: DeadLetter, now: Int64, in database: SQLiteDatabase) throws {
        // OR IGNORE: an event id already waiting in the outbox again is not queued twice.
        try database.run(
            """
            INSERT OR IGNORE INTO outbox (sink, event_id, collection, item_key, body, attempts,
                next_attempt_at, created_at, event) VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?)
            """,
            [
                .text(letter.sink), .text(letter.eventID), .text(letter.collection), .text(letter.key),
                .blob(letter.body), .integer(now), .integer(now), letter.event.map { .text($0.rawValue) } ?? .null,
            ]
        )
    }

    /// Events waiting in the outbox of `sinks` (for `dlq purge --dry-run --sink` of a sink no longer configured).
    package func outboxCount(sinks: [String]) throws -> Int {
        try sinks.reduce(0) { $0 + (try outboxCount(sink: $1)) }
    }

    /// Deletes every event waiting in the outbox of `sinks`, in one transaction; returns how many. For sinks that are
    /// no longer configured (`dlq purge --sink`): their rows — replayed letters, or events queued before the sink
    /// moved — would otherwise wait forever. Never called for a configured sink, whose rows are being delivered.
    package func dropOutbox(sinks: [String]) throws -> Int {
        try withState { state in
            let database = state.database
            let dropped = try database.transaction { () throws -> Int in
                try sinks.reduce(0) { $0 + (try database.run("DELETE FROM outbox WHERE sink = ?", [.text($1)])) }
            }
            for sink in sinks { state.depth[sink] = nil }
            return dropped
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
        if !filter.sinks.isEmpty {
            conditions.append("sink IN (\(Array(repeating: "?", count: filter.sinks.count).joined(separator: ", ")))")
            values.append(contentsOf: filter.sinks.map { .text($0) })
        }
        let whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let sql = """
            SELECT seq, sink, event_id, collection, item_key, body, attempts, created_at, dead_at, reason, last_status,
                response, event FROM dead_letters\(whereClause) ORDER BY seq
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
                    response: statement.blob(at: 11),
                    event: statement.optionalString(at: 12).flatMap(ChangeEvent.init(rawValue:))
                )
            )
        }
        return letters
    }
}
