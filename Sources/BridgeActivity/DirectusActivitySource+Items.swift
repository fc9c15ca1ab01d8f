public import BridgeJSON
internal import BridgeEvents
public import BridgeDirectus

extension DirectusActivitySource {
    public func revisionSnapshots(activityIDs: [Int64]) async throws(DirectusError) -> [Int64: JSONValue] {
        guard revisionsReadable else { return [:] }
        let read = try await keyed(
            activityIDs, kind: "revisions", operation: "GET /activity",
            returned: { Set($0.items.compactMap { $0["id"]?.int64Value }) }
        ) { (chunk: [Int64], limit: Int) async throws(DirectusError) -> DirectusAnswer in
            let ids = chunk.map(String.init).joined(separator: ",")
            return try await self.api.get(
                "/activity",
                query: [("filter[id][_in]", ids), ("fields", "id,revisions.data"), ("limit", String(chunk.count))],
                maxResponseBytes: limit
            )
        }
        if !read.tooLarge.isEmpty {
            omitted("snapshot", collection: nil, keys: read.tooLarge.map(String.init))
        }
        // In place: only each row's first revision's `data` becomes a tree.
        var snapshots: [Int64: JSONValue] = [:]
        for answer in read.answers {
            answer.body.withUnsafeBytes { buffer in
                for row in answer.root.member("data", in: buffer)?.elements(in: buffer) ?? [] {
                    guard let members = row.members(["id", "revisions"], in: buffer),
                        let id = members[0]?.int64Value(in: buffer),
                        let data = members[1]?.elements(in: buffer)?.first?.member("data", in: buffer),
                        data.kind != .null,
                        let snapshot = try? JSONValue.parse(UnsafeRawBufferPointer(rebasing: buffer[data.offsets]))
                    else { continue }
                    snapshots[id] = snapshot
                }
            }
        }
        return snapshots
    }

    public func items(_ query: ItemQuery, keys: [String]) async throws(DirectusError) -> ItemRead {
        let path = itemsPath(query)
        let read = try await keyed(
            keys.map(ItemKey.init), kind: Self.itemsKind(query), operation: "GET " + path,
            returned: { Set($0.items.compactMap(query.key(of:)).map(ItemKey.init)) }
        ) { (chunk: [ItemKey], limit: Int) async throws(DirectusError) -> DirectusAnswer in
            try await self.api.get(path, query: query.parameters(keys: chunk.map(\.text)), maxResponseBytes: limit)
        }
        let tooLarge = read.tooLarge.map(\.text)
        if !tooLarge.isEmpty { omitted("data", collection: query.collection, keys: tooLarge) }
        return ItemRead(items: read.answers.flatMap(\.items), tooLarge: Set(tooLarge))
    }

    public func existingKeys(_ query: ItemQuery, keys: [String]) async throws(DirectusError) -> Set<ItemKey> {
        var found: Set<ItemKey> = []
        var pending = Self.batches(of: keys, at: api.rowLimit.capped(Self.keysPerRequest))
        while let chunk = pending.popLast() {
            // Primary keys only: an answer of at most 500 of them is far below any limit.
            let answer = try await api.get(
                itemsPath(query), query: query.existenceParameters(keys: chunk), maxResponseBytes: sizer.limits.normal)
            let returned = Set(answer.items.compactMap(query.key(of:)).map(ItemKey.init))
            found.formUnion(returned)
            if let rest = Self.cutShort(chunk.map(ItemKey.init), returned: returned) { pending.append(rest.map(\.text)) }
        }
        return found
    }

    public func itemsPage(_ query: ItemQuery, after: JSONValue?, limit: Int) async throws(DirectusError) -> ItemsPage {
        let path = itemsPath(query)
        let kind = Self.itemsKind(query)
        let limits = sizer.limits
        var page = ItemsPage(entries: [])
        var position = after
        while page.entries.count < limit {
            let count = min(limit - page.entries.count, sizer.keysPerRequest(kind, maximum: api.rowLimit.capped(limit)))
            let parameters = query.pageParameters(after: position, limit: count)
            let answer: DirectusAnswer
            do {
                answer = try await api.get(path, query: parameters, maxResponseBytes: limits.normal)
                sizer.record(kind, bytes: answer.bytes, keys: count)
            } catch where error.kind == .tooLarge && count > 1 {
                sizer.tooLarge(kind, keys: count)
                report(.split(operation: "GET " + path, keys: count))
                continue
            } catch where error.kind == .tooLarge {
                do {
                    answer = try await api.get(path, query: parameters, maxResponseBytes: limits.single)
                } catch where error.kind == .tooLarge {
                    // Too large even alone: its key, read on its own, lets the snapshot name it and go on after it.
                    let keys = try await api.get(
                        path, query: query.pageKeyParameters(after: position), maxResponseBytes: limits.normal)
                    guard let key = keys.items.first?[query.primaryKey] else { break }
                    omitted("data", collection: query.collection, keys: [key.keyString ?? key.serializedString()])
                    page.entries.append(.tooLarge(key: key))
                    position = key
                    continue
                }
            }
            if position == nil, let total = answer.value(at: "meta", "filter_count")?.intValue { page.total = total }
            let items = answer.items
            page.entries += items.map(ItemsPage.Entry.item)
            // Only an empty answer ends the collection: one shorter than asked may be a server (or a gateway before
            // it) that caps every answer below our `limit`, and the items after it are still there.
            guard let last = items.last?[query.primaryKey], last != position else { break }
            position = last
        }
        return page
    }

    /// The kind of read items of `query` are sized as: their weight depends on the collection and the fields.
    package static func itemsKind(_ query: ItemQuery) -> String {
        "items " + query.collection + " " + (query.fields?.joined(separator: ",") ?? "*")
    }

    /// Reads `keys` in requests whose answers fit the normal limit: batches of at most `keysPerRequest` keys and
    /// `keyBytesPerRequest` URL bytes, fewer as the sizer learns; an answer over the limit is asked for again in
    /// halves; a key over it alone is asked for with the single limit, else returned in `tooLarge`.
    ///
    /// `returned` names the keys an answer holds: the keys of a chunk that an answer holding some of them left out are
    /// asked for again (`cutShort`), since a server or a gateway before it may cap every answer below our `limit`;
    /// only an answer that holds none of the keys asked for says that they are not there (or not matching).
    package func keyed<Key: Hashable & Sendable>(
        _ keys: [Key],
        kind: String,
        operation: String,
        returned: (DirectusAnswer) -> Set<Key>,
        read: ([Key], Int) async throws(DirectusError) -> DirectusAnswer
    ) async throws(DirectusError) -> (answers: [DirectusAnswer], tooLarge: [Key]) {
        let limits = sizer.limits
        var answers: [DirectusAnswer] = []
        var tooLarge: [Key] = []
        var keys = keys
        var start = 0
        while start < keys.count {
            let maximum = sizer.keysPerRequest(kind, maximum: api.rowLimit.capped(Self.keysPerRequest))
            let count = Self.batchLength(keys[start...], at: maximum)
            let chunk = Array(keys[start..<start + count])
            do {
                let answer = try await read(chunk, limits.normal)
                sizer.record(kind, bytes: answer.bytes, keys: count)
                answers.append(answer)
                if let rest = Self.cutShort(chunk, returned: returned(answer)) { keys += rest }
            } catch where error.kind == .tooLarge && count > 1 {
                sizer.tooLarge(kind, keys: count)
                report(.split(operation: operation, keys: count))
                continue
            } catch where error.kind == .tooLarge {
                do {
                    answers.append(try await read(chunk, limits.single))
                } catch where error.kind == .tooLarge {
                    tooLarge += chunk
                }
            }
            start += count
        }
        return (answers, tooLarge)
    }

    /// The keys of `chunk` to ask for again: those an answer that held some (but not all) of them left out. Nil when
    /// it held all, or none (then the rest are not there). Each retry asks for fewer keys, so it ends.
    package static func cutShort<Key: Hashable>(_ chunk: [Key], returned: Set<Key>) -> [Key]? {
        let rest = chunk.filter { !returned.contains($0) }
        return rest.isEmpty || rest.count == chunk.count ? nil : rest
    }

    /// How many of `keys` go into the next request: at most `maximum`, and (for text keys) at most
    /// `keyBytesPerRequest` encoded bytes — a key costs its percent-encoded length, at most three bytes per byte,
    /// plus the quotes and comma around it. Always at least one.
    package static func batchLength<Key>(_ keys: ArraySlice<Key>, at maximum: Int) -> Int {
        var count = 0
        var bytes = 0
        for key in keys.prefix(max(1, maximum)) {
            // Text keys come as `String`s or as `ItemKey`s (the items of a batch of changes).
            let text = (key as? String) ?? (key as? ItemKey)?.text
            let cost = text.map { $0.utf8.count * 3 + 9 } ?? 0
            if count > 0 && bytes + cost > keyBytesPerRequest { break }
            count += 1
            bytes += cost
        }
        return max(1, count)
    }

    /// Splits `keys` into requests of at most `keysPerRequest` keys and `keyBytesPerRequest` encoded bytes.
    package static func batches(of keys: [String], at maximum: Int = keysPerRequest) -> [[String]] {
        var batches: [[String]] = []
        var start = 0
        while start < keys.count {
            let count = batchLength(keys[start...], at: maximum)
            batches.append(Array(keys[start..<start + count]))
            start += count
        }
        return batches
    }

    private func omitted(_ part: String, collection: String?, keys: [String]) {
        report(.omitted(OmittedForSize(part: part, collection: collection, keys: keys, limit: sizer.limits.single)))
    }

    private func itemsPath(_ query: ItemQuery) -> String { "/items/" + URLQuery.escape(query.collection) }
}
