internal import BridgeEvents
internal import BridgeDirectus

/// The sort values of a manually sorted collection, to find the items a manual sort moved (directus-protocol.md
/// §14.3). Values are kept as their JSON text: only equality matters, and text compares numbers of any size exactly.
package struct SortOrder: Sendable, Equatable {
    /// Primary key (by its bytes, as Directus tells keys apart: `ItemKey`) → sort value (JSON text, `null` for none).
    package private(set) var values: [ItemKey: String]
    /// The keys in the order they were read (primary-key order), so results come out in a stable order.
    package private(set) var keys: [String]

    /// An empty order.
    package init() {
        values = [:]
        keys = []
    }

    /// The number of items.
    package var count: Int { keys.count }

    /// Adds an item (read in primary-key order); a key read twice keeps its first value.
    package mutating func append(key: String, value: String) {
        guard values[ItemKey(key)] == nil else { return }
        values[ItemKey(key)] = value
        keys.append(key)
    }

    /// The sort value of `key`, nil when the item was not there.
    package func value(of key: String) -> String? { values[ItemKey(key)] }

    /// The keys present in both orders whose value differs in `newer`, in `newer`'s order. Items that appeared or
    /// disappeared are creates and deletes, which Directus reports itself.
    package func moved(to newer: SortOrder) -> [String] {
        newer.keys.filter { key in
            guard let old = values[ItemKey(key)] else { return false }
            return old != newer.values[ItemKey(key)]
        }
    }
}
