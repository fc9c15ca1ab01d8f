internal import BridgeStore
internal import BridgeEvents
internal import BridgeJSON

// MARK: - A broker sink's dead letters (`LocalBrokerDeadLetters`, on the sink runner's thread)

extension OutboxStore {
    /// Stores `letters` in the dead letters and, in the same transaction, removes the outbox rows `replayRows`
    /// (letters `dlq replay` had handed back that the broker refused again: they are dead letters again). A letter
    /// replaces one of its sink with the same event id (the event refused again after a restart before its cursor
    /// moved), as a key of the shared bucket does.
    package func fileDeadLetters(_ letters: [DeadLetter], removingOutboxRows replayRows: [Int64]) throws {
        guard !letters.isEmpty || !replayRows.isEmpty else { return }
        try withState { state in
            let database = state.database
            try database.transaction {
                for letter in letters {
                    try database.run(Self.replacedLetterSQL, [.text(letter.sink), .text(letter.eventID)])
                    try database.run(
                        """
                        INSERT INTO dead_letters (sink, event_id, collection, item_key, body, attempts, created_at,
                            dead_at, reason, last_status, response, event)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, x'', ?)
                        """,
                        [
                            .text(letter.sink), .text(letter.eventID), .text(letter.collection), .text(letter.key),
                            .blob(letter.body), .integer(Int64(letter.attempts)), .integer(letter.createdAt),
                            .integer(letter.deadAt), .text(letter.reason),
                            letter.event.map { .text($0.rawValue) } ?? .null,
                        ]
                    )
                }
                for seq in replayRows { try database.run("DELETE FROM outbox WHERE seq = ?", [.integer(seq)]) }
            }
            for sink in Set(letters.map(\.sink)) { state.depth[sink] = nil }  // counted again on next use
        }
    }

    /// The outbox rows of `sink` above `after`, oldest first, at most `limit`: for a broker sink, the letters
    /// `dlq replay` handed back, each as a letter whose `seq` is its outbox row (the outbox keeps no reason and
    /// counts attempts from zero again).
    package func replayedLetters(sink: String, after: Int64, limit: Int) throws -> [DeadLetter] {
        try withState { state in
            try state.database.query(Self.replayedLettersSQL, [.text(sink), .integer(after), .integer(Int64(limit))]) {
                row in
                DeadLetter(
                    seq: row.int64(at: 0), sink: sink, eventID: row.string(at: 1), collection: row.string(at: 2),
                    key: row.string(at: 3), body: row.blob(at: 4), attempts: 0, createdAt: row.int64(at: 5),
                    deadAt: row.int64(at: 5), reason: "", lastStatus: nil, response: [],
                    event: row.optionalString(at: 6).flatMap(ChangeEvent.init(rawValue:)))
            }
        }
    }

    /// The letter of the same sink and event that a new one replaces. Through the `(sink, event_id)` index: an
    /// oversized import refuses thousands of events, and a scan of the table per letter made filing them quadratic
    /// (filing 20,000 letters took 35 s on the runner's thread, holding the store's lock).
    static let replacedLetterSQL = "DELETE FROM dead_letters WHERE sink = ? AND event_id = ?"

    /// A broker sink's replayed letters, through the `(sink, event_id)` index: the sink polls every second, and along
    /// the rowid range (as a webhook's `pending` reads its own rows) it would read every row of a webhook's backlog
    /// each time, under the store's lock — a broker sink's rows are the few letters `dlq replay` handed back.
    static let replayedLettersSQL = """
        SELECT seq, event_id, collection, item_key, body, created_at, event FROM outbox
        WHERE sink = ? AND seq > ? ORDER BY seq LIMIT ?
        """

    /// Removes the outbox rows `seqs` (replayed letters a broker sink delivered), in one transaction.
    package func removeOutboxRows(_ seqs: [Int64], sink: String) throws {
        guard !seqs.isEmpty else { return }
        try withState { state in
            let database = state.database
            try database.transaction {
                for seq in seqs { try database.run("DELETE FROM outbox WHERE seq = ?", [.integer(seq)]) }
            }
            state.depth[sink] = nil
        }
    }
}
