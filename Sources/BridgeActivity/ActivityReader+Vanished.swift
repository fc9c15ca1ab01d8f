internal import BridgeSystem
internal import BridgeEvents
internal import BridgeJSON

/// The deletes of a collection's items after a snapshot's watermark, of items that existed at it, read from the
/// activity log above the watermark in activity order: a delete of a key with no create of that key above the
/// watermark before it (then it did not exist at the watermark). Each key once.
struct SnapshotDeletions {
    /// The highest activity id read.
    var position: Int64
    /// Keys created above the watermark (their deletes are of items newer than the snapshot).
    var createdAbove = Set<ItemKey>()  // by bytes (ItemKey), as Directus tells keys apart
    /// The keys deleted, in activity order.
    var keys: [String] = []
    private var listed = Set<ItemKey>()

    /// A scan from `watermark`.
    init(watermark: Int64) { position = watermark }

    /// Takes `rows` (of all collections, ascending, above `position`) up to `newest`.
    mutating func take(_ rows: [ActivityRow], of collection: String, upTo newest: Int64) {
        for row in rows where row.id <= newest {
            position = max(position, row.id)
            guard row.collection == collection, let key = row.item else { continue }
            switch row.action {
            case "create": createdAbove.insert(ItemKey(key))
            case "delete":
                if !createdAbove.contains(ItemKey(key)), listed.insert(ItemKey(key)).inserted { keys.append(key) }
            default: break
            }
        }
    }
}

extension ActivityReaderLoop {
    /// Reads the activity log after `deletions.position` up to the newest row at the time of this call into
    /// `deletions`; false when the bridge stops first. `stopping`: the bridge is stopping, each read is tried once
    /// (`retrying` tries none once the stop triggered); false when one fails.
    func scan(_ deletions: inout SnapshotDeletions, collection: String, stopping: Bool = false) async -> Bool {
        func read<T>(_ body: () async throws -> T) async -> T? {
            stopping ? try? await body() : await retrying("reading the activity log failed", body)
        }
        guard let newest = await read({ try await self.reader.source.newestActivityID() }) else { return false }
        let pageSize = reader.settings.pageSize
        while deletions.position < newest {
            let position = deletions.position
            guard let rows = await read({ try await self.reader.source.activity(after: position, limit: pageSize) })
            else { return false }
            deletions.take(rows, of: collection, upTo: newest)
            // Up to `newest`, not until a short page: a server (or a gateway before it) may cap every answer below
            // our `limit` while rows after it are still there.
            guard let last = rows.last, last.id > position else { break }
            // A page may end below `newest`'s rows of this page (take stops at newest): go on from its last row.
            deletions.position = max(deletions.position, min(last.id, newest))
        }
        return true
    }

    /// The keys of items that existed at a snapshot's watermark but that no page of it held: deleted after the
    /// watermark, before the snapshot read their page (a sink that is full, slow or down holds a snapshot back for as
    /// long as it takes, while Directus goes on deleting). Read from the activity log above the watermark, up to the
    /// newest row at the time of this call (`SnapshotDeletions`), after the last page: a delete that hid an item from
    /// its page committed before that page was read, so before this read. In activity order, each key once. Nil when
    /// the bridge stops first.
    ///
    /// `held` is the hash of every key the pages held, and of every key given its line already
    /// (`vanishedUpTo`): the keys of a million-item snapshot as `Int`s take about 12 MB until the snapshot ends, where
    /// the keys themselves could take several times that.
    ///
    /// `heldEarlierUpTo`: the resume key of a snapshot an earlier run began. Up to that key its pages, durable in the
    /// sink, held every item that still existed when they were read, and gave the others their lines with those
    /// pages (`vanishedUpTo`), so a key at or before it (`SnapshotKeyOrder`) is not vanished here.
    func vanishedKeys(
        collection: String, watermark: Int64, held: Set<Int>, heldEarlierUpTo resumeKey: JSONValue? = nil
    ) async -> [String]? {
        var deletions = SnapshotDeletions(watermark: watermark)
        guard await scan(&deletions, collection: collection) else { return nil }
        return deletions.keys.filter { key in
            !held.contains(ItemKey(key).hashValue)
                && !(resumeKey.map { SnapshotKeyOrder.key(key, isAtOrBefore: $0) } ?? false)
        }
    }

    /// The keys at or before `last` (the page's last key) that were deleted after the watermark and that no page
    /// held — read from the log after the page was read, so each is gone for good (a later page cannot hold it) — and
    /// that have no line yet: they get theirs with this page, so that the page's position, once durable, covers
    /// them too and a restart after it owes them nothing (`heldEarlierUpTo`). `deletions` goes on from where the
    /// last page's read stopped; a delete committed below that position after it was read is only found by the
    /// last page's full read (`vanishedKeys`). Nil when the bridge stops first (`stopping`: when a read fails, see
    /// `scan`).
    func vanishedUpTo(
        _ last: JSONValue, deletions: inout SnapshotDeletions, collection: String, held: Set<Int>,
        heldEarlierUpTo resumeKey: JSONValue?, stopping: Bool = false
    ) async -> [String]? {
        guard await scan(&deletions, collection: collection, stopping: stopping) else { return nil }
        return deletions.keys.filter { key in
            !held.contains(ItemKey(key).hashValue) && SnapshotKeyOrder.key(key, isAtOrBefore: last)
                && !(resumeKey.map { SnapshotKeyOrder.key(key, isAtOrBefore: $0) } ?? false)
        }
    }
}
