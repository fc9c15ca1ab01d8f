internal import BridgeSystem
internal import BridgeEvents
internal import BridgeJSON

extension ActivityReaderLoop {
    /// The keys of items that existed at a snapshot's watermark but that no page of it held: deleted after the
    /// watermark, before the snapshot read their page (a sink that is full, slow or down holds a snapshot back for as
    /// long as it takes, while Directus goes on deleting). Read from the activity log above the watermark, up to the
    /// newest row at the time of this call: a delete of a key no page held, with no create of that key above the
    /// watermark before it (then it did not exist at the watermark). In activity order, each key once. Nil when the
    /// bridge stops first.
    ///
    /// `held` is the hash of every key the pages held (the keys of a million-item snapshot as `Int`s take about
    /// 12 MB until the snapshot ends, where the keys themselves could take several times that).
    ///
    /// `heldEarlierUpTo`: the resume key of a snapshot an earlier run began. Its pages, durable in the sink, held
    /// every item up to that key that still existed when they were read, so a key at or before it
    /// (`SnapshotKeyOrder`) is not vanished here: an item deleted after its page was read already has its line.
    func vanishedKeys(
        collection: String, watermark: Int64, held: Set<Int>, heldEarlierUpTo resumeKey: JSONValue? = nil
    ) async -> [String]? {
        guard
            let newest = await retrying(
                "reading the activity log failed", { try await self.reader.source.newestActivityID() })
        else { return nil }
        let pageSize = reader.settings.pageSize
        var createdAbove = Set<String>()
        var listed = Set<String>()
        var vanished: [String] = []
        var after = watermark
        while after < newest {
            let position = after
            guard
                let rows = await retrying(
                    "reading the activity log failed",
                    { try await self.reader.source.activity(after: position, limit: pageSize) })
            else { return nil }
            for row in rows where row.id <= newest && row.collection == collection {
                guard let key = row.item else { continue }
                switch row.action {
                case "create": createdAbove.insert(key)
                case "delete":
                    let heldEarlier = resumeKey.map { SnapshotKeyOrder.key(key, isAtOrBefore: $0) } ?? false
                    if !createdAbove.contains(key), !held.contains(key.hashValue), !heldEarlier,
                        listed.insert(key).inserted
                    {
                        vanished.append(key)
                    }
                default: break
                }
            }
            guard rows.count == pageSize, let last = rows.last, last.id > position else { break }
            after = last.id
        }
        return vanished
    }
}
