#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// An event line's bytes, without its newline: a range of a buffer that may hold other lines too.
///
/// The socket reader writes all lines of one read into one buffer, each followed by a newline, and gives each event
/// its range of it: no allocation per event, and the NDJSON sink writes the read's lines as they lie
/// (``withLines(of:_:)``). Every other producer gives each event a buffer of its own. A sink that needs an array of
/// its own, or keeps the bytes beyond the batch, takes ``bytes`` (a copy only when the line shares its buffer).
public struct EventBody: Sendable, Equatable, RandomAccessCollection {
    /// The buffer that holds the line (and, from the socket reader, the other lines of its read).
    public let buffer: [UInt8]
    /// Where the line lies in `buffer`.
    public let range: Range<Int>

    /// A line held alone in `bytes`.
    public init(_ bytes: [UInt8]) {
        buffer = bytes
        range = bytes.indices
    }

    /// The line at `range` of `buffer`.
    public init(_ buffer: [UInt8], range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= buffer.count, "line outside its buffer")
        self.buffer = buffer
        self.range = range
    }

    /// The line as an array of its own: `buffer` itself when the line is all of it, else a copy.
    public var bytes: [UInt8] { range == buffer.indices ? buffer : Array(buffer[range]) }

    /// The line as a slice of its buffer (no copy).
    public var slice: ArraySlice<UInt8> { buffer[range] }

    /// The first byte's position: positions count from the line's start, not the buffer's.
    public var startIndex: Int { 0 }
    /// Past the last byte.
    public var endIndex: Int { range.count }
    /// The line's length.
    public var count: Int { range.count }

    /// The byte at `position` of the line.
    public subscript(position: Int) -> UInt8 {
        precondition(position >= 0 && position < range.count, "index outside the line")
        return buffer[range.lowerBound + position]
    }

    /// Calls `body` with the line's bytes where they lie.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    /// Calls `body` with the line's bytes where they lie.
    public func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try buffer.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[range])) }
    }

    /// Calls `body` with the line's bytes where they lie (always available).
    public func withContiguousStorageIfAvailable<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R? {
        try withUnsafeBufferPointer(body)
    }

    /// Whether the two lines have the same bytes (wherever they lie).
    public static func == (lhs: EventBody, rhs: EventBody) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.withUnsafeBytes { left in
            rhs.withUnsafeBytes { right in
                left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0
            }
        }
    }

    /// Whether the line is `bytes`.
    public static func == (lhs: EventBody, rhs: [UInt8]) -> Bool { lhs == EventBody(rhs) }

    /// Whether the line is `bytes`.
    public static func == (lhs: [UInt8], rhs: EventBody) -> Bool { EventBody(lhs) == rhs }

    /// Calls `body` with the lines of `events` and their newlines as they lie, when they lie in one buffer one after
    /// the other, each followed by a newline (the lines of one socket read); returns nil without calling it
    /// otherwise (events from elsewhere, or a sink's filter took some out).
    public static func withLines<R>(
        of events: UnsafeBufferPointer<EncodedEvent>,
        _ body: (UnsafeRawBufferPointer) throws -> R
    ) rethrows -> R? {
        guard let first = events.first?.body else { return nil }
        return try first.buffer.withUnsafeBufferPointer { shared -> R? in
            var end = first.range.lowerBound
            for index in events.indices {
                let line = events[index].body
                guard line.range.lowerBound == end, line.range.upperBound < shared.count,
                    shared[line.range.upperBound] == 0x0A
                else { return nil }
                // Both buffers are alive here: the same address is the same buffer.
                guard line.buffer.withUnsafeBufferPointer({ $0.baseAddress == shared.baseAddress }) else { return nil }
                end = line.range.upperBound + 1
            }
            return try body(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: shared[first.range.lowerBound..<end])))
        }
    }
}
