package import BridgeSystem

// MARK: - Shared state (`state.backend: jetstream`): dead letters in the bucket

extension WebhookDeliveryService {
    /// Before this commit's rows leave the outbox, their dead letters are filed in the bucket (fenced): each
    /// `.deadLetter` write becomes `.removed`. Letters the bucket cannot hold stay `.deadLetter` (`webhooks.db`).
    /// Throws when the bucket does not take them (or another bridge took over): the commit waits, the rows stay.
    func fileDeadLetters(_ loop: inout Loop, in filer: SharedDeadLetterFiler) throws {
        let positions = loop.writes.indices.filter { if case .deadLetter = loop.writes[$0] { true } else { false } }
        guard !positions.isEmpty else { return }
        let rows = try store.letters(for: positions.map { loop.writes[$0] }, sink: sinkID)
        // A row that is gone has nothing to file: its write deletes nothing.
        let filed = positions.filter { rows[loop.writes[$0].seq] != nil }
        let local = try filer.file(filed.compactMap { rows[loop.writes[$0].seq] })
        for (index, position) in filed.enumerated() where !local.contains(index) {
            loop.writes[position] = .removed(seq: loop.writes[position].seq)
        }
    }

    /// Every poll: letters `dlq replay` marked in the bucket go into this sink's outbox (read at this turn's load).
    /// A failure is logged and tried again at the next poll; deliveries go on meanwhile.
    func takeInReplays(_ loop: inout Loop, from filer: SharedDeadLetterFiler, now: Int64) {
        do {
            let marked = try filer.lettersToReplay()
            loop.replaysFailing = false
            guard !marked.isEmpty else { return }
            let rows = try store.requeue(marked.map(\.letter), now: now)
            for stored in marked {
                if let seq = rows[stored.letter.eventID] { filer.tookIn(stored, seq: seq) }
            }
            loop.loadAfter = min(loop.loadAfter ?? loop.state.lastSeq, loop.state.lastSeq)
            logger.info(
                "replayed dead letters taken into the outbox",
                metadata: [LogKey.sink: sinkID, LogKey.count: marked.count])
        } catch {
            guard !loop.replaysFailing else { return }
            loop.replaysFailing = true
            logger.warning(
                "cannot read the replayed dead letters from the shared state; trying again at the next poll",
                metadata: [LogKey.sink: sinkID, LogKey.error: "\(error)"])
        }
    }
}
