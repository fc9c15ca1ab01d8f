/// An item's primary key as Directus and its database tell keys apart: by their bytes. Swift's `String` equality is
/// Unicode canonical equivalence, which holds `"é"` (U+00E9) and `"e\u{301}"` (e and a combining accent) equal; to
/// Directus they are two items. Keyed by `String`, the items of a batch of changes were looked up as one: the change
/// of one item went out with the other's `data` (docs/RELIABILITY.md, "Careless or hostile operators").
public struct ItemKey: Hashable, Sendable {
    /// The key as text.
    public let text: String

    /// The key `text`.
    public init(_ text: String) { self.text = text }

    public static func == (left: ItemKey, right: ItemKey) -> Bool { left.text.utf8.elementsEqual(right.text.utf8) }

    /// The key's UTF-8 bytes in one call: a snapshot hashes the key of every item it reads (the keys its pages held),
    /// and a `combine` per byte cost it about 0.6 % of its CPU (BENCHMARKS.md, "Snapshot CPU against the pre-resume
    /// binary"). `withUTF8` makes a bridged string contiguous first, so equal bytes hash equally whatever the storage.
    public func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
