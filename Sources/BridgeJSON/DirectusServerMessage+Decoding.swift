// Decoding one frame in a single pass: the envelope's keys are matched by their bytes (any order), known values
// map to enum cases without allocating, and `data` is validated element by element while its ranges are recorded.
extension DirectusServerMessage {
    /// Decodes and fully validates one text frame.
    public init(decoding bytes: [UInt8]) throws(DirectusMessageError) {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(DirectusMessageError) in try DirectusServerMessage(decoding: buffer) }
        }
        self = try result.get()
    }

    /// Decodes and fully validates one text frame; ranges in ``data`` are offsets into `buffer`.
    ///
    /// A frame it accepts is valid UTF-8, and so is one it refuses for anything but `.invalidJSON`: each of those
    /// was scanned whole, every string's UTF-8 checked and only ASCII admitted outside strings. The socket reader
    /// relies on this to leave a text frame's UTF-8 check (RFC 6455 §8.1) to this decoder.
    public init(decoding buffer: UnsafeRawBufferPointer) throws(DirectusMessageError) {
        var unused: JSONFirstMember?
        try self.init(decoding: buffer, firstItemMember: &unused)
    }

    /// Decodes and fully validates one text frame, as ``init(decoding:)`` does, and sets
    /// `firstItemMember` to the first member of `data`'s first item when that is an object (nil otherwise): the
    /// event path reads the item's key from it (``JSONRange/key(named:first:in:)``).
    ///
    /// Beside the message, not in it: the message is copied for every frame, and with the member in it those copies
    /// became calls of `memcpy`, 2 % of the socket reader in perf record.
    public init(
        decoding buffer: UnsafeRawBufferPointer,
        firstItemMember: inout JSONFirstMember?
    ) throws(DirectusMessageError) {
        var decoder = DirectusMessageDecoder(scanner: JSONScanner(buffer))
        do throws(JSONSyntaxError) {
            try decoder.decodeEnvelope()
        } catch {
            throw .invalidJSON(error)
        }
        if let problem = decoder.problem { throw problem }
        guard let type = decoder.type else { throw .missingType }
        self.init(
            type: type,
            event: decoder.event,
            status: decoder.status,
            uid: decoder.uid,
            error: decoder.error,
            data: decoder.data
        )
        firstItemMember = decoder.firstItemMember
    }
}

/// The envelope fields the decoder recognises.
private enum EnvelopeField {
    case type, event, status, uid, data, error, code, message, other

    init(_ name: UnsafeBufferPointer<UInt8>) {
        switch name.count {
        case 3: self = name.matches("uid") ? .uid : .other
        case 4:
            self = name.matches("type") ? .type : name.matches("data") ? .data : name.matches("code") ? .code : .other
        case 5: self = name.matches("event") ? .event : name.matches("error") ? .error : .other
        case 6: self = name.matches("status") ? .status : .other
        case 7: self = name.matches("message") ? .message : .other
        default: self = .other
        }
    }
}

/// Single-use decoding state for one frame.
private struct DirectusMessageDecoder {
    var scanner: JSONScanner
    var type: DirectusMessageType?
    var event: DirectusEvent?
    var status: DirectusStatus?
    var uid: String?
    var error: DirectusErrorPayload?
    var data: DirectusMessageData = .absent
    /// The first member of `data`'s first item, when that is an object.
    var firstItemMember: JSONFirstMember?
    /// The first wrong-typed field; reported only when the whole frame is valid JSON (syntax errors win).
    var problem: DirectusMessageError?

    mutating func decodeEnvelope() throws(JSONSyntaxError) {
        scanner.skipWhitespace()
        guard scanner.peek() == UInt8(ascii: "{") else {
            // Not an object: still tell garbage (invalid JSON) from a valid array, number, ….
            _ = try scanner.skipValue(depth: 0)
            try scanner.expectEnd()
            problem = .notAnObject
            return
        }
        try forEachMember { (decoder, field) throws(JSONSyntaxError) in
            switch field {
            case .type: decoder.type = try decoder.readStringValue(field: "type", map: DirectusMessageType.init(utf8:))
            case .event: decoder.event = try decoder.readStringValue(field: "event", map: DirectusEvent.init(utf8:))
            case .status: decoder.status = try decoder.readStringValue(field: "status", map: DirectusStatus.init(utf8:))
            case .uid: decoder.uid = try decoder.readUID()
            case .data: try decoder.readData()
            case .error: try decoder.readError()
            case .code, .message, .other: _ = try decoder.scanner.skipValue(depth: 1)
            }
        }
        try scanner.expectEnd()
    }

    /// Walks the object whose `{` is next, calling `body` positioned at each member's value; `body` must consume it.
    mutating func forEachMember(
        _ body: (inout DirectusMessageDecoder, EnvelopeField) throws(JSONSyntaxError) -> Void
    ) throws(JSONSyntaxError) {
        try scanner.expect(UInt8(ascii: "{"))
        scanner.skipWhitespace()
        if scanner.peek() == UInt8(ascii: "}") {
            try scanner.expect(UInt8(ascii: "}"))
            return
        }
        while true {
            guard let quote = scanner.peek() else { throw JSONSyntaxError(.unexpectedEnd, at: scanner.index) }
            guard quote == UInt8(ascii: "\"") else { throw JSONSyntaxError(.unexpectedByte(quote), at: scanner.index) }
            let field = try readFieldName()
            scanner.skipWhitespace()
            try scanner.expect(UInt8(ascii: ":"))
            scanner.skipWhitespace()
            try body(&self, field)
            scanner.skipWhitespace()
            guard let next = scanner.peek() else { throw JSONSyntaxError(.unexpectedEnd, at: scanner.index) }
            scanner.index &+= 1
            if next == UInt8(ascii: "}") { return }
            guard next == UInt8(ascii: ",") else {
                throw JSONSyntaxError(.unexpectedByte(next), at: scanner.index &- 1)
            }
            scanner.skipWhitespace()
        }
    }

    /// Reads a member name (quote next) and says which field it is.
    mutating func readFieldName() throws(JSONSyntaxError) -> EnvelopeField {
        try readString(map: EnvelopeField.init)
    }

    /// Reads the string whose quote is next and maps its content's UTF-8 with `map`: in place, or unescaped into a
    /// temporary copy when it has escapes. Inlined, as the two copies it replaced were (once per envelope field).
    @inline(__always)
    private mutating func readString<Value>(
        map: (UnsafeBufferPointer<UInt8>) -> Value
    ) throws(JSONSyntaxError) -> Value {
        let contentStart = scanner.index &+ 1
        let hasEscapes = try scanner.scanString()
        let contentEnd = scanner.index &- 1
        if hasEscapes {
            var text = JSONScanner.text(base: scanner.base, from: contentStart, to: contentEnd, hasEscapes: true)
            return text.withUTF8 { map($0) }
        }
        return map(UnsafeBufferPointer(start: scanner.base + contentStart, count: contentEnd &- contentStart))
    }

    /// Reads a value that must be a string (or `null`, giving `nil`) and maps its UTF-8 with `map`.
    mutating func readStringValue<Value>(
        field: String,
        depth: Int = 1,
        map: (UnsafeBufferPointer<UInt8>) -> Value
    ) throws(JSONSyntaxError) -> Value? {
        if scanner.peek() == UInt8(ascii: "\"") { return try readString(map: map) }
        let value = try scanner.skipValue(depth: depth)
        if value.kind != .null { noteProblem(.invalidField(field)) }
        return nil
    }

    /// `uid`: a string as sent, a number as written, `null` as absent.
    mutating func readUID() throws(JSONSyntaxError) -> String? {
        if scanner.peek() == UInt8(ascii: "\"") {
            return try scanner.readString()
        }
        let value = try scanner.skipValue(depth: 1)
        switch value.kind {
        case .number:
            return String(
                decoding: UnsafeBufferPointer(start: scanner.base + value.start, count: value.count),
                as: UTF8.self
            )
        case .null:
            return nil
        default:
            noteProblem(.invalidField("uid"))
            return nil
        }
    }

    /// `data`: element ranges of an array, else the range of the object or scalar.
    mutating func readData() throws(JSONSyntaxError) {
        firstItemMember = nil  // of an earlier `data` member, if the envelope repeats it
        guard scanner.peek() == UInt8(ascii: "[") else {
            let value = try skipItem(depth: 1, isFirst: true)
            data = value.kind == .object ? .object(value) : .scalar(value)
            return
        }
        scanner.index &+= 1
        scanner.skipWhitespace()
        var elements = JSONRangeList()
        if scanner.peek() == UInt8(ascii: "]") {
            scanner.index &+= 1
        } else {
            while true {
                elements.append(try skipItem(depth: 2, isFirst: elements.isEmpty))
                scanner.skipWhitespace()
                guard let next = scanner.peek() else { throw JSONSyntaxError(.unexpectedEnd, at: scanner.index) }
                scanner.index &+= 1
                if next == UInt8(ascii: "]") { break }
                guard next == UInt8(ascii: ",") else {
                    throw JSONSyntaxError(.unexpectedByte(next), at: scanner.index &- 1)
                }
            }
        }
        data = .array(elements)
    }

    /// Validates and skips one item of `data` (or the value that is `data`); notes the first member of the first.
    @inline(__always)
    private mutating func skipItem(depth: Int, isFirst: Bool) throws(JSONSyntaxError) -> JSONRange {
        guard isFirst, scanner.peek() == UInt8(ascii: "{") else { return try scanner.skipValue(depth: depth) }
        let (object, first) = try scanner.skipObjectNotingFirstMember(depth: depth)
        firstItemMember = first
        return object
    }

    /// `error`: an object with string `code` and `message` (other members skipped), or `null`.
    mutating func readError() throws(JSONSyntaxError) {
        guard scanner.peek() == UInt8(ascii: "{") else {
            let value = try scanner.skipValue(depth: 1)
            if value.kind != .null { noteProblem(.invalidField("error")) }
            error = nil
            return
        }
        var payload = DirectusErrorPayload(code: nil, message: nil)
        try forEachMember { (decoder, field) throws(JSONSyntaxError) in
            switch field {
            case .code:
                payload.code = try decoder.readStringValue(field: "error.code", depth: 2) {
                    String(decoding: $0, as: UTF8.self)
                }
            case .message:
                payload.message = try decoder.readStringValue(field: "error.message", depth: 2) {
                    String(decoding: $0, as: UTF8.self)
                }
            default:
                _ = try decoder.scanner.skipValue(depth: 2)
            }
        }
        error = payload
    }

    mutating func noteProblem(_ problem: DirectusMessageError) {
        if self.problem == nil { self.problem = problem }
    }
}
