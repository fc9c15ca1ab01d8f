package import BridgeEvents
internal import BridgeJSON
internal import BridgeSystem
internal import Synchronization

/// Where a broker sink keeps the events its broker refused for good (too large, an invalid topic or subject) as
/// dead letters — which `directus-bridge dlq` lists, purges and replays — and where it finds the letters that
/// `dlq replay` handed back to it.
///
/// Calls block (SQLite, the shared bucket): the sink makes them on its runner's thread, never on Swift's
/// cooperative pool.
package protocol BrokerDeadLetters: Sendable {
    /// The sink's stable id (`SinkType.identity`), which its letters carry.
    var sink: String { get }
    /// Stores `letters` as dead letters. A letter with a `replay` was handed back by `dlq replay` and refused
    /// again: it leaves the replayed letters in the same step.
    func file(_ letters: [RefusedLetter]) throws
    /// Letters `dlq replay` handed back that this sink has not taken yet in this run, oldest first, about `limit`
    /// (a hint: the shared bucket hands over all it lists at once).
    func takeReplays(limit: Int) throws -> [DeadLetter]
    /// `replays` (as `takeReplays` returned them) were delivered: they are gone for good.
    func delivered(_ replays: [DeadLetter]) throws
}

/// An event the broker refused for good, as the dead letter to store.
package struct RefusedLetter: Sendable, Equatable {
    /// The letter.
    package var letter: DeadLetter
    /// The replayed letter it was sent from (as `takeReplays` returned it), nil for an event of the stream.
    package var replay: DeadLetter?

    /// Creates a refused letter.
    package init(letter: DeadLetter, replay: DeadLetter?) {
        self.letter = letter
        self.replay = replay
    }
}

extension DeadLetter {
    /// The letter of `event`, refused for good with `reason` at `deadAt` (Unix ms); sent from `replay` when it was a
    /// replayed letter (it keeps that letter's first time).
    package init(refused event: EncodedEvent, sink: String, reason: String, deadAt: Int64, replay: DeadLetter?) {
        self.init(
            seq: 0, sink: sink, eventID: event.id, collection: event.collection, key: event.key, body: event.body.bytes,
            attempts: (replay?.attempts ?? 0) + 1, createdAt: replay?.createdAt ?? event.receivedAt.unixMilliseconds,
            deadAt: deadAt, reason: reason, lastStatus: nil, response: [], event: event.event)
    }

    /// The event to send again for a replayed letter: same id, collection, key, change and body. (A letter without
    /// its change — not written by a broker sink — goes out as an update.)
    package var replayedEvent: EncodedEvent {
        let (micros, overflow) = createdAt.multipliedReportingOverflow(by: 1000)  // a value read from a file
        let time = Timestamp(microsecondsSinceEpoch: overflow ? 0 : micros)
        return EncodedEvent(
            id: eventID, event: event ?? .update, collection: collection, key: key, origin: .backfill, seq: nil,
            time: time, receivedAt: .now(), subscription: "", body: body)
    }
}

/// `state.backend: local`: a broker sink's dead letters in the `dead_letters` table of `<state_dir>/webhooks.db`
/// beside the webhooks' (`OutboxStore`), and the letters `dlq replay` handed back in its `outbox` table under the
/// sink's id (which no webhook delivery service reads: each reads its own sink's rows).
package final class LocalBrokerDeadLetters: BrokerDeadLetters {
    package let sink: String
    private let store: OutboxStore
    /// The highest outbox row taken in this run: each replayed row is sent once per run (a row not delivered when
    /// the run ends stays, and the next run sends it).
    private let taken = Mutex<Int64>(0)

    /// The letters of sink `sink` in `store`.
    package init(store: OutboxStore, sink: String) {
        self.store = store
        self.sink = sink
    }

    /// Commits the letters and fsyncs them: the store commits with `synchronous=NORMAL`, and the sink's cursor (a
    /// `synchronous=FULL` commit) moves past the refused events as soon as this returns.
    package func file(_ letters: [RefusedLetter]) throws {
        try store.fileDeadLetters(letters.map(\.letter), removingOutboxRows: letters.compactMap { $0.replay?.seq })
        try store.syncToDisk()
    }

    package func takeReplays(limit: Int) throws -> [DeadLetter] {
        let letters = try store.replayedLetters(sink: sink, after: taken.withLock { $0 }, limit: max(1, limit))
        if let last = letters.last { taken.withLock { $0 = max($0, last.seq) } }
        return letters
    }

    package func delivered(_ replays: [DeadLetter]) throws {
        try store.removeOutboxRows(replays.map(\.seq), sink: sink)
    }
}
