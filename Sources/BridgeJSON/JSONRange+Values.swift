// Item helpers: reading one field of an item, and turning a primary-key value into the event line's `key`.
// They re-scan only what they need (a key lookup stops at the matching member, usually the first) and check
// every bound, so a range from another buffer gives `nil`, never a crash.
extension JSONRange {
    /// For an object: the value of its first top-level member named `name`, or `nil` when there is none (or this
    /// is not an object). Names compare byte for byte after unescaping. Directus serialises JavaScript objects, which
    /// cannot repeat a key, so the first match is the only one.
    public func member(_ name: String, in buffer: UnsafeRawBufferPointer) -> JSONRange? {
        guard kind == .object, fits(buffer.count) else { return nil }
        var name = name
        return name.withUTF8 { nameBytes in
            var scanner = JSONScanner(buffer, start: start &+ 1, end: end)
            do throws(JSONSyntaxError) {
                scanner.skipWhitespace()
                if scanner.peek() == UInt8(ascii: "}") { return nil }
                while true {
                    guard scanner.peek() == UInt8(ascii: "\"") else { return nil }
                    let matches = try scanner.readStringEquals(nameBytes)
                    scanner.skipWhitespace()
                    try scanner.expect(UInt8(ascii: ":"))
                    let value = try scanner.skipValue(depth: 1)
                    if matches { return value }
                    scanner.skipWhitespace()
                    guard scanner.peek() == UInt8(ascii: ",") else { return nil }
                    try scanner.expect(UInt8(ascii: ","))
                    scanner.skipWhitespace()
                }
            } catch {
                return nil
            }
        }
    }

    /// For an object in `bytes`: the value of its first top-level member named `name`.
    public func member(_ name: String, in bytes: [UInt8]) -> JSONRange? {
        bytes.withUnsafeBytes { member(name, in: $0) }
    }

    /// For an array: the ranges of its elements, or `nil` when this is not an array.
    public func elements(in buffer: UnsafeRawBufferPointer) -> [JSONRange]? {
        guard kind == .array, fits(buffer.count) else { return nil }
        var scanner = JSONScanner(buffer, start: start &+ 1, end: end)
        var elements: [JSONRange] = []
        do throws(JSONSyntaxError) {
            scanner.skipWhitespace()
            if scanner.peek() == UInt8(ascii: "]") { return elements }
            while true {
                elements.append(try scanner.skipValue(depth: 1))
                scanner.skipWhitespace()
                guard scanner.peek() == UInt8(ascii: ",") else { return elements }
                try scanner.expect(UInt8(ascii: ","))
            }
        } catch {
            return nil
        }
    }

    /// For an array in `bytes`: the ranges of its elements.
    public func elements(in bytes: [UInt8]) -> [JSONRange]? {
        bytes.withUnsafeBytes { elements(in: $0) }
    }

    /// For a string: its unescaped text; `nil` for other kinds.
    public func stringValue(in buffer: UnsafeRawBufferPointer) -> String? {
        guard kind == .string, fits(buffer.count), count >= 2 else { return nil }
        var scanner = JSONScanner(buffer, start: start, end: end)
        guard scanner.peek() == UInt8(ascii: "\"") else { return nil }
        return try? scanner.readString()
    }

    /// For a string in `bytes`: its unescaped text.
    public func stringValue(in bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes { stringValue(in: $0) }
    }

    /// The contract's `key` text of a primary-key value: a string gives its unescaped text, an integer its
    /// decimal digits exactly as written (`42`, `-7`, `12345678901234567890`); anything else (fractions, exponents,
    /// booleans, null, objects, arrays) gives `nil`.
    public func keyString(in buffer: UnsafeRawBufferPointer) -> String? {
        switch kind {
        case .string:
            return stringValue(in: buffer)
        case .number:
            guard fits(buffer.count), count > 0, let base = buffer.baseAddress else { return nil }
            let digits = UnsafeRawBufferPointer(start: base + start, count: count)
            var scanner = JSONScanner(digits)
            guard scanner.peek() != nil, (try? scanner.scanNumber()) == true, scanner.position == digits.count
            else { return nil }
            return String(decoding: digits, as: UTF8.self)
        default:
            return nil
        }
    }

    /// The contract's `key` text of a primary-key value in `bytes` (see the `UnsafeRawBufferPointer` form).
    public func keyString(in bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes { keyString(in: $0) }
    }

    /// The value's bytes exactly as they appear in the source, as text (e.g. a number as written).
    public func rawText(in buffer: UnsafeRawBufferPointer) -> String? {
        guard fits(buffer.count), let base = buffer.baseAddress else { return count == 0 ? "" : nil }
        return String(decoding: UnsafeRawBufferPointer(start: base + start, count: count), as: UTF8.self)
    }

    /// The value's bytes exactly as they appear in `bytes`, as text.
    public func rawText(in bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes { rawText(in: $0) }
    }
}
