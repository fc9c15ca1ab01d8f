// Building the tree iteratively, with an explicit stack, so deep input fails with `.nestingTooDeep` instead of
// exhausting a thread's stack.
extension JSONValue {
    /// Parses one JSON document (strict RFC 8259, whitespace around it allowed).
    public static func parse(_ bytes: [UInt8], maxDepth: Int = JSONScanner.defaultMaxDepth) throws(JSONSyntaxError)
        -> JSONValue
    {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONSyntaxError) in try parse(buffer, maxDepth: maxDepth) }
        }
        return try result.get()
    }

    /// Parses one JSON document from text.
    public static func parse(_ text: String, maxDepth: Int = JSONScanner.defaultMaxDepth) throws(JSONSyntaxError)
        -> JSONValue
    {
        var text = text
        let result = text.withUTF8 { utf8 in
            Result { () throws(JSONSyntaxError) in try parse(UnsafeRawBufferPointer(utf8), maxDepth: maxDepth) }
        }
        return try result.get()
    }

    /// Parses one JSON document from raw bytes.
    public static func parse(
        _ buffer: UnsafeRawBufferPointer,
        maxDepth: Int = JSONScanner.defaultMaxDepth
    ) throws(JSONSyntaxError) -> JSONValue {
        var scanner = JSONScanner(buffer, maxDepth: maxDepth)
        let value = try JSONTreeBuilder.parseValue(&scanner)
        try scanner.expectEnd()
        return value
    }

    /// Parses the value at `range` of `bytes` (e.g. one item of a decoded frame) into a tree.
    public static func parse(_ range: JSONRange, in bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        guard range.fits(bytes.count) else { throw JSONSyntaxError(.unexpectedEnd, at: bytes.count) }
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONSyntaxError) in
                var scanner = JSONScanner(buffer, start: range.start, end: range.end)
                let value = try JSONTreeBuilder.parseValue(&scanner)
                try scanner.expectEnd()
                return value
            }
        }
        return try result.get()
    }
}

/// The iterative tree builder behind `JSONValue.parse`.
enum JSONTreeBuilder {
    /// An object or array still being filled.
    private struct OpenContainer {
        var isObject: Bool
        var elements: [JSONValue] = []
        var members: [JSONObject.Member] = []
        var pendingKey = ""
    }

    /// Parses one value at the scanner's position (leading whitespace skipped).
    static func parseValue(_ scanner: inout JSONScanner) throws(JSONSyntaxError) -> JSONValue {
        var stack: [OpenContainer] = []
        scanner.skipWhitespace()
        while true {
            guard let byte = scanner.peek() else { throw JSONSyntaxError(.unexpectedEnd, at: scanner.index) }
            var value: JSONValue
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard stack.count < scanner.maxDepth else { throw JSONSyntaxError(.nestingTooDeep, at: scanner.index) }
                let isObject = byte == UInt8(ascii: "{")
                scanner.index &+= 1
                scanner.skipWhitespace()
                if scanner.peek() == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    scanner.index &+= 1
                    value = isObject ? .object(JSONObject()) : .array([])
                } else {
                    var open = OpenContainer(isObject: isObject)
                    if isObject { open.pendingKey = try readKey(&scanner) }
                    stack.append(open)
                    continue
                }
            case UInt8(ascii: "\""):
                value = .string(try scanner.readString())
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                let start = scanner.index
                try scanner.scanNumber()
                let digits = UnsafeBufferPointer(start: scanner.base + start, count: scanner.index &- start)
                value = .number(JSONNumber(validatedText: String(decoding: digits, as: UTF8.self)))
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                switch try scanner.scanLiteral() {
                case .true: value = .bool(true)
                case .false: value = .bool(false)
                default: value = .null
                }
            default:
                throw JSONSyntaxError(.unexpectedByte(byte), at: scanner.index)
            }
            // Attach the finished value to its container; close containers while their end follows.
            while true {
                guard !stack.isEmpty else { return value }
                let top = stack.count &- 1
                if stack[top].isObject {
                    stack[top].members.append(JSONObject.Member(key: stack[top].pendingKey, value: value))
                } else {
                    stack[top].elements.append(value)
                }
                scanner.skipWhitespace()
                guard let next = scanner.peek() else { throw JSONSyntaxError(.unexpectedEnd, at: scanner.index) }
                if next == UInt8(ascii: ",") {
                    scanner.index &+= 1
                    scanner.skipWhitespace()
                    if stack[top].isObject { stack[top].pendingKey = try readKey(&scanner) }
                    break
                }
                guard next == (stack[top].isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else {
                    throw JSONSyntaxError(.unexpectedByte(next), at: scanner.index)
                }
                scanner.index &+= 1
                let finished = stack.removeLast()
                value =
                    finished.isObject ? .object(JSONObject(parsedMembers: finished.members)) : .array(finished.elements)
            }
        }
    }

    /// Reads `"key"` and the `:` after it, leaving the scanner at the value.
    private static func readKey(_ scanner: inout JSONScanner) throws(JSONSyntaxError) -> String {
        guard let quote = scanner.peek() else { throw JSONSyntaxError(.unexpectedEnd, at: scanner.index) }
        guard quote == UInt8(ascii: "\"") else { throw JSONSyntaxError(.unexpectedByte(quote), at: scanner.index) }
        let key = try scanner.readString()
        scanner.skipWhitespace()
        try scanner.expect(UInt8(ascii: ":"))
        scanner.skipWhitespace()
        return key
    }
}
