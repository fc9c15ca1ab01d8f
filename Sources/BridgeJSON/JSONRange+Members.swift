// Reading several members of one object in a single pass: a REST page's rows are read in place this way, as the
// socket's frames are (DirectusServerMessage+Decoding), instead of becoming a tree first.
extension JSONRange {
    /// For an object: the values of its top-level members named `names`, in the order of `names` (nil for an absent
    /// one; the first occurrence wins), found in one pass over the object. Nil when this is not an object or does
    /// not fit `buffer`.
    public func members(_ names: [String], in buffer: UnsafeRawBufferPointer) -> [JSONRange?]? {
        guard kind == .object, fits(buffer.count) else { return nil }
        var found = [JSONRange?](repeating: nil, count: names.count)
        var scanner = JSONScanner(buffer, start: start &+ 1, end: end)
        do throws(JSONSyntaxError) {
            scanner.skipWhitespace()
            if scanner.peek() == UInt8(ascii: "}") { return found }
            while true {
                guard scanner.peek() == UInt8(ascii: "\"") else { return nil }
                let name = try scanner.skipValue(depth: 1)
                scanner.skipWhitespace()
                try scanner.expect(UInt8(ascii: ":"))
                let value = try scanner.skipValue(depth: 1)
                if let index = Self.index(of: name, among: names, in: buffer), found[index] == nil {
                    found[index] = value
                }
                scanner.skipWhitespace()
                guard scanner.peek() == UInt8(ascii: ",") else { return found }
                try scanner.expect(UInt8(ascii: ","))
                scanner.skipWhitespace()
            }
        } catch {
            return nil
        }
    }

    /// Which of `names` the member name `name` (a string range, quotes included) is: compared as bytes when it has
    /// no escape (member names almost never do), else as its decoded text.
    private static func index(of name: JSONRange, among names: [String], in buffer: UnsafeRawBufferPointer) -> Int? {
        let content = UnsafeRawBufferPointer(rebasing: buffer[(name.start &+ 1)..<(name.end &- 1)])
        if !content.contains(UInt8(ascii: "\\")) {
            return names.firstIndex { $0.utf8.elementsEqual(content) }
        }
        guard let text = name.stringValue(in: buffer) else { return nil }
        return names.firstIndex(of: text)
    }

    /// For a number written as an integer that fits 64 bits: its value; nil otherwise (fractions, exponents,
    /// other kinds, out of range).
    public func int64Value(in buffer: UnsafeRawBufferPointer) -> Int64? {
        guard kind == .number, let digits = keyString(in: buffer) else { return nil }
        return Int64(digits)
    }
}
