public import BridgeJSON
public import BridgeSystem
public import BridgeEvents
public import BridgeDirectus

/// Turns a page of activity rows into event lines: one line per (row, subscription) whose collection and event
/// match, in activity order, never coalesced (README.md "Gap-free delivery: activity mode").
///
/// `data` is the item as the subscription's query reads it now (the "state now" semantics of Directus's own socket
/// events). An item that still exists but no longer matches the filter gives no line, as Directus's socket gives
/// no message for it (docs/directus-protocol.md §5.3); an item that is gone gives the revision's snapshot when Directus
/// kept one, else null. Deletes carry the key and `data: null`. `delta` and revision snapshots hold only the fields the
/// query allows (``FieldAllowance``).
public struct ActivityEventBuilder: Sendable {
    /// A subscription and the activity id it starts after.
    public struct Target: Sendable {
        /// The subscription.
        public var subscription: ActivitySubscription
        /// Rows at or below this id are not emitted for it.
        public var startID: Int64

        /// Creates a target.
        public init(subscription: ActivitySubscription, startID: Int64) {
            self.subscription = subscription
            self.startID = startID
        }
    }

    private let targets: [Target]
    private let byCollection: [String: [Int]]

    /// Creates a builder for `targets`.
    public init(targets: [Target]) {
        self.targets = targets
        var byCollection: [String: [Int]] = [:]
        for (index, target) in targets.enumerated() {
            byCollection[target.subscription.collection, default: []].append(index)
        }
        self.byCollection = byCollection
    }

    /// The activity id subscription `uid` starts after, nil when it is not a target.
    public func startID(of uid: String) -> Int64? {
        targets.first { $0.subscription.uid == uid }?.startID
    }

    /// Whether `row` is of interest to any target (the rest are only resolved).
    public func matches(_ row: ActivityRow) -> Bool { !pairs(for: row).isEmpty }

    /// The targets (indexes) that emit `row`.
    private func pairs(for row: ActivityRow) -> [Int] {
        guard let change = row.change, let collection = row.collection, row.item != nil,
            let candidates = byCollection[collection]
        else { return [] }
        return candidates.filter { index in
            let target = targets[index]
            return row.id > target.startID && target.subscription.events.contains(change)
        }
    }

    /// What a page gave: its events, and the subscriptions whose items Directus refused to read (a permission
    /// or query error that retrying cannot fix), which got no lines from this page.
    public struct Output: Sendable {
        /// The events, in activity order.
        public var events: [EncodedEvent]
        /// Subscription uid → the refusal.
        public var refused: [String: DirectusError]
    }

    /// The events of `rows` (any order; emitted in id order) with `origin`, reading items through `source`.
    /// Retriable failures (Directus unreachable, 5xx) are thrown: the page is read again.
    public func events(
        for rows: [ActivityRow],
        origin: EventOrigin,
        source: any ActivitySource,
        receivedAt: Timestamp
    ) async throws(DirectusError) -> Output {
        let ordered = rows.sorted { $0.id < $1.id }
        var work: [(row: ActivityRow, target: Int)] = []
        var wantedKeys: [Int: [String]] = [:]
        var seenKeys: [Int: Set<ItemKey>] = [:]  // by bytes, as Directus tells keys apart (ItemKey)
        for row in ordered {
            for index in pairs(for: row) {
                work.append((row, index))
                if row.change != .delete, let key = row.item, seenKeys[index, default: []].insert(ItemKey(key)).inserted {
                    wantedKeys[index, default: []].append(key)
                }
            }
        }
        guard !work.isEmpty else { return Output(events: [], refused: [:]) }

        // Items now, per subscription; then which missing ones still exist (filtered out) or are gone.
        var current: [Int: [ItemKey: AnswerItem]] = [:]
        var tooLarge: [Int: Set<ItemKey>] = [:]
        var gone: [Int: Set<ItemKey>] = [:]
        var refused: [Int: DirectusError] = [:]
        for (index, keys) in wantedKeys.sorted(by: { $0.key < $1.key }) {
            let query = targets[index].subscription.query
            do throws(DirectusError) {
                var found: [ItemKey: AnswerItem] = [:]
                let read = try await source.items(query, keys: keys)
                for item in read.items {
                    if let key = query.key(of: item) { found[ItemKey(key)] = item }
                }
                current[index] = found
                let large = Set(read.tooLarge.map(ItemKey.init))
                tooLarge[index] = large
                let missing = keys.filter { found[ItemKey($0)] == nil && !large.contains(ItemKey($0)) }
                if !missing.isEmpty && !query.narrowsItems {
                    gone[index] = Set(missing.map(ItemKey.init))
                } else if !missing.isEmpty {
                    let existing = try await source.existingKeys(query, keys: missing)
                    gone[index] = Set(missing.map(ItemKey.init).filter { !existing.contains($0) })
                }
            } catch  where error.isForbidden || (error.kind == .rejected && error.status == 400) {
                // Forbidden collection or fields, invalid query: the socket refused this subscription too. Reading
                // the page again would stall every other subscription forever.
                refused[index] = error
            }
        }
        var snapshotIDs: [Int64] = []
        for (row, index) in work where row.change != .delete {
            if let key = row.item, gone[index]?.contains(ItemKey(key)) == true { snapshotIDs.append(row.id) }
        }
        let snapshots = snapshotIDs.isEmpty ? [:] : try await source.revisionSnapshots(activityIDs: snapshotIDs)

        var events: [EncodedEvent] = []
        events.reserveCapacity(work.count)
        for (row, index) in work where refused[index] == nil {
            guard let change = row.change, let key = row.item else { continue }
            let subscription = targets[index].subscription
            // `data` as compact JSON: the item from its answer's bytes, a revision's snapshot from its small tree.
            var data: [UInt8] = []
            if change != .delete {
                if let item = current[index]?[ItemKey(key)] {
                    subscription.query.appendShaped(item, to: &data)
                } else if tooLarge[index]?.contains(ItemKey(key)) == true {
                    // too large to read even alone: `null`, the line says what is known (the source logged it)
                } else if gone[index]?.contains(ItemKey(key)) == true {
                    snapshots[row.id].map(subscription.query.project)?.serialize(into: &data)
                } else {
                    continue  // still exists but no longer matches the filter: no line, like Directus's socket
                }
            }
            let id = EventID.activity(row.id, subscriptionSuffix: subscription.idSuffix)
            let time = row.timestamp ?? receivedAt
            let fields = EventLineFields(
                identifier: .text(id),
                event: change,
                collection: subscription.collection,
                key: key,
                origin: origin,
                seq: row.id,
                time: time,
                receivedAt: receivedAt,
                subscription: subscription.uid,
                user: row.user
            )
            var body: [UInt8] = []  // sized by the writer (see `EventQueue.byteCount(of:)`)
            EventLineWriter.append(
                fields,
                data: data,
                deltaValue: change == .delete ? nil : row.delta.map(subscription.query.project),
                newline: false,
                to: &body
            )
            events.append(EncodedEvent(fields: fields, body: body))
        }
        var refusals: [String: DirectusError] = [:]
        for (index, error) in refused { refusals[targets[index].subscription.uid] = error }
        return Output(events: events, refused: refusals)
    }
}
