public import BridgeJSON

/// The order of a snapshot's keyset pages (`sort=<primary key>`), as far as the bridge needs it: whether a key named
/// by the activity log (text) comes at or before a page's last key (as Directus answered it). A resumed snapshot
/// asks it of items deleted after the watermark: the pages of an earlier run held every item up to its resume key.
///
/// A numeric key compares as a number, as the database sorts an integer column. A text key compares byte for byte
/// (UTF-8), which is the database's order for UUIDs and for binary collations; a text column under a collation that
/// sorts otherwise (case-insensitive, accents) can be misjudged near the resume key, which costs a deleted item its
/// `data: null` line or gives it twice (docs/RELIABILITY.md, "Careless or hostile operators").
public enum SnapshotKeyOrder {
    /// Whether `key` sorts at or before `last`; false when the two are not comparable (a text key against a
    /// numeric one), so that such an item is treated as not yet read.
    public static func key(_ key: String, isAtOrBefore last: JSONValue) -> Bool {
        switch last {
        case .number:
            guard let bound = last.int64Value else {
                guard let value = Double(key), let limit = last.doubleValue else { return false }
                return value <= limit
            }
            if let value = Int64(key) { return value <= bound }
            guard let value = Double(key) else { return false }
            return value <= Double(bound)
        case .string(let bound):
            return !bound.utf8.lexicographicallyPrecedes(key.utf8)
        default:
            return false
        }
    }
}
