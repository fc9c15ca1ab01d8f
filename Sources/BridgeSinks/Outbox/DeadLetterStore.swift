/// Where webhook dead letters are kept, as `directus-bridge dlq` reads and changes them: `OutboxStore` (`local`,
/// the `dead_letters` table of `<state_dir>/webhooks.db`) or `BucketDeadLetters` (`state.backend: jetstream`, the
/// shared bucket, so that a dead letter outlives the machine that wrote it).
///
/// Calls block (a disk, a request to a server): call them off Swift's cooperative pool.
package protocol DeadLetterStore: Sendable {
    /// The dead letters matching `filter`, oldest first.
    func deadLetters(matching filter: DeadLetterFilter) throws -> [DeadLetter]
    /// Hands the matching letters back for delivery — same event id and body, attempts from zero — and removes them
    /// from the dead letters. Returns the letters handed back.
    func replay(matching filter: DeadLetterFilter, now: Int64) throws -> [DeadLetter]
    /// Deletes the matching letters; returns them.
    func purge(matching filter: DeadLetterFilter) throws -> [DeadLetter]
}

extension OutboxStore: DeadLetterStore {}

extension DeadLetterFilter {
    /// Whether `letter` meets every condition (the bucket's letters are filtered here; SQLite filters in its query).
    /// Texts compare byte for byte, as SQLite does: names that differ only in their Unicode normalisation differ.
    package func matches(_ letter: DeadLetter) -> Bool {
        (collection.map { $0.utf8.elementsEqual(letter.collection.utf8) } ?? true)
            && (since.map { letter.deadAt >= $0 } ?? true)
            && (ids.isEmpty || ids.contains { $0.utf8.elementsEqual(letter.eventID.utf8) })
            && (sinks.isEmpty || sinks.contains { $0.utf8.elementsEqual(letter.sink.utf8) })
    }
}
