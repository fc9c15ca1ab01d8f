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

    public func hash(into hasher: inout Hasher) {
        for byte in text.utf8 { hasher.combine(byte) }
    }
}
