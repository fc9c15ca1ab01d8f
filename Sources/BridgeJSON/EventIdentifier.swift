/// An event's id as an event carries it: a live event's `evt_<UUIDv7>` as the UUID's 16 bytes, rendered into a line
/// where it is written and into a `String` only when a sink asks for one; every other id as its text.
///
/// Why not always the text: `evt_` + 36 characters is too long for Swift's inline small strings, so a live id as a
/// `String` was one heap allocation per event, made on the socket reader's thread and freed on the sink runner's,
/// the pattern in which glibc's per-thread cache never gets its chunks back (BENCHMARKS.md, "Issue 26, item 6").
///
/// Two identifiers are equal when their texts are: `.live(u)` equals `.text("evt_" + u.description)`.
public enum EventIdentifier: Sendable, Hashable, CustomStringConvertible {
    /// Any id as text (`act_…`, `snap_…`, one read back from storage).
    case text(String)
    /// A live-mode id: `evt_` followed by the UUID's canonical text.
    case live(UUIDv7)

    /// The prefix of live-mode ids.
    static let livePrefix: StaticString = "evt_"
    /// The UTF-8 length of a live-mode id: the prefix and 36 characters of UUID.
    static let liveCount = 4 + 36

    /// The id as text (one allocation for a live id).
    public var description: String {
        switch self {
        case .text(let text): text
        case .live(let uuid): uuid.text(prefix: "evt_")
        }
    }

    /// Lends the id's UTF-8 bytes to `body`: a live id rendered into a buffer on the stack, without a `String` (a
    /// broker sink's `id` header for every message).
    public func withUTF8(_ body: (UnsafeRawBufferPointer) -> Void) {
        switch self {
        case .text(let text):
            if text.utf8.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) == nil {
                var text = text
                text.withUTF8 { body(UnsafeRawBufferPointer($0)) }
            }
        case .live(let uuid):
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.liveCount) { buffer in
                let prefix = Self.livePrefix
                let prefixCount = prefix.utf8CodeUnitCount
                _ = buffer.initialize(from: UnsafeBufferPointer(start: prefix.utf8Start, count: prefixCount))
                uuid.write(into: UnsafeMutableBufferPointer(rebasing: buffer[prefixCount...]))
                body(UnsafeRawBufferPointer(buffer))
            }
        }
    }

    /// The id's UTF-8 length, without rendering it.
    public var utf8Count: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .live: Self.liveCount
        }
    }

    public static func == (lhs: EventIdentifier, rhs: EventIdentifier) -> Bool {
        switch (lhs, rhs) {
        case (.live(let left), .live(let right)): left == right
        case (.text(let left), .text(let right)): left == right
        default: lhs.description == rhs.description
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(description)
    }
}

extension ByteCursor {
    /// Writes `id` as a JSON string literal (at most ``quotedBound(_:)`` of its UTF-8 count).
    mutating func writeQuoted(_ id: EventIdentifier) {
        switch id {
        case .text(let text):
            writeQuoted(text)
        case .live(let uuid):
            // Visible ASCII only: nothing to escape.
            write(UInt8(ascii: "\""))
            write(EventIdentifier.livePrefix)
            uuid.write(to: &self)
            write(UInt8(ascii: "\""))
        }
    }
}
