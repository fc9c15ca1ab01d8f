/// The first member of an object, noted by the scanner while it validated the object
/// (``JSONScanner/skipObjectNotingFirstMember(depth:)``).
///
/// Directus sends an item's primary key as its first member: with this, the event path takes the key's text from the
/// frame's bytes without looking the member up again (the lookup and the key's text were 6–8 % of the socket reader in
/// perf record).
public struct JSONFirstMember: Sendable, Hashable {
    /// The offset of the object's `{`: the member is used only for that object.
    public let objectStart: Int
    /// The member's name, quotes included.
    public let name: JSONRange
    /// Whether the name has escapes (then its bytes are not its text, and it is compared by a lookup).
    public let nameHasEscapes: Bool
    /// The member's value.
    public let value: JSONRange
    /// Whether the value's key text is its bytes as they stand: a string without escapes (between its quotes) or an
    /// integer (see ``JSONRange/keyString(in:)``).
    public let valueIsPlainKey: Bool
}

extension JSONRange {
    /// The contract's `key` text of this object's member `name`: the same as
    /// `member(name, in: buffer)?.keyString(in: buffer)` for every object and name. When `first` was noted in this
    /// object and is the member `name` (compared byte for byte), the text is taken from its value without a lookup;
    /// otherwise the member is looked up.
    public func key(named name: String, first: JSONFirstMember?, in buffer: UnsafeRawBufferPointer) -> String? {
        // The scanner makes a member's ranges inside its object; the bounds checked here keep a member paired with
        // another buffer from reading outside it.
        guard let first, first.objectStart == start, !first.nameHasEscapes, kind == .object, fits(buffer.count),
            first.name.start > start, first.value.end < end, let base = buffer.baseAddress
        else { return member(name, in: buffer)?.keyString(in: buffer) }
        var name = name
        let isFirst = name.withUTF8 { nameBytes in
            let length = first.name.count &- 2
            guard length == nameBytes.count else { return false }
            guard length > 0, let nameBase = nameBytes.baseAddress else { return true }
            return memoryEqual(base.assumingMemoryBound(to: UInt8.self) + (first.name.start &+ 1), nameBase, length)
        }
        guard isFirst else { return member(name, in: buffer)?.keyString(in: buffer) }
        let value = first.value
        guard first.valueIsPlainKey else { return value.keyString(in: buffer) }
        let text = value.kind == .string ? (value.start &+ 1)..<(value.end &- 1) : value.start..<value.end
        return String(decoding: UnsafeRawBufferPointer(rebasing: buffer[text]), as: UTF8.self)
    }

    /// The contract's `key` text of this object's member `name` in `bytes` (see the `UnsafeRawBufferPointer` form).
    public func key(named name: String, first: JSONFirstMember?, in bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes { key(named: name, first: first, in: $0) }
    }
}
