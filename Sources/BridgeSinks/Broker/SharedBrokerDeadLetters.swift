internal import Synchronization

/// `state.backend: jetstream`: a broker sink's dead letters in the shared bucket, as a webhook sink's are
/// (`SharedDeadLetterFiler`: filed through the sink's fenced journal, so a bridge another one took over from files
/// nothing), and the letters `dlq replay` marked there, sent straight from the bucket: no local outbox holds them,
/// so a failover loses none (a marked letter is deleted only once delivered; the next active bridge sends one it
/// finds still marked again, with the same id).
///
/// A letter the bucket cannot hold (larger than `SharedDeadLetterFiler.largestLetter`) stays in `webhooks.db` on
/// this machine, with an error logged, as a webhook's does.
package final class SharedBrokerDeadLetters: BrokerDeadLetters {
    package let sink: String
    private let filer: SharedDeadLetterFiler
    private let local: OutboxStore
    /// Numbers the replays taken from the bucket (the filer tracks each under one, as it tracks a webhook's outbox
    /// rows).
    private let lastHandle = Mutex<Int64>(0)

    /// The letters of sink `sink` through `filer`; `local` keeps those the bucket cannot hold.
    package init(filer: SharedDeadLetterFiler, local: OutboxStore, sink: String) {
        self.filer = filer
        self.local = local
        self.sink = sink
    }

    package func file(_ letters: [RefusedLetter]) throws {
        let refused = letters.map(\.letter)
        let kept = try filer.file(refused)
        if !kept.isEmpty {
            try local.fileDeadLetters(kept.sorted().map { refused[$0] }, removingOutboxRows: [])
            try local.syncToDisk()  // as `LocalBrokerDeadLetters.file`: on disk before the cursor moves
        }
        // A replay refused again was filed anew under its key, which replaced the mark: the filer forgets it.
        filer.committed(letters.compactMap { $0.replay.map { OutboxWrite.removed(seq: $0.seq) } })
    }

    package func takeReplays(limit: Int) throws -> [DeadLetter] {
        try filer.lettersToReplay().map { stored in
            let handle = lastHandle.withLock { last in
                last += 1
                return last
            }
            filer.tookIn(stored, seq: handle)
            var letter = stored.letter
            letter.seq = handle
            return letter
        }
    }

    package func delivered(_ replays: [DeadLetter]) throws {
        filer.committed(replays.map { .delivered(seq: $0.seq) })
    }
}
