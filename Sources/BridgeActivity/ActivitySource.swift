public import BridgeJSON
internal import BridgeEvents
public import BridgeDirectus

/// The Directus reads the activity reader makes; `DirectusActivitySource` does them over REST, tests use a fake.
public protocol ActivitySource: Sendable {
    /// The newest activity id (0 when the log is empty).
    func newestActivityID() async throws(DirectusError) -> Int64
    /// The oldest activity id still in the log (nil when it is empty).
    func oldestActivityID() async throws(DirectusError) -> Int64?
    /// Up to `limit` rows with an id above `id`, in id order (fewer only when the log has no more).
    func activity(after id: Int64, limit: Int) async throws(DirectusError) -> [ActivityRow]
    /// Up to `limit` rows with an id in one of `ranges` (ascending, disjoint), in id order: gaps from transactions
    /// that committed late. One range costs the same whatever its width.
    func activity(in ranges: [ClosedRange<Int64>], limit: Int) async throws(DirectusError) -> [ActivityRow]
    /// Revision snapshots (`directus_revisions.data`) by activity id, for items that are gone.
    func revisionSnapshots(activityIDs: [Int64]) async throws(DirectusError) -> [Int64: JSONValue]
    /// The items among `keys` that exist and match `query`'s filter, shaped by its fields, and the keys whose item
    /// was too large to read.
    func items(_ query: ItemQuery, keys: [String]) async throws(DirectusError) -> ItemRead
    /// The keys among `keys` that exist, whatever the filter.
    func existingKeys(_ query: ItemQuery, keys: [String]) async throws(DirectusError) -> Set<ItemKey>
    /// A snapshot page: up to `limit` matching items with a primary key after `after`, in key order (fewer only at
    /// the end), and the number of matching items when the server says (first page).
    func itemsPage(_ query: ItemQuery, after: JSONValue?, limit: Int) async throws(DirectusError) -> ItemsPage
}

/// Items read by key, in place (each item the bytes of its answer).
public struct ItemRead: Sendable {
    /// The items found.
    public var items: [AnswerItem]
    /// Keys whose item exists but was too large to read even alone: their lines carry no `data`.
    public var tooLarge: Set<String>

    /// Creates a result.
    public init(items: [AnswerItem], tooLarge: Set<String> = []) {
        self.items = items
        self.tooLarge = tooLarge
    }

    /// A result of items given as trees (fakes and tests).
    public init(items: [JSONValue], tooLarge: Set<String> = []) {
        self.init(items: items.map(AnswerItem.init), tooLarge: tooLarge)
    }
}

/// A page of a snapshot, in primary-key order.
public struct ItemsPage: Sendable {
    /// One item of the page.
    public enum Entry: Sendable {
        /// The item as the query reads it, in place.
        case item(AnswerItem)
        /// An item too large to read even alone: only its primary key is known.
        case tooLarge(key: JSONValue)
    }

    /// The entries, in primary-key order.
    public var entries: [Entry]
    /// The number of matching items, when the server said (first page).
    public var total: Int?

    /// Creates a page.
    public init(entries: [Entry], total: Int? = nil) {
        self.entries = entries
        self.total = total
    }

    /// The primary key (field `primaryKey`) of the last entry, where the next page starts.
    public func lastKey(_ primaryKey: String) -> JSONValue? {
        switch entries.last {
        case .item(let item)?: item[primaryKey]
        case .tooLarge(let key)?: key
        case nil: nil
        }
    }

    /// A page of items that were all read, given as trees (fakes and tests).
    public init(items: [JSONValue], total: Int? = nil) {
        self.init(entries: items.map { .item(AnswerItem($0)) }, total: total)
    }
}

/// Something a REST read left out because its answer was too large even alone (docs/ARCHITECTURE.md
/// "Answers too large"): the reader emits the line with what it knows, and says so at error level.
public struct OmittedForSize: Sendable, Equatable {
    /// What is left out: `data` (an item), `delta` (an activity row's revision), `snapshot` (a gone item's revision).
    public var part: String
    /// The collection, when known.
    public var collection: String?
    /// The primary keys (items), or the activity ids as text (rows, revisions).
    public var keys: [String]
    /// The limit the answer was over.
    public var limit: Int
}

/// What the REST source tells about answer sizes.
public enum AnswerSizeEvent: Sendable, Equatable {
    /// An answer over the normal limit: the read goes on with fewer keys per request.
    case split(operation: String, keys: Int)
    /// Left out: too large even alone.
    case omitted(OmittedForSize)
}
