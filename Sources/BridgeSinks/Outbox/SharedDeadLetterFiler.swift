internal import BridgeEvents
internal import BridgeNATS
package import BridgeSystem
internal import BridgeJSON
internal import Synchronization

/// One webhook sink's dead letters on shared state (docs/ARCHITECTURE.md "Shared state, lease and fencing"), for its
/// delivery service: files the letters its attempts give up in the bucket, takes letters `dlq replay` marked into
/// the outbox, and deletes each of those once it was delivered.
///
/// Filing is fenced like a cursor write: the letters first go into the sink's journal key, a compare-and-set on the
/// revision this term's takeover left (`SharedTermWriter`), and only then under their own keys; the journal is
/// emptied after. A bridge another one took over from cannot write the journal, so it files nothing; a letter left
/// in the journal by a bridge that died between the two writes is filed by the next term's takeover of the sink.
///
/// Used from the thread of the sink's `OutboxWriter` (filing, replays) and the delivery service's (the count); every
/// call but the count blocks on the bucket.
package final class SharedDeadLetterFiler: Sendable {
    /// The largest letter the bucket takes (its values may have 1 MiB; the journal wraps the letter). A larger one
    /// stays in `webhooks.db` on this machine, with an error logged.
    package static let largestLetter = 768 << 10

    private let sinkID: String
    private let shared: SharedSinkState
    private let logger: Logger
    private struct State {
        var started = false
        /// `<name>.dlq`'s revision when the letters were last listed (nil: list at the next poll).
        var listedAt: UInt64?
        /// Outbox rows taken in from letters marked for replay: the letter's key and revision.
        var replays: [Int64: (key: String, revision: UInt64)] = [:]
        /// This sink's dead letters in the bucket (nil until first listed).
        var count: Int?
    }

    private let state = Mutex(State())

    /// A filer for sink `sinkID`, reaching the bucket through `shared`.
    package init(sinkID: String, shared: SharedSinkState, logger: Logger) {
        self.sinkID = sinkID
        self.shared = shared
        self.logger = logger
    }

    /// This sink's dead letters in the bucket, as last listed and filed since (nil before the first listing).
    package var deadLetterCount: Int? { state.withLock { $0.count } }

    /// Files `letters` in the bucket. Returns the positions of those it cannot hold (larger than `largestLetter`, or
    /// an event id too long for a key): they stay dead letters of `webhooks.db`. Throws `FencedError` when another
    /// bridge took over, or the bucket's error: then nothing is lost, the rows stay in the outbox.
    package func file(_ letters: [DeadLetter]) throws -> Set<Int> {
        let term = try started()
        var local: Set<Int> = []
        var chunk: [(letter: DeadLetter, value: [UInt8])] = []
        var size = 0
        for (position, letter) in letters.enumerated() {
            let value = BucketDeadLetters.value(of: letter)
            guard value.count <= Self.largestLetter,
                KeyValueKey.isValid(term.keys.deadLetter(sink: sinkID, eventID: letter.eventID))
            else {
                local.insert(position)
                logger.error(
                    "dead letter too large for the shared state bucket; kept in webhooks.db on this machine only",
                    metadata: [LogKey.eventID: letter.eventID, LogKey.count: value.count])
                continue
            }
            if !chunk.isEmpty, size + value.count > Self.largestLetter {
                try file(chunk, term: term)
                chunk = []
                size = 0
            }
            chunk.append((letter, value))
            size += value.count
        }
        if !chunk.isEmpty { try file(chunk, term: term) }
        return local
    }

    /// Every poll: when `<name>.dlq` moved (and at the term's first poll) lists this sink's letters, counts the dead
    /// ones and returns those marked for replay that are not in the outbox yet.
    package func lettersToReplay() throws -> [BucketDeadLetters.Stored] {
        let term = try started()
        let letters = BucketDeadLetters(store: term.store, keys: term.keys)
        let mark = try letters.changeMark()
        guard mark != state.withLock({ $0.listedAt }) else { return [] }
        let entries = try letters.entries(sink: sinkID)
        return state.withLock { state in
            state.listedAt = mark
            state.count = entries.count { !$0.replay }
            let taken = Set(state.replays.values.map { "\($0.revision) \($0.key)" })
            return entries.filter { $0.replay && !taken.contains("\($0.revision) \($0.key)") }
        }
    }

    /// Notes that the replayed letter `stored` waits in the outbox as row `seq`.
    package func tookIn(_ stored: BucketDeadLetters.Stored, seq: Int64) {
        state.withLock { $0.replays[seq] = (stored.key, stored.revision) }
    }

    /// After a commit of `writes`: a replayed letter whose event was delivered is deleted from the bucket.
    package func committed(_ writes: [OutboxWrite]) {
        let delivered = state.withLock { state -> [(key: String, revision: UInt64)] in
            guard !state.replays.isEmpty else { return [] }
            var delivered: [(key: String, revision: UInt64)] = []
            for write in writes {
                guard let replay = state.replays[write.seq] else { continue }
                state.replays[write.seq] = nil
                if case .delivered = write { delivered.append(replay) }
            }
            return delivered
        }
        guard !delivered.isEmpty, let term = shared.term else { return }
        let letters = BucketDeadLetters(store: term.store, keys: term.keys)
        for replay in delivered {
            do {
                try letters.deleteDelivered(key: replay.key, revision: replay.revision)
            } catch {
                // Still marked: the next bridge to list it delivers it once more, with the same id.
                logger.warning(
                    "a replayed dead letter was delivered but could not be removed from the shared state",
                    metadata: [LogKey.error: "\(error)"])
            }
        }
    }

    // MARK: - Filing

    /// The term's access, after filing what a previous term left in the journal (once per term).
    private func started() throws -> SharedSinkState.Term {
        guard let term = shared.term else {
            throw NATSError(kind: .retriable, message: "the shared state is not reached yet")
        }
        guard !state.withLock({ $0.started }) else { return term }
        let journalKey = term.keys.deadLetterJournal(sink: sinkID)
        let left = term.writer.takenOver(journalKey).map(Self.letters(inJournal:)) ?? []
        if !left.isEmpty {
            let letters = BucketDeadLetters(store: term.store, keys: term.keys)
            for letter in left { try letters.file(letter) }
            try term.writer.writeFenced(journalKey, value: SharedStateKeys.emptyJournal)
            logger.info(
                "filed dead letters a previous active bridge left in the shared state journal",
                metadata: [LogKey.count: left.count])
        }
        state.withLock { $0.started = true }
        return term
    }

    private func file(_ chunk: [(letter: DeadLetter, value: [UInt8])], term: SharedSinkState.Term) throws {
        let journalKey = term.keys.deadLetterJournal(sink: sinkID)
        var journal = Array("{\"letters\":[".utf8)
        for (index, entry) in chunk.enumerated() {
            if index > 0 { journal.append(UInt8(ascii: ",")) }
            journal += entry.value
        }
        journal += Array("]}".utf8)
        try term.writer.writeFenced(journalKey, value: journal)
        let letters = BucketDeadLetters(store: term.store, keys: term.keys)
        var added = 0
        for entry in chunk where try letters.file(entry.letter) { added += 1 }
        try term.writer.writeFenced(journalKey, value: SharedStateKeys.emptyJournal)
        state.withLock { state in state.count = state.count.map { $0 + added } }
    }

    static func letters(inJournal bytes: [UInt8]) -> [DeadLetter] {
        guard let parsed = try? JSONValue.parse(bytes), let entries = parsed["letters"]?.arrayValue else { return [] }
        return entries.compactMap { BucketDeadLetters.letter(from: $0.serialized(), revision: 0)?.0 }
    }
}
