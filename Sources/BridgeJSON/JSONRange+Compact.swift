// Whether a value already stands in its compact form, so that a REST item can go into an event line byte for byte as
// Directus sent it, without a tree (docs/ARCHITECTURE.md "Answers read in place"). Directus writes what
// `JSON.stringify` writes, which always is compact in this sense.
extension JSONRange {
    /// Whether the value, as it stands in `buffer`, is byte for byte what `JSONValue.parse` and `serialize` make of
    /// it: no whitespace between tokens, every string escaped as `JSONOutput` escapes (only `"`, `\` and control
    /// characters; the short forms where they exist, else `\u00xx`), no object repeating a member name. False also
    /// when the range does not fit `buffer` or is not valid JSON there.
    public func isCompact(in buffer: UnsafeRawBufferPointer) -> Bool {
        guard fits(buffer.count), count > 0 else { return false }
        var scanner = JSONScanner(buffer, start: start, end: end)
        var check = CompactCheck()
        do throws(JSONSyntaxError) {
            return try check.run(&scanner)
        } catch {
            return false
        }
    }

    /// For a compact object (``isCompact(in:)``): appends it to `output` without its member named `name`, as its
    /// tree would serialise with that member removed. Any other value is appended as it stands.
    public func appendCompact(in buffer: UnsafeRawBufferPointer, omitting name: String, to output: inout [UInt8]) {
        guard fits(buffer.count), let base = buffer.baseAddress else { return }
        guard kind == .object else {
            output.append(contentsOf: UnsafeRawBufferPointer(start: base + start, count: count))
            return
        }
        var quoted: [UInt8] = []
        JSONOutput.appendQuoted(name, to: &quoted)  // compact: the name's only spelling
        var scanner = JSONScanner(buffer, start: start &+ 1, end: end)
        output.append(UInt8(ascii: "{"))
        var first = true
        do throws(JSONSyntaxError) {
            while scanner.peek() == UInt8(ascii: "\"") {
                let key = try scanner.skipValue(depth: 1)
                try scanner.expect(UInt8(ascii: ":"))
                let value = try scanner.skipValue(depth: 1)
                let member = UnsafeRawBufferPointer(start: base + key.start, count: value.end &- key.start)
                if !UnsafeRawBufferPointer(start: base + key.start, count: key.count).elementsEqual(quoted) {
                    if !first { output.append(UInt8(ascii: ",")) }
                    output.append(contentsOf: member)
                    first = false
                }
                guard scanner.peek() == UInt8(ascii: ",") else { break }
                scanner.index &+= 1
            }
        } catch {}  // a compact object scans without error; another is the caller's mistake, cut short
        output.append(UInt8(ascii: "}"))
    }
}

/// The walk behind `JSONRange.isCompact(in:)`: values in order with an explicit stack (no recursion), each object's
/// member names kept until it closes to find a repeated one.
private struct CompactCheck {
    /// Per open container: whether it is an object.
    private var isObject: [Bool] = []
    /// The member names of every open object, innermost last.
    private var names: [JSONRange] = []
    /// Per open object: where its names start in `names`.
    private var firstName: [Int] = []

    mutating func run(_ scanner: inout JSONScanner) throws(JSONSyntaxError) -> Bool {
        while true {
            // A value starts here; anything at or below a space is whitespace (or not JSON).
            guard let byte = scanner.peek(), byte > 0x20 else { return false }
            if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                guard isObject.count < JSONScanner.defaultMaxDepth else { return false }
                scanner.index &+= 1
                if scanner.peek() == (byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    scanner.index &+= 1
                } else {
                    isObject.append(byte == UInt8(ascii: "{"))
                    if byte == UInt8(ascii: "{") {
                        firstName.append(names.count)
                        guard try readName(&scanner) else { return false }
                    }
                    continue
                }
            } else if byte == UInt8(ascii: "\"") {
                guard try readString(&scanner) != nil else { return false }
            } else {
                _ = try scanner.skipValue(depth: isObject.count)
            }
            // After a value: a comma and the next member or element, or the end of containers.
            var next = false
            while let object = isObject.last, !next {
                guard let byte = scanner.peek() else { return false }
                if byte == UInt8(ascii: ",") {
                    scanner.index &+= 1
                    if object { guard try readName(&scanner) else { return false } }
                    next = true
                } else {
                    guard byte == (object ? UInt8(ascii: "}") : UInt8(ascii: "]")) else { return false }
                    scanner.index &+= 1
                    if object {
                        let from = firstName.removeLast()
                        guard !Self.repeats(names[from...], in: scanner) else { return false }
                        names.removeSubrange(from...)
                    }
                    isObject.removeLast()
                }
            }
            if !next { return scanner.index == scanner.count }
        }
    }

    /// Reads a member name and the `:` right after it; false when either is not compact.
    private mutating func readName(_ scanner: inout JSONScanner) throws(JSONSyntaxError) -> Bool {
        guard scanner.peek() == UInt8(ascii: "\""), let name = try readString(&scanner),
            scanner.peek() == UInt8(ascii: ":")
        else { return false }
        scanner.index &+= 1
        names.append(name)
        return true
    }

    /// Reads a string; nil when one of its escapes is not the one `JSONOutput` writes.
    private func readString(_ scanner: inout JSONScanner) throws(JSONSyntaxError) -> JSONRange? {
        let start = scanner.index
        let hasEscapes = try scanner.scanString()
        let string = JSONRange(start: start, end: scanner.index, kind: .string)
        return !hasEscapes || Self.escapesAreCompact(string, in: scanner) ? string : nil
    }

    /// Whether every escape of `string` is `\"`, `\\`, a short form, or `\u00xx` (lowercase) for a control
    /// character without one.
    private static func escapesAreCompact(_ string: JSONRange, in scanner: JSONScanner) -> Bool {
        var index = string.start &+ 1
        let end = string.end &- 1
        while index < end {
            guard scanner.base[index] == UInt8(ascii: "\\") else {
                index &+= 1
                continue
            }
            switch scanner.base[index &+ 1] {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"),
                UInt8(ascii: "r"), UInt8(ascii: "t"):
                index &+= 2
            case UInt8(ascii: "u"):
                // `\u00` then a lowercase hex pair below 0x20 that has no short form.
                guard index &+ 6 <= end, scanner.base[index &+ 2] == UInt8(ascii: "0"),
                    scanner.base[index &+ 3] == UInt8(ascii: "0")
                else { return false }
                let high = scanner.base[index &+ 4]
                let low = scanner.base[index &+ 5]
                guard high == UInt8(ascii: "0") || high == UInt8(ascii: "1") else { return false }
                let lowValue: UInt8
                switch low {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): lowValue = low &- UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): lowValue = low &- UInt8(ascii: "a") &+ 10
                default: return false
                }
                let value = (high &- UInt8(ascii: "0")) &* 16 &+ lowValue
                guard value != 0x08 && value != 0x09 && value != 0x0A && value != 0x0C && value != 0x0D else {
                    return false
                }
                index &+= 6
            default:
                return false  // `\/`
            }
        }
        return true
    }

    /// Whether two of `names` are the same bytes (compact names: the same bytes is the same name).
    private static func repeats(_ names: ArraySlice<JSONRange>, in scanner: JSONScanner) -> Bool {
        func bytes(_ name: JSONRange) -> UnsafeBufferPointer<UInt8> {
            UnsafeBufferPointer(start: scanner.base + name.start, count: name.count)
        }
        if names.count <= 16 {
            for index in names.indices.dropFirst() {
                for earlier in names.startIndex..<index where bytes(names[earlier]).elementsEqual(bytes(names[index])) {
                    return true
                }
            }
            return false
        }
        let sorted = names.sorted { bytes($0).lexicographicallyPrecedes(bytes($1)) }
        for index in sorted.indices.dropFirst() where bytes(sorted[index - 1]).elementsEqual(bytes(sorted[index])) {
            return true
        }
        return false
    }
}
