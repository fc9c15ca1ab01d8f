import BridgeJSON
import Foundation

/// Any bytes through the strict JSON scanner, the tree parser built on it, and the item helpers of `JSONRange`.
///
/// Invariants:
/// - `JSONScanner.validate` and `JSONValue.parse` agree on validity; the validated range lies inside the input
///   with only whitespace around it.
/// - Round trip: a valid document's compact serialisation parses to an equal value and serialises to the same
///   bytes again.
/// - `JSONRange` helpers (`elements`, `member`, `keyString`) agree with the tree, as the hot path relies on them;
///   an object's skip that notes its first member agrees with the validating skip, and its key with the lookup's;
///   `isCompact` holds exactly when the tree serialises to the value's own bytes (REST items go into event lines
///   from their bytes then), and always for a serialisation.
/// - Foundation's `JSONSerialization` agrees on validity, where the two are meant to agree: UTF-8 input without NUL
///   bytes (Foundation guesses UTF-16/32 from them), no number beyond `Double` (Foundation refuses those; the
///   scanner passes them through), nesting within 512 levels, and no trailing comma before `]` or `}` (Foundation
///   accepts one; RFC 8259 does not).
enum JSONScannerTarget {
    static let target = FuzzTarget(
        name: "json-scanner",
        summary: "JSON scanner + tree parser: agree with each other and Foundation, serialisation round trip",
        run: run
    )

    static func run(_ input: UnsafeRawBufferPointer) {
        let bytes = Array(input)
        let validation = Result { () throws(JSONSyntaxError) in try JSONScanner.validate(bytes) }
        let range = try? validation.get()
        let value = try? JSONValue.parse(bytes)
        require((range == nil) == (value == nil), "scanner valid: \(range != nil), parser valid: \(value != nil)")
        if case .failure(let error) = validation, isTrailingComma(error, in: bytes) {
        } else {
            compareWithFoundation(bytes, value: value)
        }
        checkNotingSkip(bytes)
        guard let range, let value else { return }

        require(range.start >= 0 && range.end <= bytes.count && range.start < range.end, "range \(range) outside")
        let isWhitespace = { (byte: UInt8) in byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }
        require(
            bytes[..<range.start].allSatisfy(isWhitespace) && bytes[range.end...].allSatisfy(isWhitespace),
            "the range \(range) leaves more than whitespace around it"
        )

        let compact = value.serialized()
        let reparsed = try? JSONValue.parse(compact)
        require(
            reparsed == value,
            "the serialisation \(String(decoding: compact, as: UTF8.self)) reads back differently"
        )
        require(reparsed?.serialized() == compact, "serialising twice gave different bytes")

        checkHelpers(range, value: value, in: bytes)
    }

    /// The `JSONRange` helpers the event path uses, against the tree.
    static func checkHelpers(_ range: JSONRange, value: JSONValue, in bytes: [UInt8]) {
        require(range.keyString(in: bytes) == value.keyString, "keyString differs from the tree's")
        let compact = value.serialized()
        let isCompact = bytes.withUnsafeBytes { range.isCompact(in: $0) }
        require(isCompact == bytes[range.offsets].elementsEqual(compact), "isCompact: \(isCompact), the tree disagrees")
        let written = try? JSONScanner.validate(compact)
        require(
            written.map { whole in compact.withUnsafeBytes { whole.isCompact(in: $0) } } == true,
            "a serialisation is not compact"
        )
        switch value {
        case .array(let elements):
            let ranges = range.elements(in: bytes)
            require(
                ranges?.count == elements.count,
                "elements: \(ranges?.count ?? -1) ranges, \(elements.count) values"
            )
            for (element, elementRange) in zip(elements, ranges ?? []) {
                require((try? JSONValue.parse(elementRange, in: bytes)) == element, "an element range differs")
            }
        case .object(let object):
            for member in object {
                let memberRange = range.member(member.key, in: bytes)
                require(memberRange != nil, "member \(member.key.debugDescription) not found by range")
                if let memberRange {
                    require((try? JSONValue.parse(memberRange, in: bytes)) != nil, "a member range is not JSON")
                }
            }
        default:
            break
        }
    }

    /// The skip that notes an object's first member agrees with the validating skip (the same range and end, or the
    /// same error at the same offset), and the key read from the member is the lookup's.
    static func checkNotingSkip(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            var plain = JSONScanner(buffer)
            plain.skipWhitespace()
            guard plain.peek() == UInt8(ascii: "{") else { return }
            var noting = plain
            let expected = Result { () throws(JSONSyntaxError) in try plain.skipValue(depth: 0) }
            let got = Result { () throws(JSONSyntaxError) in try noting.skipObjectNotingFirstMember(depth: 0) }
            require(got.map(\.object) == expected, "noting skip \(got), validating skip \(expected)")
            guard case .success(let (object, first)) = got else { return }
            require(noting.position == plain.position, "the noting skip ended elsewhere")
            guard let first else { return }
            require((try? JSONValue.parse(first.value, in: bytes)) != nil, "the noted value is not JSON")
            for name in [first.name.stringValue(in: buffer) ?? "", "id"] {
                let lookup = object.member(name, in: buffer)?.keyString(in: buffer)
                require(object.key(named: name, first: first, in: buffer) == lookup, "the noted key differs")
            }
        }
    }

    /// Validity against Foundation, where both are meant to agree (see the type's documentation).
    static func compareWithFoundation(_ bytes: [UInt8], value: JSONValue?) {
        guard !bytes.contains(0), String(validating: bytes, as: UTF8.self) != nil else { return }
        if let value, exceedsDouble(value) || depth(value) > 512 { return }
        let foundation = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
        require(
            (foundation != nil) == (value != nil),
            "Foundation valid: \(foundation != nil), scanner valid: \(value != nil)"
        )
    }

    /// Whether `error` is a `]` or `}` right after a comma (whitespace between allowed).
    static func isTrailingComma(_ error: JSONSyntaxError, in bytes: [UInt8]) -> Bool {
        guard error.reason == .unexpectedByte(UInt8(ascii: "]")) || error.reason == .unexpectedByte(UInt8(ascii: "}"))
        else { return false }
        let before = bytes[..<error.offset].last { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }
        return before == UInt8(ascii: ",")
    }

    static func exceedsDouble(_ value: JSONValue) -> Bool {
        switch value {
        case .number(let number): return !number.doubleValue.isFinite
        case .array(let elements): return elements.contains(where: exceedsDouble)
        case .object(let object): return object.contains { exceedsDouble($0.value) }
        default: return false
        }
    }

    static func depth(_ value: JSONValue) -> Int {
        switch value {
        case .array(let elements): return 1 + (elements.map(depth).max() ?? 0)
        case .object(let object): return 1 + (object.map { depth($0.value) }.max() ?? 0)
        default: return 0
        }
    }
}
