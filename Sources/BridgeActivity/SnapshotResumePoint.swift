public import BridgeJSON

/// Where a pending snapshot resumes, as read back from `cursor.db` or the shared bucket, checked before it is used:
/// the file or the bucket may be damaged, or written by hand (docs/RELIABILITY.md, "Files another user controls").
/// A recorded point that fails a check is `damaged`: the snapshot then starts from its first page, which repeats
/// lines the sink holds but loses none, and the start says so.
public enum SnapshotResumePoint: Sendable, Equatable {
    /// No page of the snapshot is durable: it starts from its first page.
    case none
    /// After `key`, the last key of the last page the sink holds (a number or a string, as Directus answered it),
    /// `lines` of the snapshot in the sink.
    case after(JSONValue, lines: Int64)
    /// A recorded point the snapshot cannot go on from, and why (no part of the value itself: it may be huge).
    case damaged(String)

    /// The longest resume key taken, in bytes of its JSON text. It goes into the page's filter in the URL, and Node
    /// refuses a request head over 16 KiB; percent-encoded, 4 KiB of key nearly fills it. A longer one would be
    /// refused on every read, and the snapshot would retry forever.
    public static let maximumKeyBytes = 4096

    /// The most lines a snapshot is taken to have in its sink: 2⁵³, exact in every JSON reader (`status --json`),
    /// far above any collection and far enough below `Int64.max` that counting on from it cannot overflow (the
    /// count went on from `Int64.max` and trapped).
    public static let maximumLines: Int64 = 1 << 53

    /// The point recorded as `after` (JSON text, nil when none) with `lines`.
    public init(after text: String?, lines: Int64) {
        guard let text else {
            self = .none
            return
        }
        let bytes = text.utf8.count
        guard bytes <= Self.maximumKeyBytes else {
            self = .damaged("a key of \(bytes) bytes, more than a request can carry (\(Self.maximumKeyBytes))")
            return
        }
        guard let key = try? JSONValue.parse(text) else {
            self = .damaged("the key is not JSON")
            return
        }
        switch key {
        case .string: break
        case .number(let number) where number.int64Value != nil: break
        default:
            // `null` would page `_gt: null`, which no row matches, and a number beyond every integer key (`1e300`,
            // 10^23) none either: the snapshot would end at once, every item skipped. Directus's integer keys are
            // at most 64 bits (`bigInteger`).
            self = .damaged("the key is neither a 64-bit integer nor a string")
            return
        }
        guard (0...Self.maximumLines).contains(lines) else {
            self = .damaged("a line count of \(lines), outside 0…\(Self.maximumLines)")
            return
        }
        self = .after(key, lines: lines)
    }

    /// Whether `key` and `other` are keys of one kind (both numbers or both strings): a resume key of the other kind
    /// than the collection's keys was recorded for another collection (a subscription's `uid` moved to it) or
    /// written by hand, and a database compares it with no key as the pages need (SQLite puts every number before
    /// any text, so `id > "b-500"` matches no integer key; PostgreSQL refuses the read, again and again).
    public static func sameKind(_ key: JSONValue, _ other: JSONValue) -> Bool {
        switch (key, other) {
        case (.number, .number), (.string, .string): true
        default: false
        }
    }
}

extension SubscriptionCursorState {
    /// Where a pending snapshot of this state resumes when the subscription reads `collection`, checked
    /// (`SnapshotResumePoint`). A point recorded for another collection — the subscription's `uid` moved to another
    /// one between runs — or for one not known (written before `cursor.db` version 6, or by an older bridge into the
    /// shared bucket) is `damaged`: its key may match keys of the same kind here and skip every item up to it.
    public func resumePoint(of collection: String) -> SnapshotResumePoint {
        let point = SnapshotResumePoint(after: snapshotAfter, lines: snapshotLines)
        guard case .after = point else { return point }
        guard let recorded = snapshotCollection else {
            return .damaged("the resume point was recorded without its collection (by an older bridge)")
        }
        guard recorded == collection else {
            // Directus's collection names are at most 64 characters; one longer was written by hand and is not shown.
            let name = recorded.utf8.count <= 64 ? "collection \(recorded)" : "another collection"
            return .damaged("the resume point was recorded for \(name), the subscription now reads \(collection)")
        }
        return point
    }
}
