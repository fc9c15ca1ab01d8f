/// Counts what a JSON answer holds while its bytes arrive, so that an answer too costly to keep or to parse is
/// refused before it is (docs/ARCHITECTURE.md "Answers too large"): a tree of JSON values takes about 20 times the
/// bytes of `{"data":[{},{},…]}`, and a hostile server may send 64 MiB of it where one item was asked for.
///
/// It is a bound, not a validator: it follows strings, escapes, containers and scalars well enough to count values
/// (`{`, `[`, a string that is not a member name, a number or literal), the nesting depth and the items of the
/// top-level member `data` when that is an array; the parse that follows validates. A body that does not start with
/// `{` or `[` (an HTML error page) is not JSON to meter: the meter stands aside and the parse refuses it.
public struct JSONAnswerMeter: Sendable {
    /// Why an answer was refused.
    public enum Refusal: Sendable, Equatable, CustomStringConvertible {
        /// More values than `maximumValues`.
        case tooManyValues(Int)
        /// Deeper than `maximumDepth`.
        case tooDeep(Int)
        /// More items in `data` than `maximumItems` (the `limit` the request gave).
        case tooManyItems(Int)

        /// The refusal in words, for the error a caller reports.
        public var description: String {
            switch self {
            case .tooManyValues(let limit): "the answer holds more than \(limit) JSON values"
            case .tooDeep(let limit): "the answer nests deeper than \(limit) levels"
            case .tooManyItems(let limit): "the answer's data holds more than the \(limit) items asked for"
            }
        }
    }

    /// The most values an answer may hold.
    public let maximumValues: Int
    /// The most nested containers.
    public let maximumDepth: Int
    /// The most items the top-level `data` array may hold; nil for no bound but the others.
    public let maximumItems: Int?

    /// Values counted so far.
    public private(set) var values = 0
    /// Items of the top-level `data` array counted so far.
    public private(set) var items = 0
    /// The refusal, once there is one; the meter then ignores further bytes.
    public private(set) var refusal: Refusal?

    private var started = false
    private var standsAside = false
    private var depth = 0
    /// Bit n: whether the container at depth n + 1 is an object (depth ≤ `maximumDepth` ≤ 512 → 8 words).
    private var isObject = InlineArray<8, UInt64>(repeating: 0)
    private var inString = false
    private var escaped = false
    private var inScalar = false
    /// In an object, whether the next string is a member name.
    private var expectsName = false
    private var stringIsName = false
    /// The first bytes of the member name being read at depth 1, to recognise `data`.
    private var name: UInt64 = 0
    private var nameLength = 0
    private var lastNameIsData = false
    /// Whether the container at depth 2 is the top-level `data` array.
    private var inDataArray = false

    /// A meter with these bounds (depth at most `JSONScanner.defaultMaxDepth`).
    public init(maximumValues: Int, maximumItems: Int? = nil, maximumDepth: Int = JSONScanner.defaultMaxDepth) {
        self.maximumValues = max(1, maximumValues)
        self.maximumItems = maximumItems.map { max(0, $0) }
        self.maximumDepth = min(max(1, maximumDepth), JSONScanner.defaultMaxDepth)
    }

    /// The bytes of `data` packed as the member-name accumulator holds them.
    private static let dataName: UInt64 = 0x6461_7461  // "data"

    /// Counts `bytes`, the next part of the answer; returns the refusal once the answer is over a bound.
    @discardableResult
    public mutating func consume(_ bytes: UnsafeRawBufferPointer) -> Refusal? {
        guard refusal == nil, !standsAside else { return refusal }
        for byte in bytes {
            if !started {
                if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { continue }
                started = true
                // Anything but an object or array at the top (an HTML error page) is not an answer to meter: the
                // parse refuses it, and what is kept of it is bounded by size alone.
                guard byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") else {
                    standsAside = true
                    return nil
                }
            }
            if inString {
                readString(byte)
                continue
            }
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D:
                inScalar = false
            case UInt8(ascii: "\""):
                inScalar = false
                inString = true
                stringIsName = expectsName
                if stringIsName {
                    expectsName = false
                    name = 0
                    nameLength = 0
                    if depth == 1 { lastNameIsData = false }
                } else if !startValue() {
                    return refusal
                }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                inScalar = false
                guard startValue() else { return refusal }
                let opensData = depth == 1 && lastNameIsData && byte == UInt8(ascii: "[") && topIsObject
                depth &+= 1
                guard depth <= maximumDepth else {
                    refusal = .tooDeep(maximumDepth)
                    return refusal
                }
                setTop(object: byte == UInt8(ascii: "{"))
                expectsName = byte == UInt8(ascii: "{")
                if opensData { inDataArray = true }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                inScalar = false
                if depth == 2 { inDataArray = false }
                if depth > 0 { depth &-= 1 }
                expectsName = false
            case UInt8(ascii: ","):
                inScalar = false
                expectsName = depth > 0 && topIsObject
            case UInt8(ascii: ":"):
                inScalar = false
                expectsName = false
            default:
                if !inScalar {
                    inScalar = true
                    guard startValue() else { return refusal }
                }
            }
        }
        return refusal
    }

    /// Counts the value starting here; false once that is over a bound.
    private mutating func startValue() -> Bool {
        values &+= 1
        if values > maximumValues {
            refusal = .tooManyValues(maximumValues)
            return false
        }
        if inDataArray && depth == 2 {
            items &+= 1
            if let maximumItems, items > maximumItems {
                refusal = .tooManyItems(maximumItems)
                return false
            }
        }
        return true
    }

    private mutating func readString(_ byte: UInt8) {
        if escaped {
            escaped = false
            noteNameByte(0xFF)  // an escaped name is never taken for `data`
            return
        }
        switch byte {
        case UInt8(ascii: "\\"):
            escaped = true
        case UInt8(ascii: "\""):
            inString = false
            if stringIsName && depth == 1 { lastNameIsData = nameLength == 4 && name == Self.dataName }
        default:
            noteNameByte(byte)
        }
    }

    private mutating func noteNameByte(_ byte: UInt8) {
        guard stringIsName, depth == 1 else { return }
        nameLength &+= 1
        if nameLength <= 4 { name = name << 8 | UInt64(byte) }
    }

    private var topIsObject: Bool {
        let level = depth &- 1
        return isObject[level &>> 6] & (1 &<< UInt64(level & 63)) != 0
    }

    private mutating func setTop(object: Bool) {
        let level = depth &- 1
        let bit: UInt64 = 1 &<< UInt64(level & 63)
        if object { isObject[level &>> 6] |= bit } else { isObject[level &>> 6] &= ~bit }
    }
}
