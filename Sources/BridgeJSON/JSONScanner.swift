/// A strict RFC 8259 scanner over bytes: it validates and measures values without building anything.
///
/// The scanner reads through a raw pointer without bounds checks, so every read is guarded by `index < count`
/// (the invariant each method keeps). It is the shared base of ``DirectusServerMessage`` decoding, the item
/// helpers on ``JSONRange`` and `JSONValue.parse`.
///
/// Strictness: no trailing commas, no leading zeros, only the escapes RFC 8259 lists, `\u` surrogates must pair,
/// no raw control characters in strings, strings must be well-formed UTF-8, nesting is limited (``defaultMaxDepth``).
/// The scanner lends the buffer's pointer, so it must not outlive the `withUnsafeBytes` scope that made it.
public struct JSONScanner {
    /// The nesting limit used unless a lower one is given (it is also the highest allowed): 512 levels.
    public static let defaultMaxDepth = 512

    /// Start of the buffer. Never dereferenced when `count == 0`.
    let base: UnsafePointer<UInt8>
    /// Bytes the scanner may read: offsets `0..<count`.
    let count: Int
    /// The next byte to read.
    var index: Int
    /// Deepest nesting of objects/arrays accepted.
    let maxDepth: Int

    /// A scanner over `buffer`, starting at offset `start`, reading no further than offset `end` (defaults: all).
    public init(_ buffer: UnsafeRawBufferPointer, start: Int = 0, end: Int? = nil, maxDepth: Int = defaultMaxDepth) {
        // An empty buffer may have no base address; any non-null pointer does, because count 0 means no reads.
        self.base =
            buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(bitPattern: 1).unsafelyUnwrapped
        let limit = min(max(end ?? buffer.count, 0), buffer.count)
        self.count = limit
        self.index = min(max(start, 0), limit)
        self.maxDepth = min(max(maxDepth, 1), Self.defaultMaxDepth)
    }

    /// The offset of the next byte to read.
    public var position: Int { index }

    // MARK: - Whole documents

    /// Validates that `buffer` holds exactly one JSON value (with optional surrounding whitespace) and returns it.
    public static func validate(
        _ buffer: UnsafeRawBufferPointer,
        maxDepth: Int = defaultMaxDepth
    ) throws(JSONSyntaxError) -> JSONRange {
        var scanner = JSONScanner(buffer, maxDepth: maxDepth)
        let value = try scanner.skipValue(depth: 0)
        try scanner.expectEnd()
        return value
    }

    /// Validates that `bytes` hold exactly one JSON value (with optional surrounding whitespace) and returns it.
    public static func validate(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONSyntaxError) -> JSONRange
    {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONSyntaxError) in try validate(buffer, maxDepth: maxDepth) }
        }
        return try result.get()
    }

    /// Whether `bytes` are exactly one valid JSON value.
    public static func isValid(_ bytes: [UInt8]) -> Bool {
        (try? validate(bytes)) != nil
    }

    /// Skips whitespace and throws unless the input is used up.
    public mutating func expectEnd() throws(JSONSyntaxError) {
        skipWhitespace()
        guard index == count else { throw JSONSyntaxError(.trailingContent, at: index) }
    }

    // MARK: - Primitives

    /// Skips the four JSON whitespace bytes (space, tab, LF, CR).
    @inline(__always)
    public mutating func skipWhitespace() {
        while index < count {
            let byte = base[index]
            // Fast exit for the common case: compact JSON has no whitespace, and every structural byte is > 0x20.
            if byte > 0x20 { return }
            guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
            index &+= 1
        }
    }

    /// The next byte, or `nil` at the end. Does not skip whitespace.
    @inline(__always)
    public func peek() -> UInt8? {
        index < count ? base[index] : nil
    }

    /// Consumes `byte` if it is next; throws otherwise.
    @inline(__always)
    mutating func expect(_ byte: UInt8) throws(JSONSyntaxError) {
        guard index < count else { throw JSONSyntaxError(.unexpectedEnd, at: index) }
        guard base[index] == byte else { throw JSONSyntaxError(.unexpectedByte(base[index]), at: index) }
        index &+= 1
    }

    /// Scans `true`, `false` or `null` starting at `index`; returns its kind.
    mutating func scanLiteral() throws(JSONSyntaxError) -> JSONKind {
        let first = base[index]
        let kind: JSONKind
        let length: Int
        switch first {
        case UInt8(ascii: "t"): (kind, length) = (.true, 4)
        case UInt8(ascii: "f"): (kind, length) = (.false, 5)
        default: (kind, length) = (.null, 4)
        }
        let expected: StaticString = kind == .true ? "true" : kind == .false ? "false" : "null"
        let letters = expected.utf8Start
        for offset in 1..<length {
            guard index &+ offset < count else { throw JSONSyntaxError(.unexpectedEnd, at: count) }
            guard base[index &+ offset] == letters[offset] else {
                throw JSONSyntaxError(.invalidLiteral, at: index &+ offset)
            }
        }
        index &+= length
        return kind
    }

    /// Scans a number starting at `index` (on `-` or a digit). Returns whether it is an integer (no fraction or
    /// exponent). What follows the number is the caller's business (`01` scans `0` and leaves `1`).
    @discardableResult
    mutating func scanNumber() throws(JSONSyntaxError) -> Bool {
        if base[index] == UInt8(ascii: "-") {
            index &+= 1
            guard index < count else { throw JSONSyntaxError(.unexpectedEnd, at: index) }
        }
        let lead = base[index]
        if lead == UInt8(ascii: "0") {
            index &+= 1
        } else if lead &- UInt8(ascii: "1") < 9 {
            index &+= 1
            skipDigits()
        } else {
            throw JSONSyntaxError(.invalidNumber, at: index)
        }
        var isInteger = true
        if index < count, base[index] == UInt8(ascii: ".") {
            isInteger = false
            index &+= 1
            try requireDigits()
        }
        if index < count, base[index] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            index &+= 1
            if index < count, base[index] == UInt8(ascii: "+") || base[index] == UInt8(ascii: "-") { index &+= 1 }
            try requireDigits()
        }
        return isInteger
    }

    /// Skips any run of ASCII digits.
    @inline(__always)
    mutating func skipDigits() {
        while index < count, base[index] &- UInt8(ascii: "0") < 10 { index &+= 1 }
    }

    /// Skips a run of at least one ASCII digit.
    @inline(__always)
    mutating func requireDigits() throws(JSONSyntaxError) {
        guard index < count else { throw JSONSyntaxError(.unexpectedEnd, at: index) }
        guard base[index] &- UInt8(ascii: "0") < 10 else { throw JSONSyntaxError(.invalidNumber, at: index) }
        skipDigits()
    }
}
