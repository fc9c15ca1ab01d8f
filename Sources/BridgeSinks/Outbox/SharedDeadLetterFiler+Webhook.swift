internal import BridgeNATS
internal import BridgeStore

// MARK: - A webhook sink's dead letters in the bucket (`SharedSinkState.webhookDeadLetters`)

extension SharedDeadLetterFiler: WebhookDeadLetterPlace {
    /// Letters `dlq replay` marked in the bucket go into the sink's outbox (read at the turn's load).
    package func takeInReplays(into store: OutboxStore, now: Int64) throws -> Int {
        let marked = try lettersToReplay()
        guard !marked.isEmpty else { return 0 }
        let rows = try store.requeue(marked.map(\.letter), now: now)
        for stored in marked {
            if let seq = rows[stored.letter.eventID] { tookIn(stored, seq: seq) }
        }
        return marked.count
    }

    /// Before the commit's rows leave the outbox, their dead letters are filed in the bucket (fenced): each
    /// `.deadLetter` write becomes `.removed`. Letters the bucket cannot hold stay `.deadLetter` (`webhooks.db`).
    /// Throws when the bucket does not take them (or another bridge took over): the commit waits, the rows stay.
    package func file(_ writes: inout [OutboxWrite], from store: OutboxStore, sink: String) throws {
        let positions = writes.indices.filter { writes[$0].isDeadLetter }
        guard !positions.isEmpty else { return }
        let rows = try store.letters(for: positions.map { writes[$0] }, sink: sink)
        // A row that is gone has nothing to file: its write deletes nothing.
        let filed = positions.filter { rows[writes[$0].seq] != nil }
        let local = try file(filed.compactMap { rows[writes[$0].seq] })
        for (index, position) in filed.enumerated() where !local.contains(index) {
            writes[position] = .removed(seq: writes[position].seq)
        }
    }

    /// The bucket's count of the sink's letters; a committed replay that was delivered leaves the bucket.
    package func count(into depths: WebhookDepths, stepCount: Int?, committed writes: [OutboxWrite]) {
        if !writes.isEmpty { committed(writes) }
        depths.deadLetters = deadLetterCount ?? 0
    }

    package func failureMessage(for error: any Error) -> String {
        error is SQLiteError
            ? "webhook outbox failed; retrying"
            : "webhook dead letters cannot be written to the shared state; retrying"
    }
}
