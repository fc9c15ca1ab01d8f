internal import BridgeSystem
internal import CHiredis

/// hiredis's RESP parser (sans-IO): bytes in, replies out, every reply range-checked. Owns one `redisReader`.
///
/// Limits, each a protocol violation (the connection is dropped): more than `maximumReplyBytes` fed without a
/// complete reply (a bulk string or array that never ends, or is simply too large for anything the bridge asks),
/// arrays of more than 4,096 elements (refused by the shim's constructors before allocating), nesting deeper than
/// hiredis's 7 levels, and anything hiredis cannot parse. Confined to one thread at a time (not Sendable).
final class RedisReplyReader {
    private let reader: UnsafeMutablePointer<redisReader>
    /// The most bytes one reply may take on the wire.
    let maximumReplyBytes: Int
    /// Bytes fed since the last complete reply.
    private var bytesSinceReply = 0

    /// A reader whose replies may be at most `maximumReplyBytes` long (1 MiB by default: the bridge reads entry
    /// ids, counts and `INFO` text).
    init(maximumReplyBytes: Int = 1 << 20) {
        // Only fails when malloc does; nothing sensible can continue then.
        guard let reader = chiredis_reader_create() else { fatalError("hiredis could not allocate a reader") }
        self.reader = reader
        self.maximumReplyBytes = maximumReplyBytes
    }

    deinit { redisReaderFree(reader) }

    /// Hands `bytes` read from the server to the parser.
    func feed(_ bytes: UnsafeRawBufferPointer) throws(RedisError) {
        guard !bytes.isEmpty else { return }
        bytesSinceReply += bytes.count
        guard bytesSinceReply <= maximumReplyBytes else {
            throw RedisError(
                kind: .protocolViolation,
                message: "the server sent a reply of more than \(maximumReplyBytes) bytes"
            )
        }
        guard redisReaderFeed(reader, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count) == REDIS_OK
        else { throw parseError() }
    }

    /// The next complete reply, or nil when more bytes are needed.
    func next() throws(RedisError) -> RedisReply? {
        var raw: UnsafeMutableRawPointer?
        guard redisReaderGetReply(reader, &raw) == REDIS_OK else { throw parseError() }
        guard let raw else { return nil }
        defer { freeReplyObject(raw) }
        bytesSinceReply = chiredis_reader_pending(reader)
        return try Self.convert(raw.assumingMemoryBound(to: redisReply.self))
    }

    /// Copies hiredis's reply tree into Swift values, checking every type and length.
    private static func convert(_ reply: UnsafeMutablePointer<redisReply>) throws(RedisError) -> RedisReply {
        let node = reply.pointee
        switch node.type {
        case REDIS_REPLY_STRING, REDIS_REPLY_STATUS, REDIS_REPLY_ERROR:
            guard let bytes = node.str else { throw malformed("a string reply without bytes") }
            let buffer = UnsafeRawBufferPointer(start: bytes, count: node.len)
            if node.type == REDIS_REPLY_STRING { return .bulk(Array(buffer)) }
            // Status and error lines are text for logs: peer text, cleaned of control characters and bounded.
            let text = PeerText.sanitized(String(decoding: buffer, as: UTF8.self))
            return node.type == REDIS_REPLY_STATUS ? .status(text) : .error(text)
        case REDIS_REPLY_INTEGER:
            return .integer(Int64(node.integer))
        case REDIS_REPLY_NIL:
            return .null
        case REDIS_REPLY_ARRAY:
            guard node.elements <= Int(CHIREDIS_MAX_ELEMENTS), node.elements == 0 || node.element != nil else {
                throw malformed("an array reply of \(node.elements) elements")
            }
            var elements: [RedisReply] = []
            elements.reserveCapacity(node.elements)
            for index in 0..<node.elements {
                guard let element = node.element[index] else { throw malformed("an array reply with a hole") }
                elements.append(try convert(element))
            }
            return .array(elements)
        default:
            throw malformed("a reply of unknown type \(node.type)")
        }
    }

    private static func malformed(_ what: String) -> RedisError {
        RedisError(kind: .protocolViolation, message: "the server sent \(what)")
    }

    private func parseError() -> RedisError {
        let text = withUnsafeBytes(of: reader.pointee.errstr) { raw in
            PeerText.sanitized(String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self))
        }
        let what =
            reader.pointee.err == REDIS_ERR_OOM
            ? "an array of more than \(CHIREDIS_MAX_ELEMENTS) elements (or memory ran out)" : "a malformed reply"
        return RedisError(kind: .protocolViolation, message: "the server sent \(what): \(text)")
    }
}
