/// The kind of one JSON value, as found by the scanner.
public enum JSONKind: UInt8, Sendable, Hashable {
    /// `{…}`
    case object
    /// `[…]`
    case array
    /// `"…"`
    case string
    /// `-1.5e3` and the like.
    case number
    /// `true`
    case `true`
    /// `false`
    case `false`
    /// `null`
    case null
}

/// Where one complete, validated JSON value sits in a byte buffer: `start..<end` (quotes and brackets included).
///
/// A range is only meaningful together with the buffer it was scanned from. Every helper that takes a range and a
/// buffer checks the bounds, so a range paired with the wrong buffer gives `nil` or garbage text, never a crash.
public struct JSONRange: Sendable, Hashable {
    /// Offset of the value's first byte.
    public var start: Int
    /// Offset just past the value's last byte.
    public var end: Int
    /// What the value is.
    public var kind: JSONKind

    /// Creates a range; `start <= end` is the caller's promise.
    public init(start: Int, end: Int, kind: JSONKind) {
        self.start = start
        self.end = end
        self.kind = kind
    }

    /// Number of bytes the value spans.
    public var count: Int { end - start }

    /// The offsets as a Swift range, for slicing the source buffer.
    public var offsets: Range<Int> { start..<end }

    /// Whether the range lies inside a buffer of `bufferCount` bytes.
    @inline(__always)
    func fits(_ bufferCount: Int) -> Bool { start >= 0 && start <= end && end <= bufferCount }
}
